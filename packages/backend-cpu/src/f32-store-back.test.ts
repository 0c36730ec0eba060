/** (Found by an adversarial review) f32 elements kept in locals, stored back where the loop ran but no iteration wrote them (checks off). */
import { describe, expect, it } from 'vitest'
import { createRegistry, parse } from '@tenet/ir'
import { compileModule, interpreterBackend } from '@tenet/reversible'
import { cpuBackend } from './index.js'

const registry = () => createRegistry().registerBackend(cpuBackend).registerBackend(interpreterBackend)

function bits(source: string, backend: string, checks: boolean, n: number): string {
  const m = compileModule(parse({ text: source, name: 'p' }), { registry: registry(), backend, checks })
  const a = new Float32Array(2)
  new Uint32Array(a.buffer)[0] = 0x7f800001
  m.f!(a, 1.5, n)
  return Array.from(new Uint32Array(a.buffer), (x) => x.toString(16)).join(' ')
}

const branchOnly = `fn f(a: f32[], s: f32, n: i32) {
  for i in 0..n {
    for j in 0..n {
      if (i != j, ~) { a[2 * i] += s * 0.25 }
    }
  }
}`
const readEvery = `fn f(a: f32[], s: f32, n: i32) {
  for i in 0..n {
    a[1] += a[0] + s
    if (i > 5, ~) { a[0] += s * 0.25 }
  }
}`

describe('f32 promotion store-back with checks off', () => {
  for (const [label, src] of [
    ['a branch never taken', branchOnly],
    ['an element read every iteration, written in a branch never taken', readEvery],
  ] as const)
    it(`${label} (checks off): the signalling NaN is kept`, () => {
      const want = bits(src, 'interpreter', false, 1)
      expect(bits(src, 'cpu', false, 1)).toBe(want)
    })
})
