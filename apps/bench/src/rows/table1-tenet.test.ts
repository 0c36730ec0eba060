import { grad as dualGrad } from '@tenet/dual'
import { grad } from 'tenet'
import { describe, expect, it } from 'vitest'
import type { PreparedRow } from '../harness/types.js'
import { compile, fn } from '../tenet/compile.js'
import { table1Cases } from '../workloads/dual.js'
import { mlpSource, particlesSource, table1TenetRows } from './table1-tenet.js'

const cases = table1Cases({ full: false })
const row = table1TenetRows.rows.dual![0]!

describe('Tenet rows of seed 003 Table 1', () => {
  it.each(cases.map((c) => [c.label, c] as const))(
    '%s: the row runs and its gradient passes its check',
    async (_l, spec) => {
      const c = spec.make()
      const prepared = (await row.setup(c)) as PreparedRow
      expect('na' in prepared).toBe(false)
      prepared.run()
      const r = await prepared.check!()
      expect(r.ok, r.reason).toBe(true)
    },
  )

  it('particles: the rewritten Euler step computes the plain loss, and its gradient is the dual engine’s', () => {
    const c = cases.find((k) => k.label.startsWith('particles'))!.make()
    const f = fn(compile(particlesSource(), true), 'f')
    const [loss] = f(0, c.x.slice(), 4, 1000) as [number]
    expect(Math.abs(loss - c.objective(c.x))).toBeLessThan(1e-12 * Math.max(1, Math.abs(c.objective(c.x))))
    const g = grad(f, { loss: 0 })(0, c.x.slice(), 4, 1000)[1] as Float64Array
    const ref = dualGrad(c.dual)(c.x) as Float64Array
    for (let i = 0; i < ref.length; i++) expect(Math.abs(g[i]! - ref[i]!)).toBeLessThan(1e-10 * (1 + Math.abs(ref[i]!)))
  })

  it('neural: the MLP in Tenet computes the plain loss, and its gradient is the dual engine’s (checks on)', () => {
    const c = cases.find((k) => k.label.startsWith('neural'))!.make()
    const f = fn(compile(mlpSource(c.mlp!), true), 'f')
    const [loss] = f(0, c.x.slice(), c.mlp!.inputs, c.mlp!.targets) as [number]
    expect(Math.abs(loss - c.objective(c.x))).toBeLessThan(1e-12 * Math.max(1, Math.abs(c.objective(c.x))))
    const g = grad(f, { loss: 0, constants: [2, 3] })(0, c.x.slice(), c.mlp!.inputs, c.mlp!.targets)[1] as Float64Array
    const ref = dualGrad(c.dual)(c.x) as Float64Array
    for (let i = 0; i < ref.length; i++) expect(Math.abs(g[i]! - ref[i]!)).toBeLessThan(1e-10 * (1 + Math.abs(ref[i]!)))
  })
})
