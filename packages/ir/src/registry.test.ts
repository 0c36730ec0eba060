import { describe, expect, it } from 'vitest'
import { createRegistry, emptyRegistry, RegistryError, type BackendSpec } from './index.js'

describe('registry', () => {
  it('starts with the standard library and lists what exists when a lookup fails', () => {
    const r = createRegistry()
    expect(r.names('pure')).toContain('sin')
    expect(r.names('bijection')).toContain('ROT')
    expect(r.names('number')).toEqual(expect.arrayContaining(['f64', 'f32', 'i32', 'bool']))
    expect(() => r.pure('sinn')).toThrow(/did you mean (.* or )?`sin`/)
    expect(() => r.backend('webgpu')).toThrow(/no backend `webgpu` \(available: none\)/)
  })

  it('rejects duplicates unless override is set, and checks the specification version', () => {
    const r = createRegistry()
    const cube = {
      specificationVersion: 'v1' as const,
      name: 'cube',
      kind: 'pure' as const,
      arity: 1,
      evaluate: (x: number) => x ** 3,
      partials: (x: number) => [3 * x ** 2],
    }
    r.registerPrimitive(cube)
    expect(() => r.registerPrimitive(cube)).toThrow(RegistryError)
    expect(() => r.registerPrimitive({ ...cube, override: true })).not.toThrow()
    expect(() => r.registerPrimitive({ ...cube, name: 'cube2', specificationVersion: 'v2' as never })).toThrow(
      /specificationVersion/,
    )
    expect(() => r.registerPrimitive({ ...cube, name: 'not valid' })).toThrow(/not a valid identifier/)
  })

  it('clones are independent', () => {
    const r = createRegistry()
    const c = r.clone()
    c.registerPrimitive({
      specificationVersion: 'v1',
      name: 'only_in_clone',
      kind: 'pure',
      arity: 1,
      evaluate: (x) => x,
    })
    expect(c.findPrimitive('only_in_clone')).toBeDefined()
    expect(r.findPrimitive('only_in_clone')).toBeUndefined()
  })

  it('the default backend is the available one with the highest priority', () => {
    const backend = (name: string, priority: number, available?: boolean): BackendSpec => ({
      specificationVersion: 'v1',
      name,
      priority,
      capabilities: { f64: true, recursion: true, exceptions: true },
      ...(available === undefined ? {} : { isAvailable: () => available }),
      doCompile: () => {
        throw new Error('not compiled here')
      },
    })
    const r = emptyRegistry()
      .registerBackend(backend('low', 1))
      .registerBackend(backend('high', 9, false))
      .registerBackend(backend('mid', 5, true))
    expect(r.defaultBackend().name).toBe('mid')
    const none = emptyRegistry().registerBackend(backend('gone', 3, false))
    expect(() => none.defaultBackend()).toThrow(/no registered backend is available here \(registered: gone\)/)
  })
})
