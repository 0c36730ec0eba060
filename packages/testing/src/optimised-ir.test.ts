import { describe, expect, it } from 'vitest'
import { interpreterBackend } from '@tenet/reversible'
import { optimiseSource, optimisedIr } from './optimised-ir.js'

const source = `
fn f(a: f64[], y: f64) {
  for c in 0..3 { a[c] += y }
}
fn g(y: f64, z: f64) { y += z }
`

describe('optimiseSource / optimisedIr', () => {
  it('prints every function and inverse before and after the passes', () => {
    const { inlined, optimised } = optimiseSource(interpreterBackend, source, { passes: ['unroll'] })
    expect([...inlined.functions.keys()].sort()).toEqual(['f', 'g'])
    expect([...optimised.inverses.keys()].sort()).toEqual([...inlined.inverses.keys()].sort())
    expect(inlined.functions.get('f')).toMatch(/for c in/)
    // `unroll` expands the loop of three trips: three updates, no loop
    const after = optimised.functions.get('f')!
    expect(after).not.toMatch(/for c in/)
    expect(after.match(/a\[\d\] \+= y/g)).toHaveLength(3)
    expect(optimised.functions.get('g')).toBe(inlined.functions.get('g'))
  })
  it('optimisedIr is the entry of the optimised program; a missing entry is an error', () => {
    expect(optimisedIr(interpreterBackend, source, { passes: ['unroll'] })).not.toMatch(/for c in/)
    expect(optimisedIr(interpreterBackend, source, { entry: 'g' })).toMatch(/y \+= z/)
    expect(() => optimisedIr(interpreterBackend, source, { entry: 'h' })).toThrow(/no function 'h'/)
  })
  it('bad source fails with the compiler’s error', () => {
    expect(() => optimiseSource(interpreterBackend, 'fn f(x: f64) { x += }', { name: 'bad' })).toThrow(
      /expected an expression.*at 1:21/s,
    )
  })
})
