/**
 * Review 14c (promote-checked, cpu backend, checks on): the store after a loop of an element the
 * loop keeps in a local writes the element back even where no iteration wrote it (a branch never
 * taken, a loop run zero times). For an f32 array, the load into a double and the store back
 * quiet a signaling NaN (0x7f800001 becomes 0x7fc00001): the interpreter leaves the bits as they
 * were. With checks off the zero-trip case was there before (pre-existing); with checks on it is
 * new (the checked code used to load and store in the iterations only).
 */
import { describe, expect, it } from 'vitest'
import { createRegistry, parse } from '@tenet/ir'
import { disabledPasses } from '@tenet/ir/backend'
import { compileModule, interpreterBackend } from '@tenet/reversible'
import { cpuBackend } from './index.js'

const registry = () => createRegistry().registerBackend(cpuBackend).registerBackend(interpreterBackend)

const branchOnly = `fn f(a: f32[], s: f32, n: i32) {
  for i in 0..n {
    for j in 0..n {
      if (i != j, ~) { a[2 * i] += s * 0.25 }
    }
  }
}`
const zeroTrip = `fn f(a: f32[], s: f32, n: i32) {
  for i in 0..n { a[0] += s * 0.25 }
}`

/** The bits of `a` after `f(a, 1.5, n)`, a[0] a signaling NaN before. */
function bits(source: string, backend: string, checks: boolean, n: number, off = false): string {
  if (off) disabledPasses.add('promote-checked')
  try {
    const m = compileModule(parse({ text: source, name: 'p' }), { registry: registry(), backend, checks })
    const a = new Float32Array(2)
    new Uint32Array(a.buffer)[0] = 0x7f800001
    m.f!(a, 1.5, n)
    return Array.from(new Uint32Array(a.buffer), (x) => x.toString(16)).join(' ')
  } finally {
    disabledPasses.delete('promote-checked')
  }
}

describe('promote-checked writes back elements no iteration wrote', () => {
  it('a branch never taken (n = 1, i == j): the f32 signaling NaN is quieted (checks on)', () => {
    expect(bits(branchOnly, 'interpreter', true, 1)).toBe('7f800001 0')
    // (without the pass, the cpu backend leaves the bits alone)
    expect(bits(branchOnly, 'cpu', true, 1, true)).toBe('7f800001 0')
    expect(bits(branchOnly, 'cpu', true, 1)).toBe('7f800001 0')
  })

  it('a loop run zero times (checks on)', () => {
    expect(bits(zeroTrip, 'interpreter', true, 0)).toBe('7f800001 0')
    expect(bits(zeroTrip, 'cpu', true, 0, true)).toBe('7f800001 0')
    expect(bits(zeroTrip, 'cpu', true, 0)).toBe('7f800001 0')
  })

  it('(checks off) a loop run zero times', () => {
    expect(bits(zeroTrip, 'interpreter', false, 0)).toBe('7f800001 0')
    expect(bits(zeroTrip, 'cpu', false, 0)).toBe('7f800001 0')
  })
})
