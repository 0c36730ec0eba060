import { describe, expect, it } from 'vitest'
import { binomialSchedule } from './binomial.js'
import { checkSchedule } from './check.js'
import {
  binomial,
  eta,
  revolveExtraSteps,
  revolveExtraStepsDP,
  revolveRepetitions,
  revolveSplit,
} from './closed-forms.js'
import { costOf } from './cost.js'
import { recomputeAllSchedule, storeAllSchedule } from './simple.js'

describe('closed forms', () => {
  it('binomial and η(τ, δ) = C(τ+δ, δ)', () => {
    expect(binomial(5, 2)).toBe(10)
    expect(binomial(5, -1)).toBe(0)
    expect(binomial(5, 6)).toBe(0)
    expect(binomial(60, 30)).toBe(118264581564861424)
    expect(eta(3, 2)).toBe(10)
    expect(eta(0, 7)).toBe(1)
    for (let t = 0; t < 12; t++) for (let d = 0; d < 12; d++) expect(eta(t, d)).toBe(eta(d, t))
  })

  it("revolve's t(l, s) = r·l − C(s+r, r−1) equals the DP for every 1 ≤ s < l < 80", () => {
    for (let l = 2; l < 80; l++) {
      for (let s = 1; s < l; s++) {
        expect(revolveExtraSteps(l, s), `t(${l}, ${s})`).toBe(revolveExtraStepsDP(l, s))
      }
    }
  })

  it('t(l, 1) = l(l−1)/2, t(l, s ≥ l−1) = l − 1, t(1, s) = 0, and no snapshot at all is infinite', () => {
    for (let l = 1; l < 50; l++) {
      expect(revolveExtraSteps(l, 1)).toBe((l * (l - 1)) / 2)
      expect(revolveExtraSteps(l, l)).toBe(l - 1)
      expect(revolveExtraSteps(l, Math.max(1, l - 1))).toBe(l - 1)
    }
    expect(revolveExtraSteps(1, 3)).toBe(0)
    expect(revolveExtraSteps(5, 0)).toBe(Infinity)
    expect(revolveExtraStepsDP(5, 0)).toBe(Infinity)
  })

  it('the split minimises m + t(m, s) + t(l−m, s−1)', () => {
    for (let l = 2; l < 60; l++) {
      for (let s = 1; s < 8; s++) {
        const m = revolveSplit(l, s)
        expect(m + revolveExtraSteps(m, s) + revolveExtraSteps(l - m, s - 1)).toBe(revolveExtraSteps(l, s))
      }
    }
  })
})

/** How many times each step is evaluated by forward actions. */
function evaluations(l: number, s: number): number[] {
  const counts = new Array<number>(l + 1).fill(0)
  for (const a of binomialSchedule({ steps: l, snapshots: s })) if (a.kind === 'forward') counts[a.step]!++
  return counts
}

describe('binomialSchedule', () => {
  it('achieves t(l, s): forward count = t(l, s) + 1 (step l once, for the output), for every 1 ≤ s < l < 80', () => {
    for (let l = 2; l < 80; l++) {
      for (let s = 1; s < l; s++) {
        const report = checkSchedule(binomialSchedule({ steps: l, snapshots: s }), { gradient: true, final: [0] })
        expect(report.cost.forward - 1, `l=${l}, s=${s}`).toBe(revolveExtraSteps(l, s))
        expect(report.cost.adjoint).toBe(l)
        expect(report.cost.peakStates).toBeLessThanOrEqual(s + 2)
        // Recomputation beyond a single forward sweep:
        expect(report.cost.forward - l).toBe(revolveExtraSteps(l, s) + 1 - l)
      }
    }
  })

  it('never holds more than s snapshots', () => {
    for (const [l, s] of [
      [30, 3],
      [79, 5],
      [100, 10],
    ] as const) {
      let stored = 0
      let peak = 0
      for (const a of binomialSchedule({ steps: l, snapshots: s })) {
        if (a.kind === 'store') peak = Math.max(peak, ++stored)
        if (a.kind === 'free' && a.from === 'snapshot') stored--
      }
      expect(peak).toBeLessThanOrEqual(s)
      expect(stored).toBe(0)
    }
  })

  it('with l = η(r, s) steps no step is advanced more than r times (treeverse, seed 000 Fig. 1a)', () => {
    for (let s = 1; s <= 5; s++) {
      for (let r = 1; r <= 4; r++) {
        const l = eta(r, s)
        if (l < 2) continue
        expect(revolveRepetitions(l, s)).toBe(r)
        const counts = evaluations(l, s)
        expect(Math.max(...counts.slice(1, l))).toBeLessThanOrEqual(r)
      }
    }
  })

  it('runs long chains in flat generators (no call-stack depth proportional to T)', () => {
    expect(costOf(binomialSchedule({ steps: 30_000, snapshots: 30_000 })).forward).toBe(30_000)
    const c = costOf(binomialSchedule({ steps: 100_000, snapshots: 12 }))
    expect(c.forward).toBe(revolveExtraSteps(100_000, 12) + 1)
    expect(c.peakStates).toBeLessThanOrEqual(14)
  })

  it('with s ≥ l − 1 nothing is recomputed', () => {
    for (const l of [1, 2, 5, 20]) {
      expect(costOf(binomialSchedule({ steps: l, snapshots: l })).forward).toBe(l)
    }
  })
})

describe('store-all and recompute-all', () => {
  it('store-all: T forwards, T + 1 states, no snapshots', () => {
    for (const T of [1, 2, 10, 57]) {
      const report = checkSchedule(storeAllSchedule({ steps: T }), { gradient: true, final: [0] })
      expect(report.cost).toEqual({ forward: T, uncompute: 0, adjoint: T, stores: 0, restores: 0, peakStates: T + 1 })
    }
  })

  it('recompute-all: T(T−1)/2 + 1 forwards in 3 states, the same as binomial with one snapshot', () => {
    for (const T of [1, 2, 10, 57]) {
      const report = checkSchedule(recomputeAllSchedule({ steps: T }), { gradient: true, final: [0] })
      expect(report.cost.forward).toBe((T * (T - 1)) / 2 + 1)
      expect(report.cost.forward).toBe(costOf(binomialSchedule({ steps: T, snapshots: 1 })).forward)
      expect(report.cost.peakStates).toBe(Math.min(T + 1, 3))
    }
  })
})
