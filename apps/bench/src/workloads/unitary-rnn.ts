/**
 * A unitary recurrent step (paper 000 Listing 14 applied T times with shared angles):
 * x_T = U(θ)^T x₀, L = Σ c ⊙ x_T. The gradient w.r.t. θ through all T layers either keeps no
 * activations (reversibility: the backward pass un-rotates x, as Tenet's adjoint of `i_umm` does)
 * or stores them (what a taping AD does: the inputs of every rotation of every layer). Rows report
 * the memory each used: the bytes of stored activations, and the heap growth over one gradient.
 */
import { checkClose, lazy } from '../harness/check.js'
import type { CaseSpec, CheckResult, Workload } from '../harness/types.js'
import { finiteDifferenceGradient } from '../math/finite-difference.js'
import { createRng } from '../math/prng.js'
import { formatBytes } from '../report/format.js'
import { unitaryStepInversePlain, unitaryStepPlain } from '../objectives/unitary.js'

export interface UnitaryRnnCase {
  M: number
  N: number
  /** layers (recurrent steps) */
  T: number
  theta: Float64Array
  x: Float64Array
  c: Float64Array
  /** ∂L/∂θ (reference: the stored-activation gradient, itself checked against finite differences) */
  gradient: () => Float64Array
  loss: () => number
}

export function unitaryRnnLoss(
  x0: Float64Array,
  M: number,
  N: number,
  T: number,
  theta: Float64Array,
  c: Float64Array,
  x = new Float64Array(x0.length),
): number {
  x.set(x0)
  for (let t = 0; t < T; t++) unitaryStepPlain(x, M, N, theta)
  let s = 0
  for (let i = 0; i < x.length; i++) s += c[i]! * x[i]!
  return s
}

/** Bytes the stored-activation gradient keeps: the two input rows of every rotation of every layer. */
export const tapeBytes = (M: number, N: number, T: number): number => T * ((M * (M - 1)) / 2) * 2 * N * 8

/**
 * The gradient by stored activations: the forward pass records the inputs (a, b) of every
 * rotation of every layer in `tape` (T · M(M−1)/2 · 2N floats); the backward pass reads them back.
 */
export function unitaryRnnGradientTape(
  x0: Float64Array,
  M: number,
  N: number,
  T: number,
  theta: Float64Array,
  c: Float64Array,
  tape: Float64Array,
  out = { x: new Float64Array(x0.length), gx: new Float64Array(x0.length), theta: new Float64Array(theta.length) },
): Float64Array {
  const x = out.x
  x.set(x0)
  let p = 0
  for (let t = 0; t < T; t++) {
    let k = 0
    for (let j = 0; j < M; j++)
      for (let i = M - 2; i >= j; i--) {
        const cs = Math.cos(theta[k]!),
          sn = Math.sin(theta[k]!)
        k++
        const ra = i * N,
          rb = ra + N
        for (let l = 0; l < N; l++) {
          const a = x[ra + l]!,
            b = x[rb + l]!
          tape[p++] = a
          tape[p++] = b
          x[ra + l] = cs * a - sn * b
          x[rb + l] = sn * a + cs * b
        }
      }
  }
  const gx = out.gx
  gx.set(c)
  const gt = out.theta
  gt.fill(0)
  for (let t = T - 1; t >= 0; t--) {
    let k = theta.length
    for (let j = M - 1; j >= 0; j--)
      for (let i = j; i <= M - 2; i++) {
        k--
        const cs = Math.cos(theta[k]!),
          sn = Math.sin(theta[k]!)
        const ra = i * N,
          rb = ra + N
        p -= 2 * N
        let acc = 0
        for (let l = 0; l < N; l++) {
          const a = tape[p + 2 * l]!,
            b = tape[p + 2 * l + 1]!
          const ga = gx[ra + l]!,
            gb = gx[rb + l]!
          // a' = c a − s b, b' = s a + c b: θ̄ += ā'·(−s a − c b) + b̄'·(c a − s b)
          acc += -ga * (sn * a + cs * b) + gb * (cs * a - sn * b)
          gx[ra + l] = cs * ga + sn * gb
          gx[rb + l] = -sn * ga + cs * gb
        }
        gt[k]! += acc
      }
  }
  return gt
}

/**
 * The gradient with no stored activations: run forward, then walk the layers and rotations
 * backwards un-rotating x together with its adjoint (memory: x, x̄, θ̄ only).
 */
export function unitaryRnnGradientReversible(
  x0: Float64Array,
  M: number,
  N: number,
  T: number,
  theta: Float64Array,
  c: Float64Array,
  out = { x: new Float64Array(x0.length), gx: new Float64Array(x0.length), theta: new Float64Array(theta.length) },
): Float64Array {
  const x = out.x
  x.set(x0)
  for (let t = 0; t < T; t++) unitaryStepPlain(x, M, N, theta)
  const gx = out.gx
  gx.set(c)
  const gt = out.theta
  gt.fill(0)
  for (let t = T - 1; t >= 0; t--) {
    let k = theta.length
    for (let j = M - 1; j >= 0; j--)
      for (let i = j; i <= M - 2; i++) {
        k--
        const cs = Math.cos(theta[k]!),
          sn = Math.sin(theta[k]!)
        const ra = i * N,
          rb = ra + N
        let acc = 0
        for (let l = 0; l < N; l++) {
          const a = x[ra + l]!,
            b = x[rb + l]!
          const ga = gx[ra + l]!,
            gb = gx[rb + l]!
          acc += a * gb - b * ga
          x[ra + l] = cs * a + sn * b
          x[rb + l] = -sn * a + cs * b
          gx[ra + l] = cs * ga + sn * gb
          gx[rb + l] = -sn * ga + cs * gb
        }
        gt[k]! += acc
      }
  }
  return gt
}

