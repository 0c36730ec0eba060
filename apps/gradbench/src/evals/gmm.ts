/**
 * gmm: the log posterior of a Gaussian mixture with a Wishart prior (GradBench's form of
 * ADBench's GMM). The program follows the bench's GMM (`apps/bench/src/tenet/gmm.ts`), with
 * GradBench's signs for the prior:
 *
 * - `gmm_points` is generated per (d, k) so that the rows of y = Q(x − μ) are single expressions:
 *   for the points of one block it keeps x − μ, y, β, the running maximum of β and the shifted
 *   exponential sums in workspace arrays (the garbage that the adjoint uncomputes) and adds each
 *   point's log-sum-exp to `slse`. One forward and one adjoint run per block give its gradient.
 * - `gmm_q` computes exp(q) and Σq once per evaluation.
 * - `gmm_rest` is −n·logsumexp(α) plus the prior, written compute–copy–uncompute.
 */
import { examples, grad, type GradientFunction, type TenetFunction } from 'tenet'
import { compile, fn } from './compile.js'
import { flat, int, matrix, num, record, list } from './input.js'
import { multivariateLgamma } from './lgamma.js'
import type { EvalModule, Prepared } from './types.js'

/** The data term for dimension d, with k a parameter: `tenet`'s `examples.gmmPointsSource`. */
export const gmmPointsSource = (d: number): string => examples.gmmPointsSource(d)

export const gmmSharedSource = `
${examples.gmmQSource}
${examples.logsumexpSource}
fn gmm_rest(err: f64, n: f64, d: i32, k: i32, alphas: f64[], icf: f64[], gamma: f64, m: f64) {
  routine {
    lse <- 0.0
    logsumexp(lse, alphas, k)
    icfsz: i32 <- div(d * (d + 1), 2)
  }
  err -= n * lse
  for c in 0..k {
    for j in 0..d {
      err += m * icf[c * icfsz + j] - 0.5 * gamma * gamma * exp(2.0 * icf[c * icfsz + j])
    }
    for j in d..icfsz {
      err -= 0.5 * gamma * gamma * icf[c * icfsz + j] * icf[c * icfsz + j]
    }
  }
  ~routine
}
`

/** Points per block: a block's workspace stays in cache. */
const BLOCK = 64

interface Instance {
  d: number
  k: number
  n: number
  m: number
  gamma: number
  x: Float64Array
  alphas: Float64Array
  means: Float64Array
  /** per component: q (d values) then l (d(d−1)/2 values) */
  icf: Float64Array
}

function parse(input: unknown): Instance {
  const o = record(input)
  const d = int(o, 'd'),
    k = int(o, 'k'),
    n = int(o, 'n')
  if (d < 1 || k < 1 || n < 1) throw new Error('gmm needs d, k, n ≥ 1')
  const L = (d * (d - 1)) / 2,
    S = d + L
  const q = flat(o, 'q', k * d),
    l = flat(o, 'l', k * L)
  const icf = new Float64Array(k * S)
  for (let c = 0; c < k; c++) {
    icf.set(q.subarray(c * d, c * d + d), c * S)
    icf.set(l.subarray(c * L, c * L + L), c * S + d)
  }
  return {
    d,
    k,
    n,
    m: int(o, 'm'),
    gamma: num(o, 'gamma'),
    x: flat(o, 'x', n * d),
    alphas: flat(o, 'alpha', k),
    means: flat(o, 'mu', k * d),
    icf,
  }
}

/** The terms that depend on no parameter: −(n·d/2)·log 2π + k·(N·d·(log γ − ½ log 2) − log Γ_d(N/2)), N = d + m + 1. */
export function gmmConstant(d: number, k: number, n: number, m: number, gamma: number): number {
  const N = d + m + 1
  return (
    -n * d * 0.5 * Math.log(2 * Math.PI) +
    k * (N * d * (Math.log(gamma) - 0.5 * Math.log(2)) - multivariateLgamma(d, 0.5 * N))
  )
}

const zeros = (n: number): Float64Array => new Float64Array(n)

