/**
 * Where the wrapper copies array arguments (\`place\` in backend.ts): an array of at least
 * \`COPY_ALIGN_FROM\` bytes starts \`COPY_AT\` bytes after its own byteOffset within a 4 KiB page, so that its copy
 * in and out is never one whose destination lies a few bytes after its source modulo 4096 (4K
 * aliasing: 4–12× slower); a smaller one is packed after the one before. The results, the arrays
 * written back are as on the cpu backend.
 */
import { describe, expect, it } from 'vitest'
import { createRegistry, parse } from '@tenet/ir'
import { compileModule } from '@tenet/reversible'
import { cpuBackend } from '@tenet/backend-cpu'
import { COPY_ALIGN_FROM, COPY_AT } from './backend.js'
import { createWasmBackend } from './index.js'

const text = `fn f(s: f64, a: i32[], x: f64[], b: bool[], y: f64[], k: i32) {
  for i in 0..len(y) { y[i] += x[i] * f64(a[i % len(a)]) }
  if (b[k], ~) { s += y[k] }
}`

function compile(backend: 'wasm' | 'cpu') {
  const registry = createRegistry().registerBackend(createWasmBackend()).registerBackend(cpuBackend)
  return compileModule(parse({ text, name: 'placement' }), { registry, backend, checks: false }).f!
}

/** Byte offsets in `memory` where the elements of `values` lie one after the other (8-aligned starts). */
function placesOf(memory: ArrayBufferLike, values: Float64Array | Int32Array): number[] {
  const M = new (values.constructor as Float64ArrayConstructor)(memory)
  const at: number[] = []
  for (let j = 0; j + values.length <= M.length; j++) {
    if (M[j] !== values[0]) continue
    let k = 1
    while (k < values.length && M[j + k] === values[k]) k++
    if (k === values.length) at.push(j * values.BYTES_PER_ELEMENT)
  }
  return at
}

const args = (n: number, seed: number) => {
  const a = Int32Array.from({ length: n }, (_, i) => ((i * 7 + seed) % 13) - 6)
  const x = Float64Array.from({ length: n }, (_, i) => Math.sin(i + seed) * 1e3)
  const b = Uint8Array.from({ length: n }, (_, i) => ((i + seed) % 3 === 0 ? 1 : 0))
  const y = Float64Array.from({ length: n }, (_, i) => Math.cos(i * seed) + 0.5)
  return [0.25, a, x, b, y, seed % n] as const
}

describe('array arguments in linear memory', () => {
  it(`large ones start at ${COPY_AT} within a page, small ones are packed`, () => {
    const f = compile('wasm')
    // 12000 bytes of i32, 24000 of f64 (the bool array's 3000 bytes are fewer than COPY_ALIGN_FROM)
    const n = 3000
    expect(4 * n).toBeGreaterThanOrEqual(COPY_ALIGN_FROM)
    const [s, a, x, b, y, k] = args(n, 5)
    f.core(s, a, x, b, y, k)
    const memory = f.core.resident!.buffer!()
    // (y is written back; its copy in the memory holds the new values, as y does now)
    for (const arr of [a, x, y]) {
      const at = placesOf(memory, arr)
      expect(at.length).toBe(1)
      expect(at[0]! % 4096).toBe(COPY_AT)
    }
    // small arrays: packed after one another from the heap's start (8-byte steps)
    const small = args(10, 3)
    f.core(...small)
    const m2 = f.core.resident!.buffer!()
    const ax = placesOf(m2, small[1])[0]!,
      xx = placesOf(m2, small[2])[0]!
    expect(xx - ax).toBe(40) // 10 i32 elements, rounded up to 8 bytes
  })

  it(`a view into a larger buffer starts ${COPY_AT} bytes after its own place in a page`, () => {
    const f = compile('wasm')
    const n = 3000
    for (const skip of [0, 253, 255, 256, 300, 509, 511]) {
      const [s, a, , b, y, k] = args(n, 5)
      const big = Float64Array.from({ length: n + skip }, (_, i) => Math.sin(i * 0.37 + skip) * 1e3)
      const x = big.subarray(skip, skip + n)
      f.core(s, a, x, b, y, k)
      const at = placesOf(f.core.resident!.buffer!(), x)
      expect(at.length).toBe(1)
      expect(at[0]! % 4096).toBe((COPY_AT + x.byteOffset) % 4096)
    }
  })

  it('gives the cpu backend’s results and arrays, bit for bit, large and small, in turn', () => {
    const w = compile('wasm'),
      c = compile('cpu')
    for (const n of [7, 5000, 300, 1100, 12000, 2]) {
      const aw = args(n, n % 17),
        ac = args(n, n % 17)
      w.core(...aw)
      c.core(...ac)
      expect(w.core.results[0]).toBe(c.core.results[0])
      expect(Array.from(aw[4])).toEqual(Array.from(ac[4]))
      expect(Array.from(aw[1])).toEqual(Array.from(ac[1]))
    }
  })
})
