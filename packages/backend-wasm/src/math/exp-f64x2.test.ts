import { describe, expect, it } from 'vitest'
import { compile, expectSameRuns, lastPairs } from '../test-util.js'
import { words } from './builder.js'

/** Bits of a double as text (NaN as one text: wasm leaves its payload open). */
const bitsOf = (v: number) => {
  if (Number.isNaN(v)) return 'NaN'
  const d = new DataView(new ArrayBuffer(8))
  d.setFloat64(0, v)
  return d.getBigUint64(0).toString(16)
}

/** The doubles next to v (one ulp down and up). */
function neighbours(v: number): number[] {
  const d = new DataView(new ArrayBuffer(8))
  d.setFloat64(0, v)
  const b = d.getBigInt64(0)
  const at = (x: bigint) => {
    d.setBigInt64(0, x)
    return d.getFloat64(0)
  }
  return [at(b - 1n), v, at(b + 1n)]
}

/** Inputs at and around every branch of the scalar routine, and random ones. */
function inputs(): number[] {
  const edges = [
    words(0x3e300000, 0), // below: 1 + x
    words(0x3fd62e42, 0xffffffff), // the last unreduced
    words(0x3fd62e43, 0), // the first reduced
    words(0x3ff0a2b2, 0), // k = ±1 below
    0.5 * Math.LN2,
    1.5 * Math.LN2,
    708,
    709.782712893384, // overflow threshold
    -745.1332191019411, // underflow threshold
    -708.3964185322641, // 2^k subnormal below
    1,
    -1,
    0.5,
    2,
    Math.LN2,
  ]
  const xs: number[] = [0, -0, 5e-324, -5e-324, Infinity, -Infinity, NaN, Number.MAX_VALUE, -Number.MAX_VALUE]
  for (const e of edges) for (const s of [1, -1]) xs.push(...neighbours(s * e))
  let seed = 7
  const unit = () => {
    seed = (seed * 1103515245 + 12345) % 2147483648
    return seed / 2147483648
  }
  for (let k = 0; k < 4000; k++) xs.push(40 * unit() - 20)
  for (let k = 0; k < 2000; k++) xs.push(1455 * unit() - 745)
  for (let k = 0; k < 2000; k++) xs.push((unit() < 0.5 ? -1 : 1) * 2 ** (60 * unit() - 50))
  for (let k = 0; k < 500; k++) xs.push(2 * unit() - 1)
  // every input in both lanes, next to a common one and next to itself
  const out: number[] = []
  for (const x of xs) out.push(x, 0.75, -3.5, x, x, x)
  return out
}

describe('exp of an f64x2 (__exp_f64x2)', () => {
  const text = 'fn f(y: f64[], x: f64[]) { for i in 0..len(x) { y[i] += exp(x[i]) } }'

  it('pairs the iterations of a loop of exp, with the scalar routine’s doubles in each lane', () => {
    const paired = compile(text, 'wasm', false, true)
    expect(lastPairs).toBeGreaterThan(0)
    const scalar = compile(text, 'wasm', false, false)
    expect(lastPairs).toBe(0)
    const xs = Float64Array.from(inputs())
    const run = (m: typeof paired) => {
      const y = new Float64Array(xs.length)
      m.f!.core(y, xs)
      return Array.from(y, bitsOf)
    }
    const a = run(paired),
      b = run(scalar)
    let differ = 0
    for (let k = 0; k < a.length; k++) if (a[k] !== b[k]) differ++
    expect(differ).toBe(0)
    // and Math.exp's doubles (the scalar routine differs from it nowhere: see the README)
    expect(a).toEqual(Array.from(xs, (x) => bitsOf(Math.exp(x))))
  })

  it('runs forwards and backwards, upwards and in reverse, as the cpu backend does', () => {
    const down = 'fn f(y: f64[], x: f64[]) { for i in reverse 0..len(x) { y[i] -= exp(2.0 * x[i]) * x[i] } }'
    for (const src of [text, down]) {
      const mods = [compile(src, 'cpu'), compile(src, 'wasm', false, true), compile(src, 'wasm', false, false)]
      for (const n of [0, 1, 2, 7, 64]) {
        expectSameRuns(mods, () => [
          Float64Array.from({ length: n }, (_, i) => i / 7),
          Float64Array.from({ length: n }, (_, i) => Math.sin(i) * 30),
        ])
      }
    }
  })
})
