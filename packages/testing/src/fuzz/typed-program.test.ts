import { describe, expect, it } from 'vitest'
import { createRegistry, parse } from '@tenet/ir'
import { compileModule, interpreterBackend } from '@tenet/reversible'
import { randomRealExpressions, randomRealProgram } from '../index.js'

const registry = createRegistry().registerBackend(interpreterBackend)
const compile = (text: string) => compileModule(parse({ text, name: 'test' }), { registry, backend: 'interpreter' })

describe('randomRealExpressions', () => {
  it('gives the same expressions for the same seed', () => {
    const a = randomRealExpressions(5),
      b = randomRealExpressions(5)
    expect(a.expr(['u', 'v'], 3)).toBe(b.expr(['u', 'v'], 3))
    expect(a.rnd()).toBe(b.rnd())
  })

  it('writes valid expressions over the names given, with the smooth templates filled in, finite everywhere', () => {
    const seen = new Set<string>()
    for (let seed = 0; seed < 60; seed++) {
      const e = randomRealExpressions(seed).expr(['u', 'x[1]'], 3)
      expect(e).not.toContain('#')
      for (const f of ['exp(0.3', 'sqrt(1.0', 'log(2.0', 'x[1]']) if (e.includes(f)) seen.add(f)
      const m = compile(`fn f(y: f64, u: f64, x: f64[]) { y += ${e} }`)
      for (const u of [-3, 0, 2.5]) expect(Number.isFinite(m.f!(0, u, Float64Array.of(1, -2))[0])).toBe(true)
    }
    expect([...seen].sort()).toEqual(['exp(0.3', 'log(2.0', 'sqrt(1.0', 'x[1]'])
  })
})

describe('randomRealProgram with differentiable', () => {
  it('never passes an expression as a real argument of a call', () => {
    for (let seed = 0; seed < 200; seed++) {
      const p = randomRealProgram(seed, { differentiable: true })
      for (const call of p.source.matchAll(/~?g\(\w+, ([^,]+), \w+\)/g)) expect(call[1]).toMatch(/^(\w+|-?[\d.]+)$/)
    }
  })
})
