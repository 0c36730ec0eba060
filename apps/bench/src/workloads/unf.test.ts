import { beforeAll, describe, expect, it } from 'vitest'
import { isNotApplicable, type PreparedRow } from '../harness/types.js'
import { unfWorkload, warmUpBudget } from './unf.js'

describe('the unf workload', () => {
  const cases = unfWorkload.cases({ full: false })
  beforeAll(() => {
    warmUpBudget.ms = 0
  }) // only the checks here, no timing
  it.each(
    cases
      .filter((c) => !c.label.startsWith('GMM d=10') && !c.label.startsWith('MLP'))
      .map((c) => [c.label, c] as const),
  )('%s: the UNF rows agree with the plain objective and finite differences', async (_, spec) => {
    const c = spec.make()
    for (const row of unfWorkload.rows) {
      const prepared = await row.setup(c)
      expect(isNotApplicable(prepared)).toBe(false)
      const check = await (prepared as PreparedRow).check()
      expect(check.ok, `${row.name}: error ${check.error}`).toBe(true)
    }
  })
})
