/**
 * Reentrancy of a Tenet step (`tenetStep`): a host function of the step program that runs a
 * checkpointed gradient with the same step object while a step, an inverse step or an adjoint of
 * the outer run is under way. Both runs give what they give one after the other, under every
 * schedule and on every backend (the step's recompute buffer was shared: the inner run's
 * recompute overwrote the outer's).
 */
import { describe, expect, it } from 'vitest'
import { createRegistry, parse } from '@tenet/ir'
import { compileModule, interpreterBackend } from '@tenet/reversible'
import { cpuBackend } from '@tenet/backend-cpu'
import { wasmBackend } from '@tenet/backend-wasm'
import { checkpointedGradient, type ArrayStep, type GradientScheduleName } from './index.js'
import { tenetStep } from './tenet-step.js'

// nonlinear, with an adjoint that reads dst (the second loop), and a host function h(d) that the
// forward step and the adjoint call
const text = `
fn step(dst: f64[], src: f64[], d: i32) {
  n: i32 <- len(src)
  for i in 0..n {
    dst[i] += src[i] * src[(i + 1) % n] * \${0}(d) + 0.5 * src[i]
  }
  for i in 1..n {
    dst[i] += dst[i - 1] * src[i] * \${0}(d)
  }
  n -> len(src)
}`
const registry = () =>
  createRegistry().registerBackend(cpuBackend).registerBackend(wasmBackend).registerBackend(interpreterBackend)

const schedules: GradientScheduleName[] = ['store-all', 'binomial', 'recompute-all', 'bennett', 'knill']

const run = (step: ArrayStep, schedule: GradientScheduleName, s0: Float64Array, seed: Float64Array) => {
  const r = checkpointedGradient(step, s0, 6, { schedule, seed, budget: schedule === 'knill' ? 4 : 2, k: 2 })
  return [Array.from(r.final), Array.from(r.gradient)]
}

describe.each([
  ['cpu', true],
  ['cpu', false],
  ['wasm', true],
  ['wasm', false],
  ['interpreter', true],
] as const)('a Tenet step re-entered from its host function on %s (checks %s)', (backend, checks) => {
  for (const schedule of schedules)
    it(`${schedule}: the outer and the inner gradient are those of separate runs`, () => {
      let reenter: (() => void) | undefined
      let depth = 0
      const h = (d: number) => {
        if (d > 0 && reenter && depth === 0) {
          depth++
          try {
            reenter()
          } finally {
            depth--
          }
        }
        return d > 0 ? 1.25 : 1
      }
      const m = compileModule(parse({ text, name: 'r' }, [h]), { registry: registry(), backend, checks })
      const step = tenetStep(m.step!, [1])
      const a = Float64Array.of(0.3, -0.2, 0.5, 0.1),
        b = Float64Array.of(-0.4, 0.6, 0.2, -0.3)
      const seedA = Float64Array.of(1, 0.5, -1, 2),
        seedB = Float64Array.of(-2, 1, 0.25, 1)
      const plainOuter = run(step, schedule, a, seedA)
      const plainInner = run(step, schedule, b, seedB)
      const inner: unknown[] = []
      reenter = () => inner.push(run(step, schedule, b, seedB))
      const outer = run(step, schedule, a, seedA)
      reenter = undefined
      expect(inner.length).toBeGreaterThan(0)
      for (const x of inner) expect(x).toEqual(plainInner)
      expect(outer).toEqual(plainOuter)
      expect(run(step, schedule, a, seedA)).toEqual(plainOuter)
    })
})
