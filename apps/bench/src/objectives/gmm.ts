import { gmmIcfSize, gmmParameterCount, type GmmInstance } from '../data/gmm-data.js'
import { logGamma } from '../math/lgamma.js'

/** ADBench's value of π (defs.h); used wherever the reference uses PI, so results match it. */
export const ADBENCH_PI = 3.14159265359

/** log of the multivariate gamma function Γ_p(a), as ADBench's `log_gamma_distrib`. */
export function logGammaDistribution(a: number, p: number): number {
  let out = 0.25 * p * (p - 1) * Math.log(ADBENCH_PI)
  for (let j = 1; j <= p; j++) out += logGamma(a + 0.5 * (1 - j))
  return out
}

/** The instance-independent constant of the Wishart prior, per component (m: degrees of freedom beyond d + 1). */
export function wishartConstant(d: number, gamma: number, m: number): number {
  const n = d + m + 1
  return n * d * (Math.log(gamma) - 0.5 * Math.log(2)) - logGammaDistribution(0.5 * n, d)
}

/**
 * Reusable scratch for the GMM kernels, so the timed calls allocate nothing.
 */
export interface GmmWorkspace {
  d: number
  k: number
  qdiag: Float64Array
  sumQ: Float64Array
  xc: Float64Array
  y: Float64Array
  main: Float64Array
}

export function createGmmWorkspace(d: number, k: number): GmmWorkspace {
  return {
    d,
    k,
    qdiag: new Float64Array(k * d),
    sumQ: new Float64Array(k),
    xc: new Float64Array(k * d),
    y: new Float64Array(k * d),
    main: new Float64Array(k),
  }
}

function workspaceFor(inst: GmmInstance, ws?: GmmWorkspace): GmmWorkspace {
  if (ws && ws.d === inst.d && ws.k === inst.k) return ws
  return createGmmWorkspace(inst.d, inst.k)
}

function logSumExp(a: Float64Array, len: number): number {
  let mx = a[0]
  for (let i = 1; i < len; i++) if (a[i] > mx) mx = a[i]
  let s = 0
  for (let i = 0; i < len; i++) s += Math.exp(a[i] - mx)
  return Math.log(s) + mx
}

/** The diagonals of Q_k = exp(icf diagonal) into `qdiag` (k·d) and their log-sums Σ_j icf_kj into `sumQ`. */
function diagonals(icf: Float64Array, d: number, k: number, qdiag: Float64Array, sumQ: Float64Array): void {
  const icfSz = gmmIcfSize(d)
  for (let c = 0; c < k; c++) {
    let s = 0
    for (let j = 0; j < d; j++) {
      const q = icf[c * icfSz + j]
      s += q
      qdiag[c * d + j] = Math.exp(q)
    }
    sumQ[c] = s
  }
}

/**
 * The GMM objective (ADBench sign convention), term for term as ADBench's C++
 * reference: CONSTANT + Σ_i logsumexp_k(α_k + Σ log Q_k − ½‖Q_k (x_i − μ_k)‖²) − n·logsumexp(α)
 * + log Wishart prior, with `CONSTANT = −n d ½ log(2 PI)` and PI = 3.14159265359.
 */
export function gmmObjectivePlain(inst: GmmInstance, ws?: GmmWorkspace): number {
  const { d, k, n, alphas, means, icf, x } = inst
  const w = workspaceFor(inst, ws)
  const { qdiag, sumQ, main } = w
  const xc = w.xc
  const y = w.y
  const icfSz = gmmIcfSize(d)
  diagonals(icf, d, k, qdiag, sumQ)
  let slse = 0
  for (let i = 0; i < n; i++) {
    const xo = i * d
    for (let c = 0; c < k; c++) {
      const mo = c * d
      for (let j = 0; j < d; j++) {
        xc[j] = x[xo + j] - means[mo + j]
        y[j] = qdiag[mo + j] * xc[j]
      }
      let li = c * icfSz + d
      for (let col = 0; col < d; col++) {
        const v = xc[col]
        for (let row = col + 1; row < d; row++) y[row] += icf[li++] * v
      }
      let sq = 0
      for (let j = 0; j < d; j++) sq += y[j] * y[j]
      main[c] = alphas[c] + sumQ[c] - 0.5 * sq
    }
    slse += logSumExp(main, k)
  }
  const constant = -n * d * 0.5 * Math.log(2 * ADBENCH_PI)
  const lseAlphas = logSumExp(alphas, k)
  let err = constant + slse - n * lseAlphas
  // Wishart prior
  const { gamma, m } = inst.wishart
  let prior = 0
  for (let c = 0; c < k; c++) {
    let frob = 0
    for (let j = 0; j < d; j++) frob += qdiag[c * d + j] * qdiag[c * d + j]
    for (let j = c * icfSz + d; j < (c + 1) * icfSz; j++) frob += icf[j] * icf[j]
    prior += 0.5 * gamma * gamma * frob - m * sumQ[c]
  }
  err += prior - k * wishartConstant(d, gamma, m)
  return err
}