/** Heap growth (bytes) over one call: a rough figure (no forced GC), reported next to exact sizes. */
export function heapGrowth(f: () => void): number {
  const h0 = process.memoryUsage().heapUsed
  f()
  return Math.max(0, process.memoryUsage().heapUsed - h0)
}

/** Timed results are added here, so their work is never dead code (a typed array: a module variable would box every double stored into it). */
const sink = new Float64Array(1)

export const unitaryRnnWorkload: Workload<UnitaryRnnCase> = {
  id: 'unitary-rnn',
  title: 'Unitary recurrent step (T layers of i_umm, shared angles)',
  description:
    'x_T = U(θ)^T x₀ with the Givens-decomposed U of paper 000 Listing 14, L = Σ c ⊙ x_T; ∂L/∂θ through all T layers with no stored activations (reversible: Tenet’s adjoint of `i_umm`, and the same by hand) versus storing every rotation’s inputs (taping AD). Memory per row in the status: stored-activation bytes and heap growth over one gradient.',
  cases: (o): CaseSpec<UnitaryRnnCase>[] =>
    (o.full
      ? [
          [16, 16, 64],
          [32, 32, 128],
        ]
      : [[16, 16, 64]]
    ).map(([M, N, T]) => ({
      label: `M=${M} N=${N} T=${T}`,
      params: { M, N, T, angles: (M * (M - 1)) / 2 },
      make: () => {
        const rng = createRng(M * 7919 + N * 31 + T)
        const theta = Float64Array.from({ length: (M * (M - 1)) / 2 }, rng.normal)
        const x = Float64Array.from({ length: M * N }, rng.normal)
        const c = Float64Array.from({ length: M * N }, rng.normal)
        return {
          M,
          N,
          T,
          theta,
          x,
          c,
          loss: lazy(() => unitaryRnnLoss(x, M, N, T, theta, c)),
          gradient: lazy(() => unitaryRnnGradientTape(x, M, N, T, theta, c, new Float64Array(tapeBytes(M, N, T) / 8))),
        }
      },
    })),
  baseline: {
    name: 'plain TS objective',
    setup(c) {
      const x = new Float64Array(c.x.length)
      return { run: () => void (sink[0] += unitaryRnnLoss(c.x, c.M, c.N, c.T, c.theta, c.c, x)) }
    },
  },
  rows: [
    {
      name: 'plain TS',
      family: 'plain TS',
      kind: 'inverse',
      setup(c) {
        const x = c.x.slice()
        return {
          run: () => {
            for (let t = 0; t < c.T; t++) unitaryStepInversePlain(x, c.M, c.N, c.theta)
          },
          check: () => {
            const y = c.x.slice()
            for (let t = 0; t < c.T; t++) unitaryStepPlain(y, c.M, c.N, c.theta)
            for (let t = 0; t < c.T; t++) unitaryStepInversePlain(y, c.M, c.N, c.theta)
            return checkClose(y, c.x, 1e-10, 'x after U⁻ᵀUᵀ')
          },
        }
      },
    },
    {
      name: 'plain TS (stored activations)',
      family: 'plain TS',
      kind: 'gradient',
      setup(c) {
        const tape = new Float64Array(tapeBytes(c.M, c.N, c.T) / 8)
        const out = {
          x: new Float64Array(c.x.length),
          gx: new Float64Array(c.x.length),
          theta: new Float64Array(c.theta.length),
        }
        return {
          run: () => void unitaryRnnGradientTape(c.x, c.M, c.N, c.T, c.theta, c.c, tape, out),
          check: (): CheckResult => {
            // the reference itself against central differences of the loss
            const scratch = new Float64Array(c.x.length)
            const fd = finiteDifferenceGradient(
              (t) => unitaryRnnLoss(c.x, c.M, c.N, c.T, t, c.c, scratch),
              c.theta.slice(),
            )
            const r = checkClose(
              unitaryRnnGradientTape(c.x, c.M, c.N, c.T, c.theta, c.c, tape, out),
              fd,
              1e-5,
              '∂L/∂θ vs finite differences',
            )
            return {
              ...r,
              reason: r.reason ?? `stores ${formatBytes(tape.byteLength)} of activations (T·M(M−1)/2·2N floats)`,
            }
          },
        }
      },
    },
    {
      name: 'plain TS (reversible, no stored activations)',
      family: 'plain TS',
      kind: 'gradient',
      setup(c) {
        const out = {
          x: new Float64Array(c.x.length),
          gx: new Float64Array(c.x.length),
          theta: new Float64Array(c.theta.length),
        }
        return {
          run: () => void unitaryRnnGradientReversible(c.x, c.M, c.N, c.T, c.theta, c.c, out),
          check: () => {
            const r = checkClose(
              unitaryRnnGradientReversible(c.x, c.M, c.N, c.T, c.theta, c.c, out),
              c.gradient(),
              1e-8,
              '∂L/∂θ',
            )
            return {
              ...r,
              reason:
                r.reason ??
                `no stored activations (working memory x, x̄, θ̄: ${formatBytes((2 * c.x.length + c.theta.length) * 8)})`,
            }
          },
        }
      },
    },
  ],
}
