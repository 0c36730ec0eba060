/**
 * Lane pairs (two updates as one f64x2 load/store) touch two neighbouring elements: with checks
 * off, wasm still checks every index (all arguments share one linear memory), so a pair must
 * check both elements, not only the first. Each program runs with SIMD and without, over indices
 * in range, one past the end and one before the start: the same result or the same error.
 */
import { describe, expect, it } from 'vitest'
import { compile, lastPairs } from './test-util.js'

const programs: Array<[string, string, boolean?]> = [
  ['a written pair', 'for j in 0..n { y[a + j] += x[j] }'],
  ['a read pair', 'for j in 0..n { x[j] += y[a + j] }'],
  ['a written pair reading a pair', 'for j in 0..n { y[a + j] += 2.0 * x[j + 1] }'],
  ['a downward written pair', 'for j in reverse 0..n { y[a + j] -= x[j] }'],
  ['the inverse of a written pair (downward)', 'for j in 0..n { y[a + j] += x[j] }', true],
  ['two statements as one pair', 'y[a] += x[0]\n y[a + 1] += x[1]'],
]

/** What a call gives: its results as exact text, or its error's code and message. */
function outcome(m: ReturnType<typeof compile>, a: number, n: number, inverse = false): string {
  const y = Float64Array.from({ length: 6 }, (_, i) => i + 0.5)
  const x = Float64Array.from({ length: 4 }, (_, i) => 10 * i + 1)
  const z = new Float64Array(2)
  try {
    const r = (inverse ? m.f!.inverse(y, z, x, a, n) : m.f!(y, z, x, a, n)) as unknown[]
    return JSON.stringify(r.map((v) => (ArrayBuffer.isView(v) ? Array.from(v as Float64Array) : v)))
  } catch (e) {
    const err = e as { code?: string; message: string }
    return `${err.code}: ${err.message.split('\n')[0]}`
  }
}

describe('lane pairs check both elements they touch (checks off)', () => {
  it.each(programs)('%s', (_label, body, inverse) => {
    const text = `fn f(y: f64[], z: f64[], x: f64[], a: i32, n: i32) {\n ${body}\n z[0] += 1.0\n}`
    const simd = compile(text, 'wasm', false, true)
    expect(lastPairs, 'the program runs as lane pairs').toBeGreaterThan(0)
    const scalar = compile(text, 'wasm', false, false)
    expect(lastPairs).toBe(0)
    let errors = 0
    for (const [a, n] of [
      [0, 2],
      [1, 2],
      [4, 2],
      [5, 2],
      [2, 4],
      [3, 4],
      [-1, 2],
      [-2, 2],
      [6, 2],
    ] as const) {
      const want = outcome(scalar, a, n, inverse)
      if (want.startsWith('runtime/out-of-bounds')) errors++
      expect(outcome(simd, a, n, inverse), `a = ${a}, n = ${n}`).toBe(want)
    }
    expect(errors, 'some cases are out of range').toBeGreaterThan(0)
  })
})
