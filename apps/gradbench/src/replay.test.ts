/**
 * Every recorded message of `../shared/data/gradbench/*.jsonl`, replayed through the tool
 * process (`dist/main.js`), and every response checked against the reference response by
 * GradBench's rule (see check.ts).
 */
import { describe, expect, it } from 'vitest'
import { haveData } from './data.js'
import { recorded, replay } from './replay.js'

const EVALS = ['hello', 'llsq', 'lse', 'det', 'ode', 'gmm', 'lstm', 'kmeans', 'ba', 'ht', 'particle', 'saddle']

describe.skipIf(!haveData)('replaying GradBench’s recorded sessions', () => {
  for (const name of EVALS) {
    it(`${name}: every response matches the reference`, async () => {
      const { failures } = await replay(name)
      expect(failures).toEqual([])
      expect(recorded(name).some((l) => l.message.kind === 'evaluate')).toBe(true)
    }, 180_000)
  }
})
