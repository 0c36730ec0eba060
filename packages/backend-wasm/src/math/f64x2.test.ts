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

/** A small deterministic generator of uniform numbers in [0, 1). */
function generator(seed: number): () => number {
  return () => {
    seed = (seed * 1103515245 + 12345) % 2147483648
    return seed / 2147483648
  }
}

/** Every input in both lanes, next to a common one and next to itself. */
function inLanes(xs: number[], common: number): number[] {
  const out: number[] = []
  for (const x of xs) out.push(x, common, -common, x, x, x)
  return out
}

const SPECIAL = [0, -0, 5e-324, -5e-324, Infinity, -Infinity, NaN, Number.MAX_VALUE, -Number.MAX_VALUE]

/** exp: inputs at and around every branch of the scalar routine, and random ones. */
function expInputs(): number[] {
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
  const xs: number[] = [...SPECIAL]
  for (const e of edges) for (const s of [1, -1]) xs.push(...neighbours(s * e))
  const unit = generator(7)
  for (let k = 0; k < 4000; k++) xs.push(40 * unit() - 20)
  for (let k = 0; k < 2000; k++) xs.push(1455 * unit() - 745)
  for (let k = 0; k < 2000; k++) xs.push((unit() < 0.5 ? -1 : 1) * 2 ** (60 * unit() - 50))
  for (let k = 0; k < 500; k++) xs.push(2 * unit() - 1)
  return inLanes(xs, 0.75)
}

/** log: inputs at and around every branch of the scalar routine (high words), and random ones. */
function logInputs(): number[] {
  const xs: number[] = [...SPECIAL, -1, -2.5, 1e-310, 2.2250738585072014e-308]
  // powers of two (1 + f within 2⁻²⁰ of 1), the split at √2, the ends of the "far" range
  for (const e of [-1022, -1000, -60, -1, 0, 1, 2, 10, 1000, 1023])
    for (const h of [0, 1, 2, 0xffffe, 0xfffff, 0x6a09b, 0x6a09c, 0x6147a, 0x61479, 0x6b851, 0x6b852])
      for (const low of [0, 1, 0xffffffff]) xs.push(...neighbours(words(((e + 1023) << 20) | h, low)))
  const unit = generator(11)
  for (let k = 0; k < 4000; k++) xs.push(100 * unit())
  for (let k = 0; k < 3000; k++) xs.push(2 ** (2046 * unit() - 1022) * (1 + unit()))
  for (let k = 0; k < 1000; k++) xs.push(0.5 + unit())
  const d = new DataView(new ArrayBuffer(8))
  for (let k = 0; k < 1000; k++) {
    d.setUint32(0, Math.floor(unit() * 2 ** 32))
    d.setUint32(4, Math.floor(unit() * 2 ** 32))
    xs.push(d.getFloat64(0))
  }
  return inLanes(xs, 3.25)
}

// (`math: 'module'`: log's f64x2 routine is not used under the default choice, see the README)
const CASES: Array<[string, string, () => number[], (x: number) => number]> = [
  ['exp', '__exp_f64x2', expInputs, Math.exp],
  ['log', '__log_f64x2', logInputs, Math.log],
]

it('pairs a loop of exp under the default math choice, and one of log only with `module`', () => {
  compile('fn f(y: f64[], x: f64[]) { for i in 0..len(x) { y[i] += exp(x[i]) } }', 'wasm')
  expect(lastPairs).toBeGreaterThan(0)
  compile('fn f(y: f64[], x: f64[]) { for i in 0..len(x) { y[i] += log(x[i]) } }', 'wasm')
  expect(lastPairs).toBe(0)
  compile('fn f(y: f64[], x: f64[]) { for i in 0..len(x) { y[i] += log(x[i]) } }', 'wasm', false, true, 'module')
  expect(lastPairs).toBeGreaterThan(0)
})

describe.each(CASES)('%s of an f64x2 (%s)', (fn, _routine, inputs, reference) => {
  const text = `fn f(y: f64[], x: f64[]) { for i in 0..len(x) { y[i] += ${fn}(x[i]) } }`

  it('pairs the iterations of a loop, with the scalar routine’s doubles in each lane', () => {
    const paired = compile(text, 'wasm', false, true, 'module')
    expect(lastPairs).toBeGreaterThan(0)
    const scalar = compile(text, 'wasm', false, false, 'module')
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
    // and Math's doubles (the scalar routine differs from it nowhere: see the README)
    expect(a).toEqual(Array.from(xs, (x) => bitsOf(0 + reference(x))))
  })

  it('runs forwards and backwards, upwards and in reverse, as the cpu backend does', () => {
    const down = `fn f(y: f64[], x: f64[]) { for i in reverse 0..len(x) { y[i] -= ${fn}(2.0 * x[i]) * x[i] } }`
    for (const src of [text, down]) {
      const mods = [
        compile(src, 'cpu'),
        compile(src, 'wasm', false, true, 'module'),
        compile(src, 'wasm', false, false, 'module'),
      ]
      for (const n of [0, 1, 2, 7, 64]) {
        expectSameRuns(mods, () => [
          Float64Array.from({ length: n }, (_, i) => i / 7),
          Float64Array.from({ length: n }, (_, i) => Math.abs(Math.sin(i)) * 30 + 0.01),
        ])
      }
    }
  })
})
