/**
 * The kernels of the benchmark's generality probe (`apps/bench`'s `kernels` workload: heat
 * stencil, RK4, CSR transpose product, softmax cross-entropy, Horner, tanh RNN), one listing a
 * function, which the bench and the tests of `@tenet/ad` and the backends compile. Each
 * `*_loss(loss, …)` adds a scalar to `loss` and leaves every other argument as it was passed (the
 * intermediates live in ancillas that a routine uncomputes). Each listing starts with `fn` and
 * ends with `}`, no newline either side, so that a test can put several in one module text.
 */

/**
 * `heat_loss(loss, u0, w, r, n, T)`: Σ w_i u_T[i]² after T explicit steps of the 1-D heat
 * equation (fixed zero ends) from u0, the whole history u[t * n + i] in an ancilla.
 */
export const heatLossSource = `fn heat_loss(loss: f64, u0: f64[], w: f64[], r: f64, n: i32, T: i32) {
  routine {
    u: f64[] <- zeros((T + 1) * n)
    for i in 0..n { u[i] += u0[i] }
    for t in 0..T {
      for i in 1..n - 1 {
        u[(t + 1) * n + i] += u[t * n + i] + r * (u[t * n + i - 1] - 2.0 * u[t * n + i] + u[t * n + i + 1])
      }
    }
  }
  for i in 0..n { loss += w[i] * u[T * n + i] * u[T * n + i] }
  ~routine
}`

/** `lv(d0, d1, x, y, p)`: the Lotka–Volterra right-hand side, (d0, d1) += f(x, y; p). */
export const lvSource = `fn lv(d0: f64, d1: f64, x: f64, y: f64, p: f64[]) {
  d0 += p[0] * x - p[1] * x * y
  d1 += p[3] * x * y - p[2] * y
}`

/**
 * `rk4_loss(loss, x0, p, h, steps)`: x·y of the state after `steps` classical RK4 steps of
 * {@link lvSource}'s `lv` (which the module must also hold), the trajectory in an ancilla, the
 * stages computed into locals and uncomputed each step.
 */
export const rk4LossSource = `fn rk4_loss(loss: f64, x0: f64[], p: f64[], h: f64, steps: i32) {
  routine {
    xs: f64[] <- zeros(2 * steps + 2)
    xs[0] += x0[0]
    xs[1] += x0[1]
    for t in 0..steps {
      routine {
        a0, a1, b0, b1, c0, c1, e0, e1 <- 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0
        u1, v1, u2, v2, u3, v3 <- 0.0, 0.0, 0.0, 0.0, 0.0, 0.0
        lv(a0, a1, xs[2 * t], xs[2 * t + 1], p)
        u1 += xs[2 * t] + h / 2.0 * a0
        v1 += xs[2 * t + 1] + h / 2.0 * a1
        lv(b0, b1, u1, v1, p)
        u2 += xs[2 * t] + h / 2.0 * b0
        v2 += xs[2 * t + 1] + h / 2.0 * b1
        lv(c0, c1, u2, v2, p)
        u3 += xs[2 * t] + h * c0
        v3 += xs[2 * t + 1] + h * c1
        lv(e0, e1, u3, v3, p)
      }
      xs[2 * t + 2] += xs[2 * t] + h / 6.0 * (a0 + 2.0 * b0 + 2.0 * c0 + e0)
      xs[2 * t + 3] += xs[2 * t + 1] + h / 6.0 * (a1 + 2.0 * b1 + 2.0 * c1 + e1)
      ~routine
    }
  }
  loss += xs[2 * steps] * xs[2 * steps + 1]
  ~routine
}`

/**
 * `csr_tmul(y, rowptr, col, val, x)`: y += Aᵀx for a CSR matrix A of len(x) rows, a scatter over
 * the columns; and `csr_loss(loss, rowptr, col, val, x, n)`: ‖Aᵀx‖² for A with n columns.
 */
export const csrLossSource = `fn csr_tmul(y: f64[], rowptr: i32[], col: i32[], val: f64[], x: f64[]) {
  for i in 0..len(x) {
    for q in rowptr[i]..rowptr[i + 1] { y[col[q]] += val[q] * x[i] }
  }
}
fn csr_loss(loss: f64, rowptr: i32[], col: i32[], val: f64[], x: f64[], n: i32) {
  routine {
    y: f64[] <- zeros(n)
    csr_tmul(y, rowptr, col, val, x)
  }
  for j in 0..n { loss += y[j] * y[j] }
  ~routine
}`

/**
 * `softmax_ce_loss(loss, z, label, C)`: the softmax cross-entropy of a batch of logits
 * z[b * C + i] with labels label[b], by a max-shifted log-sum-exp (the running maxima in an
 * ancilla).
 */
export const softmaxCeLossSource = `fn softmax_ce_loss(loss: f64, z: f64[], label: i32[], C: i32) {
  for b in 0..len(label) {
    routine {
      ms: f64[] <- zeros(C)
      ms[0] += z[b * C]
      for i in 1..C { ms[i] += max(ms[i - 1], z[b * C + i]) }
      s <- 0.0
      for i in 0..C { s += exp(z[b * C + i] - ms[C - 1]) }
      lse <- 0.0
      lse += log(s) + ms[C - 1]
    }
    loss += lse - z[b * C + label[b]]
    ~routine
  }
}`

/**
 * `horner_loss(loss, c, xs, ys)`: the least squares Σ (p(x_j) − y_j)² of the polynomial with
 * coefficients c at the points xs, each p(x_j) by Horner's rule into a history array `acc` that
 * counts down.
 */
export const hornerLossSource = `fn horner_loss(loss: f64, c: f64[], xs: f64[], ys: f64[]) {
  for j in 0..len(xs) {
    routine {
      acc: f64[] <- zeros(len(c))
      acc[len(c) - 1] += c[len(c) - 1]
      for k in len(c) - 2..=0 by -1 { acc[k] += acc[k + 1] * xs[j] + c[k] }
      e <- 0.0
      e += acc[0] - ys[j]
    }
    loss += e * e
    ~routine
  }
}`

/**
 * `rnn_loss(loss, W, U, b, xs, H, D, T)`: Σ h_T² of a tanh RNN cell run over a sequence,
 * h_{t+1} = tanh(W h_t + U x_t + b), the hidden states and pre-activations in ancillas.
 */
export const rnnLossSource = `fn rnn_loss(loss: f64, W: f64[], U: f64[], b: f64[], xs: f64[], H: i32, D: i32, T: i32) {
  routine {
    hs: f64[] <- zeros((T + 1) * H)
    pre: f64[] <- zeros(T * H)
    for t in 0..T {
      for i in 0..H {
        pre[t * H + i] += b[i]
        for j in 0..H { pre[t * H + i] += W[i * H + j] * hs[t * H + j] }
        for j in 0..D { pre[t * H + i] += U[i * D + j] * xs[t * D + j] }
        hs[(t + 1) * H + i] += tanh(pre[t * H + i])
      }
    }
  }
  for i in 0..H { loss += hs[T * H + i] * hs[T * H + i] }
  ~routine
}`
