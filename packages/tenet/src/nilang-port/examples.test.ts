/**
 * NiLang port suite: the examples (besselj, sparse, unitary, QR, Box–Muller, logsumexp, NICE,
 * FFT) and the stdlib tests (statistics, nnlib's softmax cross-entropy, blas) of NiLang.jl,
 * written again in Tenet. Every expected value comes from an independent plain-TS computation
 * (a different formula where one exists: Bessel's integral, a naive DFT, dense algebra), and
 * every gradient is checked against central differences of the forward run.
 */
import { expect } from 'vitest'
import { gradient, jacobian, logsumexp as logsumexpPrimitive, rev } from '../index.js'
import { template } from '../test-util.js'
import { ALL, cx, registry, expectAllClose, expectComplexClose, expectGradientMatchesFd, port, type C } from './util.js'

/** A small seeded generator (LCG), for test data. */
function random(seed: number): () => number {
  let s = seed >>> 0
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0
    return s / 2 ** 32
  }
}
const randomArray = (n: number, seed: number, scale = 1): Float64Array => {
  const r = random(seed)
  return Float64Array.from({ length: n }, () => (2 * r() - 1) * scale)
}

// ---------- besselj.jl ----------

/** J_n(x) by Bessel's integral (1/π)∫₀^π cos(nτ − x sin τ) dτ, composite Simpson: another formula than the series. */
function besselIntegral(n: number, x: number): number {
  const N = 2000,
    h = Math.PI / N
  let s = 0
  for (let k = 0; k <= N; k++) {
    const t = k * h,
      w = k === 0 || k === N ? 1 : k % 2 === 1 ? 4 : 2
    s += w * Math.cos(n * t - x * Math.sin(t))
  }
  return (s * h) / 3 / Math.PI
}

port(
  'besselj: the Bessel function of the first kind by its power series',
  ALL,
  `
  fn besselj(out: f64, nu: i32, z: f64) {
    routine {
      hz <- 0.0
      hz += z * 0.5
      p: f64[] <- zeros(nu + 1)
      p[0] += 1.0
      for k in 1..=nu { p[k] += p[k - 1] * hz / f64(k) }
      t: f64[] <- zeros(40)
      t[0] += p[nu]
      for k in 1..40 { t[k] -= t[k - 1] * hz * hz / f64(k * (k + nu)) }
    }
    for k in 0..40 { out += t[k] }
    ~routine
  }`,
  (m) => {
    for (const [nu, z] of [
      [0, 1.0],
      [2, 1.0],
      [1, 3.7],
      [3, 0.4],
    ] as const) {
      expect(m.besselj!(0, nu, z)[0]).toBeCloseTo(besselIntegral(nu, z), 11)
      // J'_ν = (J_{ν−1} − J_{ν+1}) / 2 (J_{−1} = −J_1)
      const d = ((nu === 0 ? -besselIntegral(1, z) : besselIntegral(nu - 1, z)) - besselIntegral(nu + 1, z)) / 2
      expect(gradient(m.besselj!, [0, nu, z], { loss: 0 })[2]).toBeCloseTo(d, 10)
    }
    expect(m.besselj!.inverse(m.besselj!(0, 2, 1)[0], 2, 1)[0]).toBeCloseTo(0, 15)
  },
)

// ---------- sparse.jl ----------

port(
  'sparse: Σ A∘B of a CSC matrix and a dense one, and its gradients',
  ALL,
  `
  fn sdot(r: f64, colptr: i32[], rowval: i32[], nzval: f64[], B: f64[], m: i32) {
    for col in 0..len(colptr) - 1 {
      for k in colptr[col]..colptr[col + 1] {
        r += nzval[k] * B[rowval[k] + col * m]
      }
    }
  }`,
  (mod) => {
    // a 6×5 matrix with about half its entries stored
    const m = 6,
      n = 5,
      r = random(7)
    const colptr = [0],
      rowval: number[] = [],
      nz: number[] = []
    for (let c = 0; c < n; c++) {
      for (let i = 0; i < m; i++)
        if (r() < 0.5) {
          rowval.push(i)
          nz.push(2 * r() - 1)
        }
      colptr.push(rowval.length)
    }
    const dense = new Float64Array(m * n)
    for (let c = 0; c < n; c++) for (let k = colptr[c]!; k < colptr[c + 1]!; k++) dense[rowval[k]! + c * m] = nz[k]!
    const B = randomArray(m * n, 8)
    const args = [0, Int32Array.from(colptr), Int32Array.from(rowval), Float64Array.from(nz), B, m] as const
    expect(mod.sdot!(...args)[0]).toBeCloseTo(
      dense.reduce((s, a, i) => s + a * B[i]!, 0),
      14,
    )
    const g = gradient(mod.sdot!, [...args], { loss: 0 })
    // ∂r/∂nzval[k] is the matching B entry; ∂r/∂B is the dense A
    expectAllClose(
      g[3] as Float64Array,
      nz.map((_, k) => B[rowval[k]! + m * colptr.findLastIndex((p) => p <= k)]!),
      0,
    )
    expectAllClose(g[4] as Float64Array, dense, 0)
  },
)

