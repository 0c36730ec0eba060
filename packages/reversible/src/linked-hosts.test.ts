/**
 * (Review 19a.) A linked Tenet function (`${B.g}(…)` in module A, pulled into A by `link`) whose body
 * calls a host function of its own module (`${0}` of B) calls A's host function of the same index
 * instead: `link` renames statement calls but not `$hostN` in expressions, and A's program keeps
 * only A's hosts. Wrong results without an error (or `call/arity` where A's host N is `B.g`
 * itself); and `running-calls.ts`'s `callsOut`, computed from A's hosts, does not see B's host.
 */
import { describe, expect, it } from 'vitest'
import { createRegistry, parse } from '@tenet/ir'
import { compileModule, interpreterBackend } from './index.js'

const registry = createRegistry().registerBackend(interpreterBackend)
type M = Record<string, any>

describe('host functions of a linked module', () => {
  it('the linked g calls its own module’s host function, not the caller module’s', () => {
    const calls: string[] = []
    const hB = (v: number) => (calls.push('B'), v * 2)
    const hA = (v: number) => (calls.push('A'), v * 100)
    const B = compileModule(parse('fn g(z: f64[], v: f64) { z[0] += ${0}(v) }', [hB]), {
      registry,
      backend: 'interpreter',
    }) as M
    const A = compileModule(parse('fn f(y: f64[], z: f64[]) {\n  y[0] += ${0}(1.0)\n  ${1}(z, 3.0)\n}', [hA, B.g]), {
      registry,
      backend: 'interpreter',
    }) as M
    const y = new Float64Array(1),
      z = new Float64Array(1)
    A.f(y, z)
    expect([y[0], z[0]]).toEqual([100, 6])
    expect(calls).toEqual(['A', 'B'])
  })
  it('a module that interpolates only the linked g runs it (no call/arity from its host call)', () => {
    const hB = (v: number) => v * 2
    const B = compileModule(parse('fn g(z: f64[], v: f64) { z[0] += ${0}(v) }', [hB]), {
      registry,
      backend: 'interpreter',
    }) as M
    const A = compileModule(parse('fn f(z: f64[]) { ${0}(z, 3.0) }', [B.g]), { registry, backend: 'interpreter' }) as M
    const z = new Float64Array(1)
    expect(() => A.f(z)).not.toThrow()
    expect(z[0]).toBe(6)
  })
  it('two levels of linking, an interpolated number and a host function at each level', () => {
    const calls: string[] = []
    const B = compileModule(
      parse('fn g(z: f64[], v: f64) { z[0] += ${0}(v) * ${1} }', [(v: number) => (calls.push('B'), v + 1), 10]),
      { registry, backend: 'interpreter' },
    ) as M
    const A = compileModule(
      parse('fn f(y: f64[], z: f64[]) {\n  y[0] += ${0}(2.0) + ${2}\n  ${1}(z, 3.0)\n}', [
        (v: number) => (calls.push('A'), v * 100),
        B.g,
        0.5,
      ]),
      { registry, backend: 'interpreter' },
    ) as M
    const C = compileModule(
      parse('fn h(x: f64[], y: f64[], z: f64[]) {\n  x[0] += ${1}(4.0)\n  ${0}(y, z)\n}', [
        A.f,
        (v: number) => (calls.push('C'), -v),
      ]),
      { registry, backend: 'interpreter' },
    ) as M
    const x = new Float64Array(1),
      y = new Float64Array(1),
      z = new Float64Array(1)
    C.h(x, y, z)
    expect([x[0], y[0], z[0]]).toEqual([-4, 200.5, 40])
    expect(calls).toEqual(['C', 'A', 'B'])
  })
})
