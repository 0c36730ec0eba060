/** What the umbrella re-exports: the papers' programs under their names, and the checkpoint API its README promises. */
import { describe, expect, it } from 'vitest'
import { ummSource as adUmmSource, unitarySource as adUnitarySource } from '@tenet/ad'
import {
  bennettGradientSchedule,
  bennettSchedule,
  checkpointedGradient,
  costOf,
  examples,
  gradientSchedule,
  invertSchedule,
  knillGradientSchedule,
  reversibleGradientSchedule,
  type ArrayStep,
  type CheckpointedGradientOptions,
  type Schedule,
} from './index.js'

describe('examples', () => {
  it("ummSource is @tenet/ad's i_umm; unitarySource is the same text (not ad's, which adds umm_loss)", () => {
    expect(examples.ummSource).toBe(adUmmSource)
    expect(examples.unitarySource).toBe(examples.ummSource)
    expect(examples.ummSource).not.toContain('umm_loss')
    expect(adUnitarySource).toContain('fn umm_loss')
  })
})

describe('checkpointing', () => {
  // s_i = 2 s_{i-1} elementwise: ∂s_T/∂s_0 = 2^T
  const doubling: ArrayStep = {
    forward: (dst, src) => {
      for (let j = 0; j < src.length; j++) dst[j]! += 2 * src[j]!
    },
    inverse: (dst, src) => {
      for (let j = 0; j < src.length; j++) dst[j]! -= 2 * src[j]!
    },
    vjp: (srcBar, _src, dstBar) => {
      for (let j = 0; j < dstBar.length; j++) srcBar[j]! += 2 * dstBar[j]!
    },
  }

  it('checkpointedGradient with an ArrayStep, on every schedule', () => {
    for (const schedule of ['bennett', 'knill', 'binomial', 'store-all', 'recompute-all'] as const) {
      const options: CheckpointedGradientOptions = { schedule, seed: Float64Array.of(1, 0.5) }
      const r = checkpointedGradient(doubling, Float64Array.of(1, 3), 8, options)
      expect(Array.from(r.final)).toEqual([256, 768])
      expect(Array.from(r.gradient)).toEqual([256, 128])
      expect(costOf(gradientSchedule(8, { schedule })).adjoint).toBe(8)
    }
  })

  it('the gradient schedules and invertSchedule', () => {
    const s: Schedule = bennettSchedule({ steps: 9, k: 3 })
    const back = costOf(invertSchedule(s))
    expect(back.uncompute).toBe(costOf(s).forward)
    for (const g of [
      bennettGradientSchedule({ steps: 9, k: 3 }),
      knillGradientSchedule({ steps: 9, pebbles: 5 }),
      reversibleGradientSchedule(s),
    ]) {
      expect(costOf(g).adjoint).toBe(9)
    }
  })
})