// ---------- unitary.jl ----------

/** The rotations of `umm!` applied by plain TS. */
function naiveUmm(x: Float64Array, theta: Float64Array): void {
  const n = x.length
  let k = 0
  for (let j = 0; j < n; j++) {
    for (let i = n - 2; i >= j; i--) {
      const c = Math.cos(theta[k]!),
        s = Math.sin(theta[k]!)
      const a = x[i]!,
        b = x[i + 1]!
      x[i] = c * a - s * b
      x[i + 1] = s * a + c * b
      k++
    }
  }
}

port(
  'unitary: N(N−1)/2 Givens rotations, their inverse and gradients',
  ALL,
  `
  fn umm(x: f64[], theta: f64[]) {
    k <- 0
    for j in 0..len(x) {
      for i in len(x) - 2..=j by -1 {
        k += 1
        ROT(x[i], x[i + 1], theta[k - 1])
      }
    }
    k -> len(theta)
  }
  fn test(out: f64, x: f64[], theta: f64[]) {
    umm(x, theta)
    for i in 0..len(x) { out += x[i] }
  }`,
  (m) => {
    const x0 = randomArray(6, 3),
      theta = randomArray(15, 4, Math.PI)
    const x = x0.slice(),
      ref = x0.slice()
    m.umm!(x, theta)
    naiveUmm(ref, theta)
    expectAllClose(x, ref, 1e-14)
    expect(Math.hypot(...x)).toBeCloseTo(Math.hypot(...x0), 14) // unitary: the norm is kept
    m.umm!.inverse(x, theta)
    expectAllClose(x, x0, 1e-14)
    expectGradientMatchesFd(m.test!, [0, x0, theta], 0)
  },
)

// ---------- qr.jl ----------

port(
  'QR decomposition by Gram–Schmidt, uncomputing its work arrays with ~{ }',
  ALL,
  `
  fn dot(out: f64, Q: f64[], c: i32, v: f64[], n: i32) {
    for row in 0..n { out += Q[row * n + c] * v[row] }
  }
  fn norm2(out: f64, v: f64[]) {
    for i in 0..len(v) { out += v[i] * v[i] }
  }
  fn qr(Q: f64[], R: f64[], A: f64[], n: i32) {
    anc_norm <- 0.0
    anc_dot: f64[] <- zeros(n)
    ri: f64[] <- zeros(n)
    for col in 0..n {
      for row in 0..n { ri[row] += A[row * n + col] }
      for pre in 0..col {
        dot(anc_dot[pre], Q, pre, ri, n)
        R[pre * n + col] += anc_dot[pre]
        for row in 0..n { ri[row] -= anc_dot[pre] * Q[row * n + pre] }
      }
      norm2(anc_norm, ri)
      R[col * n + col] += sqrt(anc_norm)
      for row in 0..n { Q[row * n + col] += ri[row] / R[col * n + col] }
      ~{
        for row in 0..n { ri[row] += A[row * n + col] }
        for pre in 0..col {
          dot(anc_dot[pre], Q, pre, ri, n)
          for row in 0..n { ri[row] -= anc_dot[pre] * Q[row * n + pre] }
        }
        norm2(anc_norm, ri)
      }
    }
    ri -> zeros(n)
    anc_dot -> zeros(n)
    anc_norm -> 0.0
  }
  fn test1(out: f64, Q: f64[], R: f64[], A: f64[], n: i32) {
    qr(Q, R, A, n)
    for i in 0..len(Q) { out += Q[i] }
  }`,
  (m) => {
    const n = 4,
      A = randomArray(n * n, 11)
    const Q = new Float64Array(n * n),
      R = new Float64Array(n * n)
    m.qr!(Q, R, A, n) // its work arrays come back with rounding residues, freed within the tolerance
    for (let i = 0; i < n; i++) {
      for (let j = 0; j < n; j++) {
        let qr = 0,
          qq = 0
        for (let k = 0; k < n; k++) {
          qr += Q[i * n + k]! * R[k * n + j]!
          qq += Q[k * n + i]! * Q[k * n + j]!
        }
        expect(qr).toBeCloseTo(A[i * n + j]!, 13) // Q·R = A
        expect(qq).toBeCloseTo(i === j ? 1 : 0, 13) // QᵀQ = I
        if (i > j) expect(R[i * n + j]).toBe(0) // R upper triangular
      }
    }
    m.qr!.inverse(Q, R, A, n)
    Q.forEach((v) => expect(Math.abs(v)).toBeLessThan(1e-14))
    expectGradientMatchesFd(m.test1!, [0, new Float64Array(n * n), new Float64Array(n * n), A, n], 0, [4], 1e-6)
  },
)

