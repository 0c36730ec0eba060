import { describe, expect, it } from 'vitest'
import { checkpointWorkload } from './checkpoint.js'
import type { PreparedRow } from '../harness/types.js'

describe('checkpoint workload', () => {
  it('every schedule row passes its gradient check on a short chain', async () => {
    const [spec] = checkpointWorkload.cases({ full: false })
    // a 60-step chain; the reference is the transposed (symmetric) stencil applied 60 times
    const c = { ...spec!.make(), steps: 60 }
    const n = c.cells
    let reference = c.seed.slice()
    for (let t = 0; t < 60; t++) {
      const next = new Float64Array(n)
      for (let i = 0; i < n; i++)
        next[i] =
          reference[i]! + c.coefficient * (reference[(i + 1) % n]! + reference[(i + n - 1) % n]! - 2 * reference[i]!)
      reference = next
    }
    c.gradient = () => reference
    for (const row of checkpointWorkload.rows) {
      const prepared = (await row.setup(c)) as PreparedRow
      const result = await prepared.check()
      expect(result.ok, `${row.name}: ${result.reason}`).toBe(true)
    }
  })
})
