/**
 * (Review 20a.) A Tenet function is not a constructor, whichever wrapper it has: the generated
 * call is a method (a first version was a `function` expression: `new m.f(…)` ran it, and
 * `m.f` had a `prototype`), the general wrapper an arrow.
 */
import { describe, expect, it } from 'vitest'
import { createRegistry, parse } from '@tenet/ir'
import { compileModule, interpreterBackend } from './index.js'

const registry = createRegistry().registerBackend(interpreterBackend)
type M = Record<string, any>

describe('a Tenet function is not a constructor', () => {
  it('`new m.f(…)` throws a TypeError and `m.f` has no prototype (the generated call and the general wrapper)', () => {
    const m = compileModule(parse({ text: 'fn f(y: f64, x: f64) { y += x }', name: 'review20a' }), {
      registry,
      backend: 'interpreter',
      checks: false,
    }) as M
    expect(() => new m.f(1, 2)).toThrow(TypeError)
    expect(() => new m.f.inverse(1, 2)).toThrow(TypeError)
    expect(Object.getOwnPropertyNames(m.f)).not.toContain('prototype')
  })
})