// ---------- boxmuller.jl ----------

const TWO_PI = 2 * Math.PI
port(
  'Box–Muller: uniform to normal and back, and the log-Jacobian of the density change',
  ALL,
  `
  fn boxmuller(x: f64, y: f64) {
    routine {
      th <- 0.0
      th += ${TWO_PI} * y
      logx <- 0.0
      logx += log(x)
      l2 <- 0.0
      l2 -= 2.0 * logx
    }
    z1 <- 0.0
    z2 <- 0.0
    z1 += sqrt(l2)
    ROT(z1, z2, th)
    ~routine
    SWAP(x, z1)
    SWAP(y, z2)
    // the uniforms, recomputed from the normals, uncompute z1 and z2
    routine {
      at <- 0.0
      at += atan2(y, x)
      if (y < 0.0, ~) { at += ${TWO_PI} }
      sq <- 0.0
      sq += x * x + y * y
      hs <- 0.0
      hs -= sq / 2.0
    }
    z1 -= exp(hs)
    z2 -= at / ${TWO_PI}
    z1 -> 0.0
    z2 -> 0.0
    ~routine
  }`,
  (m) => {
    const [z1, z2] = m.boxmuller!(0.5, 0.5) as number[]
    const r = Math.sqrt(-2 * Math.log(0.5))
    expect(z1).toBeCloseTo(r * Math.cos(Math.PI), 14)
    expect(z2).toBeCloseTo(r * Math.sin(Math.PI), 14)
    for (const [u, v] of [
      [0.5, 0.5],
      [0.2, 0.9],
      [0.73, 0.31],
    ] as const) {
      const z = m.boxmuller!(u, v) as number[]
      expectAllClose(m.boxmuller!.inverse(z[0]!, z[1]!) as number[], [u, v], 1e-12)
      // log |det ∂z/∂u| = log(1 / (p(z1) p(z2))) for the standard normal density p
      const J = jacobian(m.boxmuller!, [u, v], { outputs: [0, 1], inputs: [0, 1] })
      const pdf = (t: number) => Math.exp((-t * t) / 2) / Math.sqrt(TWO_PI)
      expect(Math.log(Math.abs(J[0]! * J[3]! - J[1]! * J[2]!))).toBeCloseTo(Math.log(1 / (pdf(z[0]!) * pdf(z[1]!))), 10)
    }
  },
)

// ---------- logsumexp (nnlib, GMM) ----------

