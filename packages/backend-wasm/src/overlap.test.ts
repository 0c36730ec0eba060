/**
 * The aliasing rule at the host boundary (`overlapGuard` of `@tenet/reversible`): an array a
 * function writes shares no memory with any other array argument. The reference interpreter, the
 * cpu and the wasm backends raise the same `call/overlap` error (forward and `.inverse`, checks on
 * and off) before anything runs; read-only arrays may overlap each other.
 */
import { describe, expect, it } from 'vitest'
import { cpuBackend } from '@tenet/backend-cpu'
import { backendUnderTest, raisedError, referenceBackend } from '@tenet/testing'
import { wasmBackend } from './index.js'

const backends = [
  ['interpreter, checks on', referenceBackend({ checks: true })],
  ['interpreter, checks off', referenceBackend({ checks: false })],
  ['cpu, checks on', backendUnderTest(cpuBackend, { checks: true })],
  ['cpu, checks off', backendUnderTest(cpuBackend, { checks: false })],
  ['wasm, checks on', backendUnderTest(wasmBackend, { checks: true })],
  ['wasm, checks off', backendUnderTest(wasmBackend, { checks: false })],
] as const

// (D5/D6 of the eleventh review: an invariant read hoisted past the write of one array passed twice)
const src = `fn f(y: f64[], a: f64[], n: i32) {
  for j in 0..n {
    y[j] += sin(a[0]) * 2.0
  }
}
fn g(y: f64[], x: f64[], theta: f64[], m: i32, n: i32) {
  for l in 0..n {
    for j in 0..m { y[j + m * l] += x[j + m * l] * cos(theta[j]) }
  }
}
fn r(s: f64, a: f64[], b: f64[]) { s += a[0] * b[1] }`

const F = 'arguments 1 (`y: f64[]`) and 2 (`a: f64[]`) of `f` share memory, and `f` writes `y`'

describe('call/overlap: a written array shares memory with another array argument', () => {
  for (const [name, b] of backends) {
    const m = b.compile(src)
    it(`one typed array for y and a: the same error, nothing written (${name})`, () => {
      const y = Float64Array.of(0.5, 1, 1, 1)
      const e = raisedError(() => m.f!(y, y, 4))
      expect(e).toBe(
        `call/overlap | ${F}: an array a function writes must not overlap any other array argument (pass a copy, e.g. \`a.slice()\`) | undefined:undefined`,
      )
      expect(Array.from(y)).toEqual([0.5, 1, 1, 1])
      expect(raisedError(() => (m.f as any).inverse(y, y, 4))).toMatch(
        /^call\/overlap \| .* of `f.inverse` share memory/,
      )
    })
    it(`two views of one buffer whose byte ranges overlap, and identical views (${name})`, () => {
      const y = Float64Array.from({ length: 10 }, (_, i) => 0.1 + 0.3 * i)
      const x = Float64Array.from({ length: 10 }, (_, i) => 0.2 + 0.3 * i)
      expect(raisedError(() => m.g!(y, x, y.subarray(3), 5, 2))).toMatch(
        /^call\/overlap \| arguments 1 \(`y: f64\[\]`\) and 3 \(`theta: f64\[\]`\) of `g` share memory, and `g` writes `y`/,
      )
      expect(raisedError(() => m.g!(y, x, new Float64Array(y.buffer), 5, 2))).toMatch(/^call\/overlap/)
      // (a view of other bytes of the same buffer is apart)
      const buf = new Float64Array(20)
      const y2 = buf.subarray(0, 10),
        t2 = buf.subarray(10)
      y2.set(y)
      t2.set(y)
      const want = [y.slice(), x.slice(), y.slice()] as const
      b.compile(src).g!(want[0], want[1], want[2], 5, 2)
      expect(raisedError(() => m.g!(y2, x, t2, 5, 2))).toBe('no error')
      expect(Array.from(y2)).toEqual(Array.from(want[0]))
    })
    it(`read-only arrays may overlap each other; an empty array shares nothing (${name})`, () => {
      const ab = Float64Array.of(2, 3)
      expect(m.r!(1, ab, ab)[0]).toBe(7)
      const y = new Float64Array(0)
      expect(raisedError(() => m.f!(y, y, 0))).toBe('no error')
    })
    it(`the answer is remembered only for the same arrays: a call with a fresh alias still fails (${name})`, () => {
      const y = Float64Array.of(1, 2, 3, 4),
        a = Float64Array.of(1, 2)
      for (let k = 0; k < 3; k++) m.f!(y, a, 4)
      expect(raisedError(() => m.f!(y, y.subarray(3), 4))).toMatch(/^call\/overlap/)
      m.f!(y, a, 4)
    })
  }
  it('views of one resizable buffer are tested again on every call (their byte ranges change)', () => {
    const RAB = ArrayBuffer as unknown as new (
      n: number,
      o: { maxByteLength: number },
    ) => ArrayBuffer & {
      resize(n: number): void
    }
    if (!('resize' in ArrayBuffer.prototype)) return
    for (const [name, b] of backends) {
      if (name.startsWith('wasm')) continue
      const rab = new RAB(24, { maxByteLength: 64 })
      const y = new Float64Array(rab, 8, 2)
      const a = new Float64Array(rab, 24) // tracks the buffer's length: empty now
      const m = b.compile(src)
      expect(`${name}: ${raisedError(() => m.f!(y, a, 0))}`).toBe(`${name}: no error`)
      rab.resize(40)
      // (the same two objects: a now covers bytes 24..40, apart from y's 8..24)
      expect(`${name}: ${raisedError(() => m.f!(y, a, 0))}`).toBe(`${name}: no error`)
      rab.resize(24)
      expect(`${name}: ${raisedError(() => m.f!(y, new Float64Array(rab, 8), 0))}`).toMatch(/call\/overlap/)
      const z = new Float64Array(rab, 0) // tracks: bytes 0..24, overlapping y
      expect(`${name}: ${raisedError(() => m.f!(y, z, 0))}`).toMatch(/call\/overlap/)
    }
  })
})
