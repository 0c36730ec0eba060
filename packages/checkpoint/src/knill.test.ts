import { describe, expect, it } from 'vitest'
import { bennettSchedule } from './bennett.js'
import { checkSchedule } from './check.js'
import { costOf } from './cost.js'
import { reversibleGradientSchedule } from './invert.js'
import { knillCost, knillGradientSchedule, knillSchedule } from './knill.js'

/**
 * Independent brute force: breadth-first search over pebble configurations (bit j−1 set =
 * pebble on node j, node 0 always pebbled). A move toggles node j when node j−1 is pebbled;
 * at most s pebbles at once. Returns the fewest moves from no pebbles to a pebble on n alone.
 */
function pebbleBfs(n: number, s: number): number {
  const goal = 1 << (n - 1)
  const dist = new Int32Array(1 << n).fill(-1)
  const popcount = (x: number): number => {
    let c = 0
    for (let y = x; y; y &= y - 1) c++
    return c
  }
  dist[0] = 0
  let frontier = [0]
  while (frontier.length > 0) {
    const next: number[] = []
    for (const c of frontier) {
      if (c === goal) return dist[c]!
      const count = popcount(c)
      for (let j = 1; j <= n; j++) {
        const bit = 1 << (j - 1)
        const prevPebbled = j === 1 || (c & (1 << (j - 2))) !== 0
        if (!prevPebbled) continue
        if (!(c & bit) && count >= s) continue
        const d = c ^ bit
        if (dist[d] === -1) {
          dist[d] = dist[c]! + 1
          next.push(d)
        }
      }
    }
    frontier = next
  }
  return Infinity
}

describe('knillCost', () => {
  it('agrees with a brute-force search over pebble configurations for n ≤ 16', () => {
    for (let n = 1; n <= 16; n++) {
      const maxS = n <= 10 ? n + 1 : 6
      for (let s = 1; s <= maxS; s++) {
        expect(knillCost(n, s), `F(${n}, ${s})`).toBe(pebbleBfs(n, s))
      }
    }
  })

  it('is Infinity exactly where n > 2^(s−1)', () => {
    for (let s = 1; s <= 6; s++) {
      const reach = 2 ** (s - 1)
      expect(knillCost(reach, s)).toBeLessThan(Infinity)
      expect(knillCost(reach + 1, s)).toBe(Infinity)
    }
    expect(knillCost(3, 0)).toBe(Infinity)
  })

  it('with enough pebbles costs 2n − 1; at the reach limit it never loses to Bennett k = 2', () => {
    for (let n = 1; n <= 20; n++) expect(knillCost(n, n + 3)).toBe(2 * n - 1)
    for (let s = 1; s <= 9; s++) {
      // T = 2^(s−1): Bennett k = 2 with the same s + 1 states takes 3^(s−1) steps.
      const T = 2 ** (s - 1)
      const b = costOf(bennettSchedule({ steps: T, k: 2 }))
      expect(b.peakStates).toBe(s + 1)
      expect(b.forward + b.uncompute).toBe(3 ** (s - 1))
      expect(knillCost(T, s)).toBeLessThanOrEqual(3 ** (s - 1))
    }
    // Equal up to s = 3; from s = 4 on Knill lets the first sector use all s pebbles.
    expect(knillCost(4, 3)).toBe(9)
    expect(knillCost(8, 4)).toBe(25) // F(4,4) + 2·F(4,3) = 7 + 18, Bennett: 27
  })
})

describe('knillSchedule', () => {
  it('achieves F(T, s) within s pebbles and leaves only s₀ and s_T', () => {
    for (let T = 1; T <= 40; T++) {
      for (let s = 1; s <= 8; s++) {
        if (T > 2 ** (s - 1)) continue
        const report = checkSchedule(knillSchedule({ steps: T, pebbles: s }), { reversible: true, final: [0, T] })
        expect(report.cost.forward + report.cost.uncompute).toBe(knillCost(T, s))
        expect(report.cost.peakStates).toBeLessThanOrEqual(s + 1)
      }
    }
  })

  it('beats Bennett for the same memory when T is not a power of 2', () => {
    const T = 100
    const s = 8 // Bennett k = 2 needs ⌈log₂100⌉ + 2 = 9 states, i.e. 8 pebbles
    const bennett = costOf(bennettSchedule({ steps: T, k: 2 }))
    expect(bennett.peakStates).toBeLessThanOrEqual(s + 1)
    const knill = costOf(knillSchedule({ steps: T, pebbles: s }))
    expect(knill.forward + knill.uncompute).toBeLessThan(bennett.forward + bennett.uncompute)
  })

  it('handles long chains and generous budgets without deep recursion or a cubic table', () => {
    const t0 = performance.now()
    const c = costOf(knillSchedule({ steps: 5000, pebbles: 6000 }))
    expect(c).toMatchObject({ forward: 5000, uncompute: 4999, peakStates: 5001 })
    const g = costOf(knillGradientSchedule({ steps: 3000, pebbles: 13 }))
    expect(g.adjoint).toBe(3000)
    expect(g.forward + g.uncompute + g.adjoint).toBe(2 * knillCost(3000, 13))
    expect(performance.now() - t0).toBeLessThan(20_000)
  })

  it('refuses a budget that cannot reach T', () => {
    expect(() => knillSchedule({ steps: 9, pebbles: 4 })).toThrow(RangeError)
  })

  it('gradient schedule: the lazy one equals the generic construction and stays in budget', () => {
    for (const [T, s] of [
      [1, 1],
      [5, 4],
      [16, 5],
      [37, 7],
      [64, 9],
    ] as const) {
      const lazy = [...knillGradientSchedule({ steps: T, pebbles: s })]
      expect(lazy).toEqual([...reversibleGradientSchedule(knillSchedule({ steps: T, pebbles: s }))])
      const report = checkSchedule(knillGradientSchedule({ steps: T, pebbles: s }), {
        reversible: true,
        gradient: true,
        final: [0],
      })
      expect(report.cost.peakStates).toBeLessThanOrEqual(s + 1)
      expect(report.cost.forward + report.cost.uncompute + report.cost.adjoint).toBe(2 * knillCost(T, s))
    }
  })
})