port(
  'logsumexp with a running maximum; its gradient is the softmax',
  ALL,
  `
  fn lse(out: f64, x: f64[]) {
    routine {
      mx: f64[] <- zeros(len(x))
      mx[0] += x[0]
      for i in 1..len(x) { mx[i] += max(mx[i - 1], x[i]) }
      m <- 0.0
      m += mx[len(x) - 1]
      s <- 0.0
      for i in 0..len(x) { s += exp(x[i] - m) }
    }
    out += log(s) + m
    ~routine
  }`,
  (m, backend) => {
    const x = Float64Array.of(3, -1, 700, 699.5, 2)
    const mx = 700,
      want = mx + Math.log(x.reduce((s, v) => s + Math.exp(v - mx), 0))
    expect(m.lse!(0, x)[0]).toBeCloseTo(want, 12)
    const g = gradient(m.lse!, [0, x], { loss: 0 })[1] as Float64Array
    expectAllClose(
      g,
      x.map((v) => Math.exp(v - want)),
      1e-12,
    )
    expectGradientMatchesFd(m.lse!, [0, randomArray(6, 5, 3)], 0)
    // the same gradient from the registered array primitive `logsumexp`
    const p = rev.with({ backend, registry: registry.clone().registerPrimitive(logsumexpPrimitive) })(
      template('fn f(out: f64, x: f64[]) { out += logsumexp(x) }'),
    )
    expectAllClose(gradient(p.f!, [0, x], { loss: 0 })[1] as Float64Array, g, 1e-12)
  },
)

// ---------- nice.jl ----------

/** Plain-TS NICE: layer l adds W2·relu(W1·x_src + b1) + b2 to x_dst (halves alternate). */
function niceLayer(x: Float64Array, l: number, d: number, nh: number, P: NiceParams, sign: 1 | -1): void {
  const [src, dst] = l % 2 === 0 ? [0, d] : [d, 0]
  const ha = new Float64Array(nh)
  for (let i = 0; i < nh; i++) {
    let h = P.b1[l * nh + i]!
    for (let j = 0; j < d; j++) h += P.W1[(l * nh + i) * d + j]! * x[src + j]!
    ha[i] = Math.max(h, 0)
  }
  for (let i = 0; i < d; i++) {
    let y = P.b2[l * d + i]!
    for (let j = 0; j < nh; j++) y += P.W2[(l * d + i) * nh + j]! * ha[j]!
    x[dst + i] += sign * y
  }
}
interface NiceParams {
  W1: Float64Array
  b1: Float64Array
  W2: Float64Array
  b2: Float64Array
}

port(
  'NICE: an additive-coupling flow, its inverse and the log-density gradient',
  ALL,
  `
  fn layer(x: f64[], src: i32, dst: i32, d: i32, nh: i32, W1: f64[], b1: f64[], W2: f64[], b2: f64[], l: i32) {
    routine {
      h: f64[] <- zeros(nh)
      ha: f64[] <- zeros(nh)
      for i in 0..nh {
        h[i] += b1[l * nh + i]
        for j in 0..d { h[i] += W1[(l * nh + i) * d + j] * x[src + j] }
        if (h[i] > 0.0, ~) { ha[i] += h[i] }
      }
    }
    for i in 0..d {
      x[dst + i] += b2[l * d + i]
      for j in 0..nh { x[dst + i] += W2[(l * d + i) * nh + j] * ha[j] }
    }
    ~routine
  }
  fn network(x: f64[], d: i32, nh: i32, nl: i32, W1: f64[], b1: f64[], W2: f64[], b2: f64[]) {
    for l in 0..nl {
      if (l % 2 == 0, ~) { layer(x, 0, d, d, nh, W1, b1, W2, b2, l) } else { layer(x, d, 0, d, nh, W1, b1, W2, b2, l) }
    }
  }
  fn logp(out: f64, x: f64[], d: i32, nh: i32, nl: i32, W1: f64[], b1: f64[], W2: f64[], b2: f64[]) {
    ~network(x, d, nh, nl, W1, b1, W2, b2)
    for i in 0..len(x) { out -= 0.5 * x[i] * x[i] }
  }`,
  (m) => {
    const d = 2,
      nh = 5,
      nl = 4
    const P: NiceParams = {
      W1: randomArray(nl * nh * d, 21, 0.8),
      b1: randomArray(nl * nh, 22, 0.5),
      W2: randomArray(nl * d * nh, 23, 0.8),
      b2: randomArray(nl * d, 24, 0.5),
    }
    const x0 = randomArray(2 * d, 25, 2)
    const x = x0.slice(),
      ref = x0.slice()
    m.network!(x, d, nh, nl, P.W1, P.b1, P.W2, P.b2)
    for (let l = 0; l < nl; l++) niceLayer(ref, l, d, nh, P, 1)
    expectAllClose(x, ref, 1e-13)
    m.network!.inverse(x, d, nh, nl, P.W1, P.b1, P.W2, P.b2)
    expectAllClose(x, x0, 1e-13)
    // log p(x) of the flow (volume-preserving: no log-det term), against plain TS
    const z = x0.slice()
    for (let l = nl - 1; l >= 0; l--) niceLayer(z, l, d, nh, P, -1)
    const [lp] = m.logp!(0, x0.slice(), d, nh, nl, P.W1, P.b1, P.W2, P.b2) as number[]
    expect(lp).toBeCloseTo(-0.5 * z.reduce((s, v) => s + v * v, 0), 12)
    expectGradientMatchesFd(m.logp!, [0, x0, d, nh, nl, P.W1, P.b1, P.W2, P.b2], 0, [2, 3, 4], 1e-6)
  },
)