/** Objective and gradient evaluators for one (d, k), reusing their buffers. */
function evaluator(
  d: number,
  k: number,
): { objective(inst: Instance): number; gradient(inst: Instance): Float64Array[] } {
  const mod = compile(gmmPointsSource(d) + gmmSharedSource)
  const points: TenetFunction = fn(mod, 'gmm_points')
  const P = points.core
  const Q = fn(mod, 'gmm_q').core
  const R = fn(mod, 'gmm_rest').core
  const A = grad(points, { loss: 0 }).adjoint.core
  const QA = grad(fn(mod, 'gmm_q'), { loss: 0 }).adjoint.core
  const gRest: GradientFunction = grad(fn(mod, 'gmm_rest'), { loss: 0 })
  const S = (d * (d + 1)) / 2
  const qdiag = zeros(k * d),
    sumq = zeros(k),
    gQdiag = zeros(k * d),
    gSumq = zeros(k)
  const ws = [
    zeros(BLOCK * k * d),
    zeros(BLOCK * k * d),
    zeros(BLOCK * k),
    zeros(BLOCK * k),
    zeros(BLOCK * k),
    zeros(BLOCK),
  ]
  const gws = ws.map((a) => zeros(a.length))
  const gAlphas = zeros(k),
    gMeans = zeros(k * d),
    gIcf = zeros(k * S),
    gIcfQ = zeros(k * S)
  let gX = zeros(0)
  const prepareQ = (inst: Instance): void => {
    qdiag.fill(0)
    sumq.fill(0)
    Q(0, d, k, inst.icf, qdiag, sumq)
  }
  return {
    objective(inst) {
      prepareQ(inst)
      let slse = 0
      for (let i0 = 0; i0 < inst.n; i0 += BLOCK) {
        for (const a of ws) a.fill(0)
        P(slse, k, i0, Math.min(inst.n, i0 + BLOCK), inst.alphas, inst.means, inst.icf, inst.x, qdiag, sumq, ...ws)
        slse = P.results[0]!
      }
      R(0, inst.n, d, k, inst.alphas, inst.icf, inst.gamma, inst.m)
      return gmmConstant(d, k, inst.n, inst.m, inst.gamma) + slse + R.results[0]!
    },
    gradient(inst) {
      if (gX.length !== inst.x.length) gX = zeros(inst.x.length)
      prepareQ(inst)
      for (const a of [gAlphas, gMeans, gIcf, gQdiag, gSumq, gIcfQ]) a.fill(0)
      for (let i0 = 0; i0 < inst.n; i0 += BLOCK) {
        const i1 = Math.min(inst.n, i0 + BLOCK)
        for (const a of ws) a.fill(0)
        for (const a of gws) a.fill(0)
        P(0, k, i0, i1, inst.alphas, inst.means, inst.icf, inst.x, qdiag, sumq, ...ws)
        // the adjoint: values, one gradient per float parameter (slse first), then the sink
        A(
          P.results[0]!,
          k,
          i0,
          i1,
          inst.alphas,
          inst.means,
          inst.icf,
          inst.x,
          qdiag,
          sumq,
          ...ws,
          1,
          gAlphas,
          gMeans,
          gIcf,
          gX,
          gQdiag,
          gSumq,
          ...gws,
          0,
        )
      }
      // through qdiag = exp(q) and sumq = Σq
      QA(0, d, k, inst.icf, qdiag, sumq, 0, gIcfQ, gQdiag, gSumq, 0)
      gRest.run(0, inst.n, d, k, inst.alphas, inst.icf, inst.gamma, inst.m)
      const ra = gRest.buffers[4]!,
        ri = gRest.buffers[5]!
      for (let c = 0; c < k; c++) gAlphas[c] = gAlphas[c]! + ra[c]!
      for (let j = 0; j < gIcf.length; j++) gIcf[j] = gIcf[j]! + gIcfQ[j]! + ri[j]!
      return [gAlphas, gMeans, gIcf]
    },
  }
}

const evaluators = new Map<string, ReturnType<typeof evaluator>>()
const evaluatorFor = (d: number, k: number): ReturnType<typeof evaluator> => {
  const key = `${d},${k}`
  let e = evaluators.get(key)
  if (!e) evaluators.set(key, (e = evaluator(d, k)))
  return e
}

export const gmm: EvalModule = {
  objective(input): Prepared {
    const inst = parse(input)
    const e = evaluatorFor(inst.d, inst.k)
    let y = 0
    return { run: () => (y = e.objective(inst)), output: () => y }
  },
  jacobian(input): Prepared {
    const inst = parse(input)
    const { d, k } = inst
    const e = evaluatorFor(d, k)
    let g: Float64Array[] = []
    return {
      run: () => (g = e.gradient(inst)),
      output: () => {
        const [ga, gm, gi] = g as [Float64Array, Float64Array, Float64Array]
        const S = (d * (d + 1)) / 2,
          L = S - d
        const q: number[][] = [],
          l: number[][] = []
        for (let c = 0; c < k; c++) {
          q.push(list(gi.subarray(c * S, c * S + d)))
          l.push(list(gi.subarray(c * S + d, c * S + S)))
        }
        return { alpha: list(ga), mu: matrix(gm, k, d), q, l: L >= 0 ? l : [] }
      },
    }
  },
}
