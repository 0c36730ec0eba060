import type { Dual, Real } from '@tenet/dual'
import { blackBox } from '../harness/black-box.js'
import { lazy } from '../harness/check.js'
import type { CaseOptions, CaseSpec, Workload } from '../harness/types.js'
import { finiteDifferenceGradient } from '../math/finite-difference.js'
import { createRng } from '../math/prng.js'
import {
  dotDual,
  dotPlain,
  mlpDual,
  mlpParameterCount,
  mlpPlain,
  mlpWorkspace,
  particlesDual,
  particlesPlain,
  rotateDual,
  rotatePlain,
  scalarMulDual,
  scalarMulPlain,
  sumMatVecDual,
  sumMatVecPlain,
  type MlpData,
  type Table1Id,
  type Table1Sizes,
} from '../objectives/table1.js'

/** One workload of seed 003's Table 1: a flat input, its plain objective and its dual-API version. */
export interface DualCase {
  id: Table1Id
  sizes: Table1Sizes
  x: Float64Array
  /** the plain-TS objective (the baseline) */
  objective: (x: Float64Array) => number
  /** the same function against the dual-numbers API */
  dual: (d: Dual, x: Real[]) => Real
  /** the reference gradient: exact where it is simple, else central finite differences */
  gradient: () => Float64Array
  mlp?: MlpData
}

const sink = new Float64Array(1)

/**
 * `() => { sink[0] += f(x) }` as code of its own per case: the call of `f` then has feedback for this
 * case only and V8 may inline it, as in a program that calls one objective. (A closure shared by all
 * cases calls six objectives through one site, which adds a call of a few ns: most of the cost of
 * the 4 ns scalar multiplication.) Every row of this family is measured the same way.
 */
export function ownRun<X>(f: (x: X) => number, x: X): () => void {
  // (x read through the harness's black box, as the case's inputs are: bound as a parameter of the
  // closure, V8 folded it into the optimised code as a constant; see harness/black-box.ts)
  return new Function('f', 'a', 'sink', "'use strict'; return () => { sink[0] += f(a.x) }")(
    f,
    blackBox({ x }),
    sink,
  ) as () => void
}

/** `() => { into(out, x); sink[0] += out[0] }` as code of its own per row and case (see `ownRun`). */
export function ownGradientRun(
  into: (out: Float64Array, x: Float64Array) => void,
  out: Float64Array,
  x: Float64Array,
): () => void {
  return new Function('into', 'out', 'a', 'sink', "'use strict'; return () => { into(out, a.x); sink[0] += out[0] }")(
    into,
    out,
    blackBox({ x }),
    sink,
  ) as () => void
}

function make(
  id: Table1Id,
  sizes: Table1Sizes,
  x: Float64Array,
  objective: (x: Float64Array) => number,
  dual: (d: Dual, x: Real[]) => Real,
  exact?: () => Float64Array,
  mlp?: MlpData,
): DualCase {
  return {
    id,
    sizes,
    x,
    objective,
    dual,
    gradient: lazy(exact ?? (() => finiteDifferenceGradient(objective, x.slice()))),
    ...(mlp ? { mlp } : {}),
  }
}

function normal(n: number, seed: number, scale = 1): Float64Array {
  const rng = createRng(seed)
  return Float64Array.from({ length: n }, () => scale * rng.normal())
}

/** The six cases (sizes as in the paper's benchmark where it gives them). */
export function table1Cases(o: CaseOptions): CaseSpec<DualCase>[] {
  const dotN = o.full ? 10_000 : 1000
  const matN = o.full ? 300 : 100
  const rotN = 100
  const layers = [8, 32, 32, 4],
    batch = 8
  return [
    {
      label: 'scalar-mul',
      params: { inputs: 2 },
      make: () => {
        const x = Float64Array.of(3, 4)
        return make('scalar-mul', { n: 1 }, x, scalarMulPlain, scalarMulDual, () => Float64Array.of(x[1]!, x[0]!))
      },
    },
    {
      label: `dot n=${dotN}`,
      params: { n: dotN, inputs: 2 * dotN },
      make: () => {
        const x = normal(2 * dotN, 31)
        return make(
          'dot',
          { n: dotN },
          x,
          (v) => dotPlain(v, dotN),
          (d, v) => dotDual(d, v, dotN),
          () => Float64Array.from(x, (_, i) => x[i < dotN ? i + dotN : i - dotN]!),
        )
      },
    },
    {
      label: `sum-mat-vec ${matN}×${matN}`,
      params: { n: matN, inputs: matN * matN + matN },
      make: () => {
        const x = normal(matN * matN + matN, 32)
        const exact = () => {
          const g = new Float64Array(x.length),
            v = matN * matN
          for (let i = 0; i < matN; i++)
            for (let j = 0; j < matN; j++) {
              g[i * matN + j] = x[v + j]!
              g[v + j] += x[i * matN + j]!
            }
          return g
        }
        return make(
          'sum-mat-vec',
          { n: matN },
          x,
          (v) => sumMatVecPlain(v, matN),
          (d, v) => sumMatVecDual(d, v, matN),
          exact,
        )
      },
    },
    {
      label: `rotate_vec_by_quat ×${rotN}`,
      params: { n: rotN, inputs: 7 * rotN },
      make: () =>
        make(
          'rotate-vec-by-quat',
          { n: rotN },
          normal(7 * rotN, 33),
          (v) => rotatePlain(v, rotN),
          (d, v) => rotateDual(d, v, rotN),
        ),
    },
    {
      label: `neural ${layers.join('-')} batch ${batch}`,
      params: { parameters: mlpParameterCount(layers), batch },
      make: () => {
        const data: MlpData = {
          layers,
          batch,
          inputs: normal(batch * layers[0]!, 34),
          targets: normal(batch * layers[layers.length - 1]!, 35),
        }
        const ws = mlpWorkspace(layers)
        return make(
          'neural',
          { n: mlpParameterCount(layers), layers, batch },
          normal(mlpParameterCount(layers), 36, 0.3),
          (v) => mlpPlain(v, data, ws),
          (d, v) => mlpDual(d, v, data),
          undefined,
          data,
        )
      },
    },
    {
      label: 'particles 4×1000 steps',
      params: { particles: 4, steps: 1000 },
      make: () => {
        const x = Float64Array.from({ length: 16 }, (_, i) => [0.5 * (1 + (i >> 2)), 0.1, 1, 1][i & 3]!)
        return make(
          'particles',
          { n: 4, steps: 1000 },
          x,
          (v) => particlesPlain(v, 4, 1000),
          (d, v) => particlesDual(d, v, 4, 1000),
        )
      },
    },
  ]
}

export const dualWorkload: Workload<DualCase> = {
  id: 'dual',
  title: 'Seed 003’s Table 1 (dual-numbers reverse AD)',
  description:
    'Smeding & Vákár’s benchmark functions — scalar multiplication, dot product, sum of a matrix–vector product, rotate_vec_by_quat (batched, loss ⟨c, rot(v, q)⟩), a small MLP (`neural`) and 4 particles over 1000 Euler steps — as plain-TS objectives (the baseline) and their gradients.',
  cases: table1Cases,
  baseline: {
    name: 'plain TS objective',
    setup: (c) => ({ run: ownRun(c.objective, c.x) }),
  },
  rows: [],
}
