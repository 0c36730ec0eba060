/**
 * Seed 000 Appendix E in TensorFlow.js: the gradient of ‖x‖ by TF.js's own `tf.grad(tf.norm)`
 * against the same gradient with Tenet's adjoint plugged in through `@tenet/adapter-tfjs`, at
 * n = 10³ … 10⁶, time and TF.js memory for both in one run; the plain-TS hand gradient x/‖x‖ is
 * the floor. The TF.js rows are the row family `src/rows/adapter.ts`.
 */
import { checkClose, lazy, TOLERANCE } from '../harness/check.js'
import type { CaseSpec, Workload } from '../harness/types.js'
import { createRng } from '../math/prng.js'

export interface NormCase {
  n: number
  x: Float64Array
  /** x/‖x‖ in f64 */
  gradient: () => Float64Array
}

/** ‖x‖ in plain TS. */
export function normPlain(x: Float64Array): number {
  let s = 0
  for (let i = 0; i < x.length; i++) s += x[i]! * x[i]!
  return Math.sqrt(s)
}

/** The hand-written gradient x/‖x‖ into `out`. */
export function normGradientPlain(x: Float64Array, out: Float64Array): Float64Array {
  const r = 1 / normPlain(x)
  for (let i = 0; i < x.length; i++) out[i] = x[i]! * r
  return out
}

/** Timed results are added here, so their work is never dead code. */
const sink = new Float64Array(1)

export const normWorkload: Workload<NormCase> = {
  id: 'norm',
  title: 'Norm gradient inside TF.js (seed 000 Appendix E): tf.grad(tf.norm) vs the Tenet adjoint through the adapter',
  description:
    'The gradient of ‖x‖ at n = 10³ … 10⁶: TF.js’s own `tf.grad(x => tf.norm(x))` against `tf.grad` of the same norm written in Tenet and plugged into TF.js with `tfOp` (its gradient is Tenet’s generated adjoint, through `tf.customGrad`); the plain-TS hand gradient x/‖x‖ is the floor. TF.js rows report TF.js’s memory over one gradient (`tf.profile`: peak bytes, new tensors) in the status.',
  cases: (): CaseSpec<NormCase>[] =>
    [1e3, 1e4, 1e5, 1e6].map((n) => ({
      label: `n=${n.toExponential(0).replace('e+', 'e')}`,
      params: { n },
      make: () => {
        const rng = createRng(n + 17)
        const x = Float64Array.from({ length: n }, rng.normal)
        return { n, x, gradient: lazy(() => normGradientPlain(x, new Float64Array(n))) }
      },
    })),
  baseline: {
    name: 'plain TS objective',
    setup: (c) => ({ run: () => void (sink[0] += normPlain(c.x)) }),
  },
  rows: [
    {
      name: 'plain TS',
      family: 'plain TS',
      kind: 'gradient',
      setup(c) {
        const out = new Float64Array(c.n)
        return {
          run: () => void normGradientPlain(c.x, out),
          check: () => checkClose(normGradientPlain(c.x, out), c.gradient(), TOLERANCE.f64, 'x/‖x‖'),
        }
      },
    },
  ],
}