// ---------- fft.jl ----------

/** The DFT by its definition, Σ x_k e^{−2πi jk/n} (plain TS, O(n²)). */
function dft(x: C[]): C[] {
  const n = x.length
  return x.map((_, j) =>
    x.reduce(
      (s, v, k) => cx.add(s, cx.mul(v, { re: Math.cos((-TWO_PI * j * k) / n), im: Math.sin((-TWO_PI * j * k) / n) })),
      cx.of(0),
    ),
  )
}

port(
  'FFT: recursive radix-2 with HADAMARD butterflies and ROT twiddles (unitary scaling)',
  ALL,
  `
  fn fft(x: complex[], off: i32, stride: i32, n: i32) {
    if (n == 2, ~) {
      HADAMARD(x[off].re, x[off + stride].re)
      HADAMARD(x[off].im, x[off + stride].im)
    } else {
      if (n > 2, ~) {
        fft(x, off, 2 * stride, div(n, 2))
        fft(x, off + stride, 2 * stride, div(n, 2))
        // even-indexed results to the first half, odd-indexed to the second
        x2: complex[] <- zeros(n)
        for i in 0..div(n, 2) {
          x2[i] += x[off + 2 * i * stride]
          x2[i + div(n, 2)] += x[off + (2 * i + 1) * stride]
        }
        for i in 0..n { SWAP(x[off + i * stride], x2[i]) }
        for i in 0..div(n, 2) {
          x2[2 * i] -= x[off + i * stride]
          x2[2 * i + 1] -= x[off + (i + div(n, 2)) * stride]
        }
        x2 -> zeros(n)
        for i in 0..div(n, 2) {
          routine {
            th <- 0.0
            th -= ${TWO_PI} * f64(i) / f64(n)
          }
          ROT(x[off + (i + div(n, 2)) * stride].re, x[off + (i + div(n, 2)) * stride].im, th)
          HADAMARD(x[off + i * stride].re, x[off + (i + div(n, 2)) * stride].re)
          HADAMARD(x[off + i * stride].im, x[off + (i + div(n, 2)) * stride].im)
          ~routine
        }
      }
    }
  }
  fn power(out: f64, x: complex[], k: i32) {
    fft(x, 0, 1, div(len(x), 2))
    out += abs2(x[k]) + x[k + 1].re
  }`,
  (m) => {
    const n = 16,
      raw = randomArray(2 * n, 31)
    const z: C[] = Array.from({ length: n }, (_, k) => cx.of(raw[2 * k]!, raw[2 * k + 1]!))
    const x = raw.slice()
    m.fft!(x, 0, 1, n)
    const want = dft(z)
    for (let k = 0; k < n; k++)
      expectComplexClose({ re: x[2 * k]! * Math.sqrt(n), im: x[2 * k + 1]! * Math.sqrt(n) }, want[k]!, 1e-13)
    m.fft!.inverse(x, 0, 1, n)
    expectAllClose(x, raw, 1e-14)
    expectGradientMatchesFd(m.power!, [0, randomArray(16, 32), 3], 0, [2])
  },
)

// ---------- stdlib/statistics.jl ----------

