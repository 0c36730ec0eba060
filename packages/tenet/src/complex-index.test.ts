/**
 * An index into a complex array is checked as written (review 20b): the element k is the parts 2k
 * and 2k + 1, computed in i32, and for k below −2³⁰ the doubling wrapped into the array's range
 * (k = −2³¹ wrote element 0 with checks on). A negative index is raised to −1 before doubling,
 * except where it cannot be negative (a literal, a loop variable counting up from a non-negative
 * literal), which keeps loops' indices affine for the code generators.
 */
import { wasmBackend } from '@tenet/backend-wasm'
import { describe, expect, it } from 'vitest'
import { TenetError, createRegistry, printFunction, rev, type TenetModule } from './index.js'

const registry = createRegistry().registerBackend(wasmBackend)
const compile = (backend: string, text: string, checks = true): TenetModule =>
  rev.with({ backend, checks, registry })(Object.assign([text], { raw: [text] }) as unknown as TemplateStringsArray)
const code = (f: () => unknown): string => {
  try {
    f()
    return 'ok'
  } catch (e) {
    return TenetError.isInstance(e) ? (e as TenetError).code : String(e)
  }
}

describe('an index into a complex array', () => {
  for (const backend of ['interpreter', 'cpu', 'wasm'])
    it(`is bounds-checked as written, whatever its size (${backend}, checks on)`, () => {
      const m = compile(backend, 'fn c(x: complex[], k: i32) { x[k] += complex(1.0, 0.0) }')
      for (const k of [
        -2147483648, -2147483647, -1073741825, -1073741824, -2, -1, 2, 1073741823, 1073741824, 2147483647,
      ]) {
        const x = Float64Array.of(1, 2, 3, 4)
        expect(
          code(() => m.c!(x, k)),
          `k = ${k}`,
        ).toBe('runtime/out-of-bounds')
        expect([...x], `k = ${k}`).toEqual([1, 2, 3, 4])
      }
      const x = Float64Array.of(1, 2, 3, 4)
      m.c!(x, 1)
      expect([...x]).toEqual([1, 2, 4, 4])
      m.c!.inverse(x, 1)
      expect([...x]).toEqual([1, 2, 3, 4])
    })

  it('keeps the index of a loop counting up from a literal as it is, and guards any other', () => {
    const m = compile(
      'interpreter',
      `fn f(y: complex[], x: complex[], k: i32, n: i32) {
  for i in 0..n { y[i] += x[i] }
  for j in 1..n by 2 { y[j] += x[0] }
  for i in k..n { y[i] += x[1] }
  for i in 0..n by -1 { y[i] += x[1] }
  y[k] += x[2]
}`,
    )
    const printed = printFunction(m.f!.ir)
    // the first two loops' indices and the literals: no guard
    expect(printed).toContain('y$[2 * i] += x$[2 * i]')
    expect(printed).toContain('y$[2 * i + 1] += x$[2 * i + 1]')
    expect(printed).toContain('y$[2 * j] += x$[0]')
    // from k, a negative step, and k itself: guarded (two lines each)
    expect(printed.split('max(').length - 1).toBe(6)
    expect(printed).toContain('y$[2 * max(k, -1)] += x$[2 * 2]')
  })
})
