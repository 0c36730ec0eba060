/**
 * A Tenet step re-entered from its host function with other
 * state lengths, two levels deep, and with an inner run that fails.
 */
import { describe, expect, it } from 'vitest'
import { createRegistry, parse } from '@tenet/ir'
import { compileModule, interpreterBackend } from '@tenet/reversible'
import { cpuBackend } from '@tenet/backend-cpu'
import { wasmBackend } from '@tenet/backend-wasm'
import { checkpointedGradient, type ArrayStep, type GradientScheduleName } from './index.js'
import { tenetStep } from './tenet-step.js'

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
  const r = checkpointedGradient(step, s0, 5, { schedule, seed, budget: schedule === 'knill' ? 4 : 2, k: 2 })
  return [Array.from(r.final), Array.from(r.gradient)]
}
const outcome = (f: () => unknown) => {
  try {
    return { value: f() }
  } catch (e) {
    return { error: (e as Error).message }
  }
}

describe.each([
  ['cpu', true],
  ['cpu', false],
  ['wasm', true],
  ['wasm', false],
  ['interpreter', true],
] as const)('a Tenet step re-entered with other lengths on %s (checks %s)', (backend, checks) => {
  for (const schedule of schedules)
    it(`${schedule}: two levels deep, other lengths, an inner failure: each as alone`, () => {
      let depth = 0
      let plan: Array<(() => void) | undefined> = []
      const h = (d: number) => {
        const k = d > 0 ? plan[depth] : undefined
        if (k) {
          plan[depth] = undefined
          depth++
          try {
            k()
          } finally {
            depth--
          }
        }
        return d > 0 ? 1.25 : 1
      }
      const m = compileModule(parse({ text, name: 'r' }, [h]), { registry: registry(), backend, checks })
      const step = tenetStep(m.step!, [1])
      const a = Float64Array.of(0.3, -0.2, 0.5, 0.1),
        b = Float64Array.of(-0.4, 0.6, 0.2),
        c = Float64Array.of(0.7, 0.1, -0.3, 0.2, 0.9, -0.5)
      const seedA = Float64Array.of(1, 0.5, -1, 2),
        seedB = Float64Array.of(-2, 1, 0.25),
        seedC = Float64Array.of(1, 1, 1, -1, 0.5, 2)
      const pa = run(step, schedule, a, seedA),
        pb = run(step, schedule, b, seedB),
        pc = run(step, schedule, c, seedC)
      const got: Record<string, unknown> = {}
      // level 1: b (3 elements), from which level 2: c (6 elements), then a failing run (seed of the wrong length)
      plan = [
        () => {
          got.b = outcome(() => run(step, schedule, b, seedB))
        },
        () => {
          got.c = outcome(() => run(step, schedule, c, seedC))
          got.bad = outcome(() => run(step, schedule, c, seedB))
        },
      ]
      const outer = run(step, schedule, a, seedA)
      expect(got.b).toEqual({ value: pb })
      expect(got.c).toEqual({ value: pc })
      expect(got.bad).toHaveProperty('error')
      expect(outer).toEqual(pa)
      expect(run(step, schedule, a, seedA)).toEqual(pa)
      expect(run(step, schedule, c, seedC)).toEqual(pc)
    })
})

describe.each([
  ['cpu', true],
  ['cpu', false],
  ['wasm', true],
  ['wasm', false],
  ['interpreter', true],
] as const)('a Tenet step whose re-entered run fails part-way on %s (checks %s)', (backend, checks) => {
  for (const schedule of schedules)
    for (const k of [1, 7, 20, 33])
      it(`${schedule}: the inner run throws at host call ${k}; the outer and later runs are right`, () => {
        let armed: (() => void) | undefined
        let countdown = -1
        const h = (d: number) => {
          if (d > 0 && countdown > 0 && --countdown === 0) throw new Error('boom')
          if (d > 0 && armed) {
            const a = armed
            armed = undefined
            a()
          }
          return d > 0 ? 1.25 : 1
        }
        const m = compileModule(parse({ text, name: 'r' }, [h]), { registry: registry(), backend, checks })
        const step = tenetStep(m.step!, [1])
        const a = Float64Array.of(0.3, -0.2, 0.5, 0.1),
          b = Float64Array.of(-0.4, 0.6, 0.2)
        const seedA = Float64Array.of(1, 0.5, -1, 2),
          seedB = Float64Array.of(-2, 1, 0.25)
        const pa = run(step, schedule, a, seedA),
          pb = run(step, schedule, b, seedB)
        let inner: unknown
        armed = () => {
          countdown = k
          inner = outcome(() => run(step, schedule, b, seedB))
          countdown = -1
        }
        const outer = run(step, schedule, a, seedA)
        expect(inner === undefined || 'error' in (inner as object) || (inner as { value: unknown }).value).toBeTruthy()
        if (inner && 'value' in (inner as object)) expect(inner).toEqual({ value: pb })
        expect(outer).toEqual(pa)
        expect(run(step, schedule, a, seedA)).toEqual(pa)
        expect(run(step, schedule, b, seedB)).toEqual(pb)
      })
})
