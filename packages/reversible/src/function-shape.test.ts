import { describe, expect, it } from 'vitest'
import { createRegistry, parse } from '@tenet/ir'
import { compileModule, interpreterBackend, TENET_FUNCTION } from './index.js'

const registry = createRegistry().registerBackend(interpreterBackend)
const source = `fn f(y: f64, x: f64) {
  y += x * 2.0
}
fn g(y: f64, x: f64) {
  y -= x
}`

/**
 * The properties of a compiled function: created under its final name, its other properties
 * defined one by one and its \`source\` getter shared by every function (see \`sourceOf\`), so that
 * the functions of a module keep fast properties (`function-shape.alloc.test.ts` checks that with
 * V8's natives); what a caller sees is unchanged.
 */
describe('a compiled function and its inverse', () => {
  const m = compileModule(parse({ text: source, name: 'shape' }), { registry, backend: 'interpreter' })

  it('are named f and f_inverse, each the inverse of the other', () => {
    expect(m.f!.name).toBe('f')
    expect(m.f!.inverse.name).toBe('f_inverse')
    expect(m.g!.name).toBe('g')
    expect(m.f!.inverse.inverse).toBe(m.f)
    expect(m.f!(1, 2)).toEqual([5, 2])
    expect(m.f!.inverse(5, 2)).toEqual([1, 2])
  })

  it('print their own source (the inverse under its name), once', () => {
    expect(m.f!.source).toBe('fn f(y: f64, x: f64) {\n  y += x * 2.0\n}')
    expect(m.f!.inverse.source).toBe('fn f_inverse(y: f64, x: f64) {\n  y -= x * 2.0\n}')
    expect(m.g!.source).toBe('fn g(y: f64, x: f64) {\n  y -= x\n}')
    // the same string object: printed on first use, kept
    expect(m.f!.source).toBe(m.f!.source)
  })

  it('keep read-only, non-enumerable properties', () => {
    for (const f of [m.f!, m.f!.inverse, m.g!]) {
      for (const key of ['name', 'ir', 'core', 'inverse', TENET_FUNCTION] as const) {
        const d = Object.getOwnPropertyDescriptor(f, key)!
        expect(d, String(key)).toBeDefined()
        expect(d.enumerable, String(key)).toBe(false)
        expect(d.writable, String(key)).toBe(false)
      }
      const s = Object.getOwnPropertyDescriptor(f, 'source')!
      expect(typeof s.get).toBe('function')
      expect(s.set).toBeUndefined()
      expect(Object.keys(f)).toEqual([])
    }
    // one getter for every function
    expect(Object.getOwnPropertyDescriptor(m.f!, 'source')!.get).toBe(
      Object.getOwnPropertyDescriptor(m.g!.inverse, 'source')!.get,
    )
  })
})
