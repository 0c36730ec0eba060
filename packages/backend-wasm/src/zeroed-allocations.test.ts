/**
 * Array ancillas are zero when allocated, whatever the memory held before: a small one by a loop
 * of f64 stores of +0 (at most `ZERO_STORES_MAX_BYTES`), a larger one by `memory.fill`. Without
 * run-time checks an ancilla that nothing reads after its routine is left as it is (its uncompute
 * goes, `dead-ancillas`), so the next iteration's allocation reuses memory holding the last
 * values: f64, i32 and bool arrays around the threshold (read at other indices than written, so
 * that \`contract-arrays\` keeps them arrays), against the interpreter, bit for bit.
 */
import { describe, expect, it } from 'vitest'
import { createRegistry, parse } from '@tenet/ir'
import { compileModule, interpreterBackend } from '@tenet/reversible'
import { doublesText } from '@tenet/testing'
import { ZERO_STORES_MAX_BYTES } from './codegen.js'
import { wasmBackend } from './index.js'

const registry = () => createRegistry().registerBackend(wasmBackend).registerBackend(interpreterBackend)

const source = `fn f(s: f64[], t: i32[], n: i32, m: i32) {
  for j in 0..m {
    routine {
      a: f64[] <- zeros(n)
      b: i32[] <- zeros(n)
      c: bool[] <- zeros(n)
      for k in 0..n {
        a[k] += s[j] + 1.0
        b[k] += j + 1
        c[k] ^= true
      }
    }
    for k in 0..n {
      s[m + k] += a[n - 1 - k] * 2.0
      t[k] += b[n - 1 - k]
      if (c[n - 1 - k], ~) { t[n + k] += 1 }
    }
    ~routine
  }
}`

describe('zeroed allocations (wasm backend)', () => {
  it('small arrays by stores, large ones by memory.fill: zero after a routine left values there (checks off)', () => {
    expect(ZERO_STORES_MAX_BYTES).toBe(256)
    const compile = (backend: string) =>
      compileModule(parse({ text: source, name: 'p' }), { registry: registry(), backend, checks: false }).f!
    const wasm = compile('wasm')
    const ref = compile('interpreter')
    // (f64 elements: 32 fill 256 bytes, the most the stores zero; 33 and more, memory.fill)
    for (const n of [1, 2, 3, 7, 31, 32, 33, 40, 64, 65, 300])
      for (const m of [1, 3]) {
        const args = (): unknown[] => [
          Float64Array.from({ length: m + n }, (_, i) => (i < m ? i / 3 : 0)),
          new Int32Array(2 * n),
          n,
          m,
        ]
        const text = (r: unknown[]) => doublesText(r.map((x) => (x instanceof Int32Array ? Float64Array.from(x) : x)))
        expect(text(wasm(...args()) as unknown[]), `n = ${n}, m = ${m}`).toBe(text(ref(...args()) as unknown[]))
      }
  })
})
