import { describe, expect, it } from 'vitest'
import { evaluate, grad } from '@tenet/dual'
import { finiteDifferenceGradient } from '../math/finite-difference.js'
import { table1Cases } from '../workloads/dual.js'

describe('seed 003 Table 1: each dual-API version computes the plain objective, and its gradient is right', () => {
  const cases = table1Cases({ full: false })
  it.each(cases.map((c) => [c.label, c] as const))('%s', (_label, spec) => {
    const c = spec.make()
    expect(evaluate(c.dual)(c.x)).toBeCloseTo(c.objective(c.x), 9)
    const g = grad(c.dual)(c.x) as Float64Array
    // the exact reference where the case has one, and central differences on a sample of inputs
    const ref = c.gradient()
    for (let i = 0; i < g.length; i++) expect(Math.abs(g[i]! - ref[i]!)).toBeLessThan(1e-6 * (1 + Math.abs(ref[i]!)))
    const idx = Array.from({ length: Math.min(8, c.x.length) }, (_, k) =>
      Math.floor((k * c.x.length) / Math.min(8, c.x.length)),
    )
    const fd = finiteDifferenceGradient((v) => c.objective(v), c.x.slice())
    for (const i of idx) expect(Math.abs(g[i]! - fd[i]!)).toBeLessThan(1e-6 * (1 + Math.abs(fd[i]!)))
    // the staged row's gradient (compiled code, second call) is the interpreter's, to the bit
    const staged = grad(c.dual, { stage: true })
    staged(c.x)
    const s = staged(c.x) as Float64Array
    expect(staged.stage?.state).toBe('compiled')
    for (let i = 0; i < g.length; i++) expect(s[i] === g[i], `component ${i}: ${s[i]} vs ${g[i]}`).toBe(true)
  })
})
