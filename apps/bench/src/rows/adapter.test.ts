import { describe, expect, it } from 'vitest'
import { isNotApplicable, type PreparedRow, type Row } from '../harness/types.js'
import { normGradientPlain, normPlain, normWorkload } from '../workloads/norm.js'
import { unitaryRnnWorkload } from '../workloads/unitary-rnn.js'
import { besselWorkload } from '../workloads/bessel.js'
import { adapterRows } from './adapter.js'

/** Sets a row up on a case and returns its check, after one timed-style run. */
async function checked<C>(row: Row<C>, c: C) {
  const p = await row.setup(c)
  expect(isNotApplicable(p), row.name).toBe(false)
  const prepared = p as PreparedRow
  await prepared.run()
  const r = await prepared.check()
  prepared.dispose?.()
  return r
}

describe('norm workload and the TF.js + Tenet adapter rows', () => {
  it('the hand gradient x/‖x‖ against central differences of the norm', () => {
    const c = normWorkload.cases({ full: false })[0]!.make()
    const g = normGradientPlain(c.x, new Float64Array(c.n))
    for (const i of [0, 17, 999]) {
      const h = 1e-6,
        up = c.x.slice(),
        dn = c.x.slice()
      up[i]! += h
      dn[i]! -= h
      expect(Math.abs(g[i]! - (normPlain(up) - normPlain(dn)) / (2 * h))).toBeLessThan(1e-8)
    }
  })

  it('every norm row (plain, Tenet, TF.js, adapter) passes its check at n = 10³ and reports TF.js memory', async () => {
    const c = normWorkload.cases({ full: false })[0]!.make()
    expect(c.n).toBe(1000)
    for (const row of [...normWorkload.rows, ...adapterRows.rows.norm!]) {
      const r = await checked(row, c)
      expect(r.ok, `${row.name}: ${r.reason}`).toBe(true)
      if (row.name.startsWith('TF.js')) expect(r.reason).toMatch(/TF\.js over one gradient: peak .* 1 tensor kept/)
    }
  })

  it('the adapter rows of bessel (one z and the batch) and unitary-rnn, and TF.js’s dense unitary-rnn row, pass their checks', async () => {
    const [one, batch] = besselWorkload.cases({ full: false }).map((s) => s.make())
    for (const c of [one!, batch!]) expect((await checked(adapterRows.rows.bessel![0]!, c)).ok).toBe(true)
    const u = unitaryRnnWorkload.cases({ full: false })[0]!.make()
    for (const row of adapterRows.rows['unitary-rnn']!) {
      const r = await checked(row, u)
      expect(r.ok, `${row.name}: ${r.reason}`).toBe(true)
    }
  })
})