port(
  'statistics: mean, variance and the normal log-density',
  ALL,
  `
  fn mean_sum(out: f64, sum: f64, x: f64[]) {
    for i in 0..len(x) { sum += x[i] }
    out += sum / len(x)
  }
  fn var_mean_sum(v: f64, varsum: f64, mean: f64, sum: f64, x: f64[]) {
    mean_sum(mean, sum, x)
    for i in 0..len(x) { varsum += (x[i] - mean) * (x[i] - mean) }
    v += varsum / f64(len(x) - 1)
  }
  fn normal_logpdf(out: f64, x: f64, mu: f64, sigma: f64) {
    out -= (x - mu) * (x - mu) / (2.0 * sigma * sigma) + log(sigma) + ${0.5 * Math.log(TWO_PI)}
  }`,
  (m) => {
    const x = randomArray(100, 41, 3)
    const mean = x.reduce((s, v) => s + v, 0) / 100,
      vs = x.reduce((s, v) => s + (v - mean) ** 2, 0)
    expect(m.mean_sum!(0, 0, x)[0]).toBeCloseTo(mean, 14)
    const r = m.var_mean_sum!(0, 0, 0, 0, x) as number[]
    expectAllClose(r.slice(0, 4), [vs / 99, vs, mean, mean * 100], 1e-12)
    expectAllClose((m.var_mean_sum!.inverse(...r.slice(0, 4), x) as number[]).slice(0, 4), [0, 0, 0, 0], 1e-8)
    const [lp] = m.normal_logpdf!(0, 1, 0.3, 1.5) as number[]
    expect(lp).toBeCloseTo(-((1 - 0.3) ** 2) / (2 * 2.25) - Math.log(1.5) - 0.5 * Math.log(TWO_PI), 14)
    expectGradientMatchesFd(m.normal_logpdf!, [0, 1, 0.3, 1.5], 0)
    expectGradientMatchesFd(m.var_mean_sum!, [0, 0, 0, 0, randomArray(8, 42)], 0)
  },
)

// ---------- stdlib/nnlib.jl ----------

port(
  'softmax cross-entropy with the maximum subtracted',
  ALL,
  `
  fn sce(out: f64, x: f64[], p: f64[]) {
    routine {
      mx: f64[] <- zeros(len(x))
      mx[0] += x[0]
      for i in 1..len(x) { mx[i] += max(mx[i - 1], x[i]) }
      z <- 0.0
      for i in 0..len(x) { z += exp(x[i] - mx[len(x) - 1]) }
      lz <- 0.0
      lz += log(z)
    }
    for i in 0..len(x) { out += (lz - (x[i] - mx[len(x) - 1])) * p[i] }
    ~routine
  }`,
  (m) => {
    const x = randomArray(10, 51, 2),
      p0 = randomArray(10, 52)
    const pm = Math.max(...p0),
      p = p0.map((v) => v / pm)
    const xm = Math.max(...x),
      Z = x.reduce((s, v) => s + Math.exp(v - xm), 0)
    const want = x.reduce((s, v, i) => s + (Math.log(Z) - (v - xm)) * p[i]!, 0)
    expect(m.sce!(0, x, p)[0]).toBeCloseTo(want, 12)
    expectGradientMatchesFd(m.sce!, [0, x, p], 0)
  },
)

// ---------- stdlib/blas.jl ----------

port(
  'blas: squared norm and dot product of complex and real vectors',
  ALL,
  `
  fn norm2(out: complex, v: complex[]) { for i in 0..len(v) { out += conj(v[i]) * v[i] } }
  fn dotc(out: complex, a: complex[], b: complex[]) { for i in 0..len(a) { out += conj(a[i]) * b[i] } }
  fn dotr(out: f64, a: f64[], b: f64[]) { for i in 0..len(a) { out += a[i] * b[i] } }`,
  (m) => {
    const v = Float64Array.of(0, 1, 2, 0, 3, 0),
      w = Float64Array.of(1, 0, 0, 2, 5, 0) // [i, 2, 3], [1, 2i, 5]
    expectComplexClose(m.norm2!(cx.of(0), v)[0], cx.of(14))
    expectComplexClose(m.dotc!(cx.of(0), v, w)[0], cx.of(15, 3))
    expectComplexClose(m.dotc!.inverse(cx.of(15, 3), v, w)[0], cx.of(0))
    const a = Float64Array.of(1, 2, 3),
      b = Float64Array.of(1, 2, 5)
    expect(m.dotr!(0, a, b)[0]).toBe(20)
    const g = gradient(m.dotr!, [0, a, b], { loss: 0 })
    expectAllClose(g[1] as Float64Array, b, 0)
    expectAllClose(g[2] as Float64Array, a, 0)
  },
)
