/**
 * ht's "simple" variant (points matched to vertices, no `us`: 26 Jacobian columns), which the
 * recorded sessions do not cover: its Jacobian against central differences of its objective,
 * on the recorded hand model.
 */
import { describe, expect, it } from 'vitest'
import { haveData } from '../data.js'
import { recorded } from '../replay.js'
import { ht } from './ht.js'

describe.skipIf(!haveData)('ht, simple variant', () => {
  it('Jacobian columns match central differences of the residuals', () => {
    const message = recorded('ht').find((l) => l.message.function === 'objective')!.message
    const input = structuredClone(message.input) as {
      theta: number[]
      us: number[][]
      data: { correspondences: number[]; points: number[][] }
    }
    const c = 40
    input.us = []
    input.data.correspondences = input.data.correspondences.slice(0, c).map((k) => k % 544)
    input.data.points = input.data.points.slice(0, c)
    const residuals = (theta: number[]): number[] => {
      const p = ht.objective!({ ...input, theta })
      p.run()
      return p.output() as number[]
    }
    const j = ht.jacobian!(input)
    j.run()
    const J = j.output() as number[][]
    expect(J).toHaveLength(3 * c)
    expect(J[0]).toHaveLength(26)
    const h = 1e-6
    let worst = 0
    for (let col = 0; col < 26; col++) {
      const tp = input.theta.slice(),
        tm = input.theta.slice()
      tp[col]! += h
      tm[col]! -= h
      const rp = residuals(tp),
        rm = residuals(tm)
      for (let r = 0; r < 3 * c; r++) worst = Math.max(worst, Math.abs(J[r]![col]! - (rp[r]! - rm[r]!) / (2 * h)))
    }
    expect(worst).toBeLessThan(1e-6)
  }, 60_000)
})
