/**
 * The `unf` workload family's objectives as a good engineer writes them in plain TS (the
 * baselines), and their data: dot product, product, log-sum-exp, ADBench's GMM and a two-layer
 * perceptron. Every case has a flat parameter vector and the objective at any such vector, for
 * the directional finite-difference checks of the gradient rows.
 */
import { generateGmm, gmmIcfSize, gmmParameterCount, type GmmInstance } from '../data/gmm-data.js'
import { createRng } from '../math/prng.js'
import {
  ADBENCH_PI,
  createGmmWorkspace,
  gmmObjectivePlain,
  gmmPackParameters,
  gmmWithParameters,
  wishartConstant,
} from './gmm.js'

export function dotPlain(a: Float64Array, b: Float64Array): number {
  let s = 0
  for (let i = 0; i < a.length; i++) s += a[i] * b[i]
  return s
}

export function prodPlain(a: Float64Array): number {
  let p = 1
  for (let i = 0; i < a.length; i++) p *= a[i]
  return p
}

export function logsumexpPlain(a: Float64Array): number {
  let m = -Infinity
  for (let i = 0; i < a.length; i++) if (a[i] > m) m = a[i]
  let s = 0
  for (let i = 0; i < a.length; i++) s += Math.exp(a[i] - m)
  return m + Math.log(s)
}

/** A two-layer perceptron: sizes, row-major weights and a batch. */
export interface MlpInstance {
  d: number
  h: number
  o: number
  n: number
  w1: Float64Array // h × d
  b1: Float64Array
  w2: Float64Array // o × h
  b2: Float64Array
  xs: Float64Array // n × d
  ys: Float64Array // n × o
}

export function generateMlp(d: number, h: number, o: number, n: number, seed: number): MlpInstance {
  const rng = createRng(seed)
  const vec = (len: number, scale: number) => Float64Array.from({ length: len }, () => rng.normal() * scale)
  return {
    d,
    h,
    o,
    n,
    w1: vec(h * d, 1 / Math.sqrt(d)),
    b1: vec(h, 0.1),
    w2: vec(o * h, 1 / Math.sqrt(h)),
    b2: vec(o, 0.1),
    xs: vec(n * d, 1),
    ys: vec(n * o, 1),
  }
}

/** Σₙ ‖W₂ tanh(W₁xₙ + b₁) + b₂ − yₙ‖², with one scratch vector for the hidden layer. */
export function mlpPlain(m: MlpInstance, hidden = new Float64Array(m.h)): number {
  const { d, h, o, n, w1, b1, w2, b2, xs, ys } = m
  let loss = 0
  for (let s = 0; s < n; s++) {
    const xo = s * d
    for (let i = 0; i < h; i++) {
      let a = b1[i]
      const wo = i * d
      for (let j = 0; j < d; j++) a += w1[wo + j] * xs[xo + j]
      hidden[i] = Math.tanh(a)
    }
    for (let k = 0; k < o; k++) {
      let a = b2[k]
      const wo = k * h
      for (let i = 0; i < h; i++) a += w2[wo + i] * hidden[i]
      const r = a - ys[s * o + k]
      loss += r * r
    }
  }
  return loss
}

export const mlpParameterCount = (m: MlpInstance): number => m.h * m.d + m.h + m.o * m.h + m.o

export function mlpPack(m: MlpInstance): Float64Array {
  const out = new Float64Array(mlpParameterCount(m))
  let o = 0
  for (const part of [m.w1, m.b1, m.w2, m.b2]) {
    out.set(part, o)
    o += part.length
  }
  return out
}

export function mlpWithParameters(m: MlpInstance, flat: Float64Array): MlpInstance {
  let o = 0
  const take = (len: number) => {
    const v = flat.slice(o, o + len)
    o += len
    return v
  }
  return { ...m, w1: take(m.h * m.d), b1: take(m.h), w2: take(m.o * m.h), b2: take(m.o) }
}

/**
 * Rows of a row-major matrix as separate arrays, the UNF engine's input format (copies, made once
 * in setup: V8 reads through `subarray` views with an offset several times slower in the generated
 * loops, measured 5× on the GMM gradient).
 */
export function rows(flat: Float64Array, nRows: number, nCols: number): Float64Array[] {
  return Array.from({ length: nRows }, (_, i) => flat.slice(i * nCols, (i + 1) * nCols))
}

/** The GMM's data-independent constant, as in `gmmObjectivePlain`. */
export function gmmConstant(inst: GmmInstance): number {
  const { d, k, n } = inst
  return -n * d * 0.5 * Math.log(2 * ADBENCH_PI) - k * wishartConstant(d, inst.wishart.gamma, inst.wishart.m)
}

/** The strictly lower factors of each component as dense d × d rows (zeros on and above the diagonal). */
export function gmmDenseLower(inst: GmmInstance): Float64Array[][] {
  const { d, k, icf } = inst
  const icfSz = gmmIcfSize(d)
  return Array.from({ length: k }, (_, c) => {
    const L = Array.from({ length: d }, () => new Float64Array(d))
    let li = c * icfSz + d
    for (let col = 0; col < d; col++) for (let row = col + 1; row < d; row++) L[row]![col] = icf[li++]
    return L
  })
}

/** Gradients of (alphas, means, logdiag, dense lower) in ADBench's order (alphas, means, icf). */
export function gmmPackGradient(
  d: number,
  k: number,
  gAlphas: ArrayLike<number>,
  gMeans: ArrayLike<number>,
  gLogdiag: ArrayLike<number>,
  gLower: (c: number, row: number, col: number) => number,
): Float64Array {
  const icfSz = gmmIcfSize(d)
  const g = new Float64Array(gmmParameterCount(d, k))
  g.set(gAlphas, 0)
  g.set(gMeans, k)
  for (let c = 0; c < k; c++) {
    const base = k + k * d + c * icfSz
    for (let j = 0; j < d; j++) g[base + j] = gLogdiag[c * d + j]
    let li = d
    for (let col = 0; col < d; col++) for (let row = col + 1; row < d; row++) g[base + li++] = gLower(c, row, col)
  }
  return g
}

export { createGmmWorkspace, generateGmm, gmmObjectivePlain, gmmPackParameters, gmmWithParameters }
