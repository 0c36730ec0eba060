/**
 * The programs of the NiLang papers (seeds 000 and 001), written in Tenet. They are used by the
 * tests, the README's language tour, and the benchmark suite.
 */

/** Listing 4: a reversible multiplier, a += b * c. */
export const multiplierSource = `
fn multiplier(a: f64, b: f64, c: f64) {
  a += b * c
}`

/**
 * Listing 5/6: the accumulative complex logarithm y += log(|x|) + i·arg(x), with the complex
 * numbers given by their parts. The ancilla n holds |x| and is uncomputed by ~routine.
 */
export const complexLogSource = `
fn complex_log(y_re: f64, y_im: f64, x_re: f64, x_im: f64) {
  routine {
    n <- 0.0
    n += sqrt(x_re * x_re + x_im * x_im)
  }
  y_re += log(n)
  y_im += atan2(x_im, x_re)
  ~routine
}`

/** Listing 11: the Fibonacci number computed recursively and reversibly. */
export const fibonacciSource = `
fn rrfib(out: i32, n: i32) {
  if (n >= 1, ~) {
    counter: i32 <- 0
    counter += n
    while (counter > 1, counter != n) {
      rrfib(out, counter - 1)
      counter -= 2
    }
    counter -= n % 2
    counter -> 0
  }
  out += 1
}`

/**
 * Listing 22: the Frobenius dot product r += sum(A .* B) of two sparse matrices in compressed
 * sparse column form (0-based). A branch keeper records which list the merge advanced, so the
 * pointer walk can be uncomputed and the keeper cleared column by column.
 */
export const sparseDotSource = `
fn sparse_dot(r: f64, m: i32, n: i32, acolptr: i32[], arowval: i32[], anzval: f64[], bcolptr: i32[], browval: i32[], bnzval: f64[]) {
  keeper: bool[] <- zeros(2 * m)
  for j in 0..n {
    ia: i32 <- acolptr[j]
    ib: i32 <- bcolptr[j]
    @unchecked {
      for i in 0..acolptr[j + 1] - acolptr[j] + bcolptr[j + 1] - bcolptr[j] {
        if (ia < acolptr[j + 1] && ib < bcolptr[j + 1] && arowval[ia] == browval[ib], ~) {
          r += anzval[ia] * bnzval[ib]
        }
        keeper[i] ^= ia == acolptr[j + 1] || ib < bcolptr[j + 1] && browval[ib] < arowval[ia]
        if (keeper[i], ~) {
          ib += 1
        } else {
          ia += 1
        }
      }
      ~{
        for i in 0..acolptr[j + 1] - acolptr[j] + bcolptr[j + 1] - bcolptr[j] {
          keeper[i] ^= ia == acolptr[j + 1] || ib < bcolptr[j + 1] && browval[ib] < arowval[ia]
          if (keeper[i], ~) {
            ib += 1
          } else {
            ia += 1
          }
        }
      }
    }
    ia -> acolptr[j]
    ib -> bcolptr[j]
  }
  keeper -> zeros(2 * m)
}`

/**
 * The same Frobenius dot product written with reversible thinking instead of a branch keeper:
 * the post-condition of the merge's `if` recognises which list advanced (the element moved last
 * is the larger one; ties move A first), so nothing is stored and nothing must be uncomputed
 * per column. With checks off the post-conditions are not evaluated at all.
 */
export const sparseDotMergeSource = `
fn sparse_dot_merge(r: f64, m: i32, n: i32, acolptr: i32[], arowval: i32[], anzval: f64[], bcolptr: i32[], browval: i32[], bnzval: f64[]) {
  for j in 0..n {
    routine {
      sa: i32 <- acolptr[j]
      sb: i32 <- bcolptr[j]
      ea: i32 <- acolptr[j + 1]
      eb: i32 <- bcolptr[j + 1]
    }
    ia: i32 <- sa
    ib: i32 <- sb
    while (ia < ea || ib < eb, ia > sa || ib > sb) {
      if (ia == ea || ib < eb && browval[ib] < arowval[ia], ib > sb && (ia == sa || browval[ib - 1] >= arowval[ia - 1])) {
        ib += 1
      } else {
        if (ib < eb && arowval[ia] == browval[ib], ~) {
          r += anzval[ia] * bnzval[ib]
        }
        ia += 1
      }
    }
    ia -> ea
    ib -> eb
    ~routine
  }
}`

/**
 * Listing 14: the unitary matrix multiply of a unitary-RNN layer: each column of the m×n
 * column-major matrix x is rotated by the m(m−1)/2 Givens rotations with angles theta.
 */
export const unitarySource = `
fn i_umm(x: f64[], theta: f64[], m: i32, n: i32) {
  for l in 0..n {
    k: i32 <- 0
    for j in 0..m {
      for i in m - 2..=j by -1 {
        ROT(x[i + m * l], x[i + 1 + m * l], theta[k])
        INC(k)
      }
    }
    k -> len(theta)
  }
}`

/**
 * Appendix A, Listing 12: Bennett's time–space trade-off, on the chain s_{i+1} = 2·s_i kept in
 * the array \`state\` (a zero entry is a state that is not allocated). \`${'${0}'}\` and
 * \`${'${1}'}\` are host counters kept through \`@safe\`: the step count and the live states.
 */
export const bennettSource = (stepHook: string, liveHook: string) => `
fn bennett(state: f64[], k: i32, base: i32, len: i32) {
  if (len == 1, ~) {
    state[base + 1] += 2.0 * state[base]
    @safe ${stepHook}()
    @safe ${liveHook}(state)
  } else {
    n: i32 <- 0
    n += div(len, k)
    for j in 1..=k {
      bennett(state, k, base + n * (j - 1), n)
    }
    for j in k - 1..=1 by -1 {
      ~bennett(state, k, base + n * (j - 1), n)
    }
    n -= div(len, k)
    n -> 0
  }
}`
