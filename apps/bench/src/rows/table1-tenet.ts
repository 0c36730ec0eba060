/**
 * Tenet (reversible) rows for seed 003's Table 1 where the function is naturally reversible: the
 * products accumulate into the loss (`s += …`), and rotate_vec_by_quat computes its three
 * scalars in a `routine` that `~routine` uncomputes. (The particles' Euler step reads the velocity
 * it updates, and the MLP stores activations: not written in Tenet here.)
 */
import { grad } from 'tenet'
import { checkClose, TOLERANCE } from '../harness/check.js'
import { defineRowFamily } from '../harness/registry.js'
import type { NotApplicable, PreparedRow } from '../harness/types.js'
import { ROT_COTANGENT } from '../objectives/table1.js'
import { compile, fn } from '../tenet/compile.js'
import type { DualCase } from '../workloads/dual.js'
import { TENET_ROW } from './tenet.js'

const lit = (v: number) => (Number.isInteger(v) ? `${v}.0` : `${v}`).replace(/^(-?)(\d)/, '$1$2')

const SOURCES: Partial<Record<DualCase['id'], string>> = {
  'scalar-mul': `fn f(s: f64, x: f64[]) { s += x[0] * x[1] }`,
  dot: `fn f(s: f64, x: f64[], n: i32) { for i in 0..n { s += x[i] * x[n + i] } }`,
  'sum-mat-vec': `fn f(s: f64, x: f64[], n: i32) { for i in 0..n { for j in 0..n { s += x[i * n + j] * x[n * n + j] } } }`,
  'rotate-vec-by-quat': `
    fn f(s: f64, x: f64[], n: i32) {
      for k in 0..n {
        routine {
          a <- 0.0
          b <- 0.0
          c <- 0.0
          a += 2.0 * (x[7*k+3] * x[7*k] + x[7*k+4] * x[7*k+1] + x[7*k+5] * x[7*k+2])
          b += x[7*k+6] * x[7*k+6] - (x[7*k+3] * x[7*k+3] + x[7*k+4] * x[7*k+4] + x[7*k+5] * x[7*k+5])
          c += 2.0 * x[7*k+6]
        }
        s += ${lit(ROT_COTANGENT[0])} * (a * x[7*k+3] + b * x[7*k] + c * (x[7*k+4] * x[7*k+2] - x[7*k+5] * x[7*k+1]))
        s += ${lit(ROT_COTANGENT[1])} * (a * x[7*k+4] + b * x[7*k+1] + c * (x[7*k+5] * x[7*k] - x[7*k+3] * x[7*k+2]))
        s += ${lit(ROT_COTANGENT[2])} * (a * x[7*k+5] + b * x[7*k+2] + c * (x[7*k+3] * x[7*k+1] - x[7*k+4] * x[7*k]))
        ~routine
      }
    }`,
}

function tenetRow(c: DualCase): PreparedRow | NotApplicable {
  const source = SOURCES[c.id]
  if (!source)
    return {
      na:
        c.id === 'particles'
          ? 'not written in Tenet: the Euler step reads the velocity it updates (v += dt·(−0.5p − 0.2v))'
          : 'not written in Tenet: the MLP would store its activations in arrays',
    }
  const g = grad(fn(compile(source), 'f'), { loss: 0 })
  const x = c.x.slice()
  const args = c.id === 'scalar-mul' ? [0, x] : [0, x, c.sizes.n]
  return {
    run: () => g.run(...args),
    check: () => {
      g.run(...args)
      return checkClose(g.buffers[1]!, c.gradient(), TOLERANCE.f64, 'gradient')
    },
  }
}

export const table1TenetRows = defineRowFamily({
  family: 'Tenet',
  rows: { dual: [{ name: TENET_ROW, kind: 'gradient', setup: tenetRow }] },
})
