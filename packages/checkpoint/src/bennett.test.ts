import { describe, expect, it } from 'vitest'
import { bennettGradientSchedule, bennettSchedule } from './bennett.js'
import { checkSchedule } from './check.js'
import { bennettCost } from './closed-forms.js'
import { costOf } from './cost.js'
import { runReversible, type Chain } from './drivers.js'
import { invertSchedule, reversibleGradientSchedule } from './invert.js'

describe('bennettSchedule', () => {
  for (const k of [2, 3, 4, 10]) {
    for (const n of [2, 3, 4]) {
      it(`k=${k}, n=${n}: (2k−1)ⁿ steps, n(k−1)+2 peak states, ends with s₀ and s_T`, () => {
        const T = k ** n
        const schedule = bennettSchedule({ steps: T, k })
        const report = checkSchedule(schedule, { reversible: true, final: [0, T] })
        const cost = costOf(schedule)
        expect(cost).toEqual(report.cost)
        expect(cost.forward + cost.uncompute).toBe((2 * k - 1) ** n)
        expect(cost.forward + cost.uncompute).toBe(bennettCost(k, n).steps)
        expect(cost.peakStates).toBe(n * (k - 1) + 2)
        expect(cost.peakStates).toBe(bennettCost(k, n).peakStates)
        expect(cost.forward - cost.uncompute).toBe(1)
        expect(cost.adjoint + cost.stores + cost.restores).toBe(0)
      })
    }
  }

  it('without the top-level Q process: k(2k−1)ⁿ⁻¹ steps, the boundaries stay live', () => {
    for (const [k, n] of [
      [2, 3],
      [3, 3],
      [4, 2],
    ] as const) {
      const T = k ** n
      const schedule = bennettSchedule({ steps: T, k, uncomputeTop: false })
      const bounds = Array.from({ length: k + 1 }, (_, j) => (j * T) / k)
      const report = checkSchedule(schedule, { reversible: true, final: bounds })
      expect(report.cost.forward + report.cost.uncompute).toBe(k * (2 * k - 1) ** (n - 1))
      expect(report.cost.peakStates).toBe(n * (k - 1) + 2)
    }
  })

  it('is valid for every chain length, not only powers of k', () => {
    for (let T = 1; T <= 60; T++) {
      for (const k of [2, 3, 5]) {
        checkSchedule(bennettSchedule({ steps: T, k }), { reversible: true, final: [0, T] })
      }
    }
  })

  it('rejects bad arguments', () => {
    expect(() => bennettSchedule({ steps: 0, k: 2 })).toThrow(RangeError)
    expect(() => bennettSchedule({ steps: 8, k: 1 })).toThrow(RangeError)
    expect(() => bennettSchedule({ steps: 2.5, k: 2 })).toThrow(RangeError)
  })
})

describe('seed 000, Appendix A', () => {
  it('k = 4, n = 4: 2401 steps, 14 states', () => {
    expect(bennettCost(4, 4)).toEqual({ steps: 2401, peakStates: 14 })
    const cost = costOf(bennettSchedule({ steps: 256, k: 4 }))
    expect(cost.forward + cost.uncompute).toBe(2401)
    expect(cost.peakStates).toBe(14)
  })

  it('x ↦ 2x applied 256 times from 1.0 gives 2²⁵⁶ with only input and output left, and runs back', () => {
    let allocated = 0
    const chain: Chain<{ x: number }> = {
      allocState: () => {
        allocated++
        return { x: 0 }
      },
      forward: (_i, dst, src) => {
        dst.x += 2 * src.x
      },
      uncompute: (_i, dst, src) => {
        dst.x -= 2 * src.x
      },
    }
    const schedule = bennettSchedule({ steps: 256, k: 4 })
    const s0 = { x: 1 }
    const run = runReversible(chain, schedule, s0)
    expect([...run.states.keys()].sort((a, b) => a - b)).toEqual([0, 256])
    expect(run.states.get(0)).toBe(s0)
    expect(s0.x).toBe(1)
    expect(run.states.get(256)!.x).toBe(2 ** 256)
    expect(run.cost.forward + run.cost.uncompute).toBe(2401)
    expect(run.cost.peakStates).toBe(14)
    expect(run.cost.wallTimeMs).toBeGreaterThanOrEqual(0)
    expect(allocated).toBeLessThanOrEqual(13) // buffers are pooled: never more than peak − input
    // Backwards: the inverse schedule clears s_T again.
    const back = runReversible(chain, invertSchedule(schedule), run.states)
    expect([...back.states.keys()]).toEqual([0])
    expect(run.states.get(256)!.x).toBe(0)
    expect(back.cost.forward + back.cost.uncompute).toBe(2401)
    expect(back.cost.peakStates).toBe(14)
  })
})

describe('bennettGradientSchedule', () => {
  it('matches the generic inverse-with-adjoints construction, and reverses every step once', () => {
    for (const T of [1, 2, 7, 16, 27, 50]) {
      for (const k of [2, 3, 4]) {
        for (const uncomputeTop of [true, false]) {
          const lazy = [...bennettGradientSchedule({ steps: T, k, uncomputeTop })]
          const generic = [...reversibleGradientSchedule(bennettSchedule({ steps: T, k, uncomputeTop }))]
          expect(lazy).toEqual(generic)
          const report = checkSchedule(bennettGradientSchedule({ steps: T, k, uncomputeTop }), {
            reversible: true,
            gradient: true,
            final: [0],
          })
          expect(report.cost.adjoint).toBe(T)
          expect(report.cost.peakStates).toBe(costOf(bennettSchedule({ steps: T, k, uncomputeTop })).peakStates)
        }
      }
    }
  })

  it('for T = kⁿ costs 2(2k−1)ⁿ actions in all (T of them adjoints), or 2k(2k−1)ⁿ⁻¹ keeping the top', () => {
    const k = 3
    const n = 3
    const T = k ** n
    const c = costOf(bennettGradientSchedule({ steps: T, k }))
    expect(c.forward + c.uncompute + c.adjoint).toBe(2 * (2 * k - 1) ** n)
    const d = costOf(bennettGradientSchedule({ steps: T, k, uncomputeTop: false }))
    expect(d.forward + d.uncompute + d.adjoint).toBe(2 * k * (2 * k - 1) ** (n - 1))
    expect(d.peakStates).toBe(n * (k - 1) + 2)
  })
})
