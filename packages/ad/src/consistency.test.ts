import { describe, expect, it } from 'vitest'
import { consistencySource } from './examples/consistency.js'
import { learnByConsistency } from './consistency.js'
import { gradient } from './gradient.js'
import { tag } from './test-util.js'

describe('learn by consistency (seed 002, Algorithm 2)', () => {
  for (const backend of ['interpreter', 'cpu']) {
    const m = tag({ backend })(consistencySource)

    it(`${backend}: f2 reaches out = 1 to machine precision within 200 steps`, () => {
      const r = learnByConsistency(m.f2!, [0, 0.3, 1.6], {
        input: { 0: 0, 1: 0.3 },
        target: { 0: 1 },
        maxSteps: 200,
        tolerance: 1e-12,
      })
      expect(r.converged).toBe(true)
      expect(r.steps).toBeLessThan(100)
      expect(Math.abs((r.outputs[0] as number) - 1)).toBeLessThanOrEqual(1e-12)
      // the fixed point: e^(0.3 + y) − e^0.3 = 1
      const y = r.parameters[2] as number
      expect(Math.abs(y - (Math.log(1 + Math.exp(0.3)) - 0.3))).toBeLessThan(1e-11)
      // and it keeps going to rounding: 200 steps leave out at 1 within a few ulps
      const full = learnByConsistency(m.f2!, [0, 0.3, 1.6], {
        input: { 0: 0, 1: 0.3 },
        target: { 0: 1 },
        maxSteps: 200,
      })
      expect(Math.abs((full.outputs[0] as number) - 1)).toBeLessThanOrEqual(4e-16)
      // the distance shrinks by about e^-0.3 ≈ 0.74 per step near the fixed point
      const d = r.distance
      const ratio = d[d.length - 1]! / d[d.length - 11]!
      expect(ratio ** (1 / 10)).toBeGreaterThan(0.6)
      expect(ratio ** (1 / 10)).toBeLessThan(0.85)
    })

    it(`${backend}: f1 does not train — its loss is the same after every step`, () => {
      const r = learnByConsistency(m.f1!, [0, 0.3, 1.6], { input: { 0: 0, 1: 0.3 }, target: { 0: 1 }, maxSteps: 50 })
      expect(r.steps).toBe(50)
      expect(r.converged).toBe(false)
      for (const d of r.distance) expect(d).toBe(r.distance[0])
      expect(r.distance[0]).toBeCloseTo(Math.exp(1.9) - Math.exp(0.3) - 1, 12)
      expect(r.parameters[2]).toBeCloseTo(1.6, 13)
    })

    it(`${backend}: a discrete key is learnt in one step (no gradient exists)`, () => {
      const r = learnByConsistency(m.xor_key!, [0, 0x1234abcd, 99], {
        input: { 0: 0, 1: 0x1234abcd },
        target: { 0: 0x0f0f0f0f },
        tolerance: 0,
      })
      expect(r.steps).toBe(1)
      expect(r.outputs[0]).toBe(0x0f0f0f0f)
      expect(r.parameters[2]).toBe(0x1234abcd ^ 0x0f0f0f0f)
    })
  }

  it('an i32 program has no gradient to descend', () => {
    const m = tag()(consistencySource)
    expect(() => gradient(m.xor_key!, [0, 1, 2], { loss: 0 })).toThrow()
  })

  it('checks its arguments', () => {
    const m = tag()(consistencySource)
    expect(() => learnByConsistency(m.f2!, [0, 0.3], { input: {}, target: { 0: 1 } })).toThrow(/takes 3 arguments/)
    expect(() => learnByConsistency(m.f2!, [0, 0.3, 1.6], { input: { 5: 1 }, target: { 0: 1 } })).toThrow(/argument 5/)
    expect(() => learnByConsistency(m.f2!, [0, 0.3, 1.6], { input: { 1: 0.3 } } as never)).toThrow(/needs `target`/)
    expect(() => learnByConsistency(m.f2!, [0, 0.3, 1.6], { input: {}, target: { 0: 1 }, tolerance: -1 })).toThrow(
      /tolerance/,
    )
  })
})