/**
 * Hand-derived gradient of {@link gmmObjectivePlain} in ADBench's order: alphas (k), means
 * (k·d), icf (k·d(d+1)/2). It checks the other engines and is timed as the hand-written gradient
row; derivation in the README.
 */
export function gmmGradientPlain(inst: GmmInstance, out?: Float64Array, ws?: GmmWorkspace): Float64Array {
  const { d, k, n, alphas, means, icf, x } = inst
  const w = workspaceFor(inst, ws)
  const { qdiag, sumQ, main, xc, y } = w
  const icfSz = gmmIcfSize(d)
  const g = out ?? new Float64Array(gmmParameterCount(d, k))
  g.fill(0)
  const gAlpha = 0
  const gMean = k
  const gIcf = k + k * d
  diagonals(icf, d, k, qdiag, sumQ)
  for (let i = 0; i < n; i++) {
    const xo = i * d
    for (let c = 0; c < k; c++) {
      const mo = c * d
      for (let j = 0; j < d; j++) {
        const v = x[xo + j] - means[mo + j]
        xc[mo + j] = v
        y[mo + j] = qdiag[mo + j] * v
      }
      let li = c * icfSz + d
      for (let col = 0; col < d; col++) {
        const v = xc[mo + col]
        for (let row = col + 1; row < d; row++) y[mo + row] += icf[li++] * v
      }
      let sq = 0
      for (let j = 0; j < d; j++) sq += y[mo + j] * y[mo + j]
      main[c] = alphas[c] + sumQ[c] - 0.5 * sq
    }
    // posterior weights r_c = softmax(main)_c
    let mx = main[0]
    for (let c = 1; c < k; c++) if (main[c] > mx) mx = main[c]
    let s = 0
    for (let c = 0; c < k; c++) {
      const e = Math.exp(main[c] - mx)
      main[c] = e
      s += e
    }
    const inv = 1 / s
    for (let c = 0; c < k; c++) {
      const r = main[c] * inv
      g[gAlpha + c] += r
      const mo = c * d
      const io = gIcf + c * icfSz
      // ∂main/∂y = −y; y = Q xc
      for (let j = 0; j < d; j++) {
        // diagonal: d/dq_j [exp(q_j) xc_j] plus the sum-of-logs term
        g[io + j] += r * (1 - y[mo + j] * xc[mo + j] * qdiag[mo + j])
      }
      // ∂/∂μ = +Qᵀ y r ; strictly lower part
      for (let j = 0; j < d; j++) g[gMean + mo + j] += r * qdiag[mo + j] * y[mo + j]
      let li = d
      for (let col = 0; col < d; col++) {
        let acc = 0
        const v = xc[mo + col]
        for (let row = col + 1; row < d; row++) {
          const yr = y[mo + row]
          g[io + li] -= r * yr * v
          acc += icf[c * icfSz + li] * yr
          li++
        }
        g[gMean + mo + col] += r * acc
      }
    }
  }
  // −n · softmax(alphas)
  let mx = alphas[0]
  for (let c = 1; c < k; c++) if (alphas[c] > mx) mx = alphas[c]
  let s = 0
  for (let c = 0; c < k; c++) s += Math.exp(alphas[c] - mx)
  for (let c = 0; c < k; c++) g[gAlpha + c] -= (n * Math.exp(alphas[c] - mx)) / s
  // Wishart prior
  const { gamma, m } = inst.wishart
  const g2 = gamma * gamma
  for (let c = 0; c < k; c++) {
    const io = gIcf + c * icfSz
    for (let j = 0; j < d; j++) {
      const q = qdiag[c * d + j]
      g[io + j] += g2 * q * q - m
    }
    for (let j = d; j < icfSz; j++) g[io + j] += g2 * icf[c * icfSz + j]
  }
  return g
}

/** Pack / unpack the differentiated parameters (ADBench's order) for finite differences. */
export function gmmPackParameters(inst: GmmInstance): Float64Array {
  const out = new Float64Array(gmmParameterCount(inst.d, inst.k))
  out.set(inst.alphas, 0)
  out.set(inst.means, inst.k)
  out.set(inst.icf, inst.k + inst.k * inst.d)
  return out
}

export function gmmWithParameters(inst: GmmInstance, params: Float64Array): GmmInstance {
  const { d, k } = inst
  return {
    ...inst,
    alphas: params.subarray(0, k),
    means: params.subarray(k, k + k * d),
    icf: params.subarray(k + k * d, k + k * d + k * gmmIcfSize(d)),
  }
}
