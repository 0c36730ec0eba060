/** Review 14d: adversarial programs for finite-history, unzeroed tables and the review-14 fixes. */
import { describe, expect, it } from 'vitest'
import { cpuBackend } from '@tenet/backend-cpu'
import { disabledPasses } from '@tenet/ir/backend'
import { backendUnderTest, raisedError, referenceBackend } from '@tenet/testing'
import { wasmBackend } from './index.js'

const reference = referenceBackend({ checks: true })
const engines = [
  { name: 'cpu', engine: backendUnderTest(cpuBackend, { checks: true }) },
  { name: 'wasm', engine: backendUnderTest(wasmBackend, { checks: true }) },
]

function withoutPass<T>(p: string, f: () => T): T {
  disabledPasses.add(p as never)
  try {
    return f()
  } finally {
    disabledPasses.delete(p as never)
  }
}

export function outcome(run: () => unknown): unknown {
  try {
    const v = run()
    return JSON.stringify(v, (_k, x) =>
      ArrayBuffer.isView(x)
        ? Array.from(x as Float64Array, (y) => (Object.is(y, -0) ? '-0' : String(y)))
        : typeof x === 'number'
          ? Object.is(x, -0)
            ? '-0'
            : String(x)
          : x,
    )
  } catch {
    return raisedError(run)
  }
}

function same(src: string, fn: string, args: () => unknown[]) {
  const want = outcome(() => (reference.compile(src) as Record<string, (...a: unknown[]) => unknown>)[fn]!(...args()))
  const got: Record<string, unknown> = { reference: want }
  for (const { name, engine } of engines) {
    got[name] = outcome(() => (engine.compile(src) as Record<string, (...a: unknown[]) => unknown>)[fn]!(...args()))
    got[`${name} off`] = withoutPass('finite-history', () =>
      outcome(() => (engine.compile(`${src}\n`) as Record<string, (...a: unknown[]) => unknown>)[fn]!(...args())),
    )
  }
  return got
}

describe('review 14d: finite-history', () => {
  it('a nest whose stride wraps i32 writes one element twice', () => {
    const src = `
fn f(loss: f64, c: f64[], N: i32, m: i32) {
  A: f64[] <- zeros(1)
  for u in 0..N by 65536 { for v in m..m + 1 { A[65536 * u + v] += c[div(u, 65536)] } }
  loss += A[0]
  for u in reverse 0..N by 65536 { for v in reverse m..m + 1 { A[65536 * u + v] -= c[div(u, 65536)] } }
  A -> zeros(1)
}`
    const got = same(src, 'f', () => [0, new Float64Array([1, 1e300]), 65537, 0])
    for (const k of Object.keys(got)) expect(got[k], k).toEqual(got.reference)
  })
})

describe('review 14d: finite-history, a stride that is a multiple of 2^32', () => {
  it('s = 65536 * 65536 is 0 at run time: every row is one row (outer step 1)', () => {
    const src = `
fn f(loss: f64, c: f64[], N: i32, m: i32) {
  A: f64[] <- zeros(1)
  for u in 0..N { for v in m..m + 1 { A[65536 * 65536 * u + v] += c[u] } }
  loss += A[0]
  for u in reverse 0..N { for v in reverse m..m + 1 { A[65536 * 65536 * u + v] -= c[u] } }
  A -> zeros(1)
}`
    const got = same(src, 'f', () => [0, new Float64Array([1, 1e300]), 2, 0])
    for (const k of Object.keys(got)) expect(got[k], k).toEqual(got.reference)
  })
})

describe('review 14d: finite-history, bounds that change between the loop and its inverse', () => {
  it('len(x) of a local array reallocated between the loop and its inverse', () => {
    const src = `
fn f(loss: f64, c: f64[]) {
  A: f64[] <- zeros(4)
  x: f64[] <- zeros(2)
  y: f64[] <- zeros(3)
  for v in 0..len(x) { A[v] += c[v] }
  loss += A[0]
  x -> zeros(2)
  x: f64[] <- zeros(3)
  for v in reverse 0..len(x) { A[v] -= c[v] }
  x -> zeros(3)
  x: f64[] <- zeros(2)
  y -> zeros(3)
  x -> zeros(2)
  A -> zeros(4)
}`
    const got = same(src, 'f', () => [0, new Float64Array([1, 2, 3, 4])])
    for (const k of Object.keys(got)) expect(got[k], k).toEqual(got.reference)
  })
})

it('(cpu) len(s) of a local stack pushed by a callee between the loop and its inverse', () => {
  const src = `
fn push1(s: stack<f64>, t: f64) {
  push(s, t)
}
fn f(loss: f64, c: f64[]) {
  A: f64[] <- zeros(4)
  s: stack<f64> <- []
  z <- 0.0
  for v in 0..len(s) + 2 { A[v] += c[v] }
  loss += A[0]
  push1(s, z)
  for v in reverse 0..len(s) + 2 { A[v] -= c[v] }
  ~push1(s, z)
  z -> 0.0
  s -> []
  A -> zeros(4)
}`
  const got = same(src, 'f', () => [0, new Float64Array([1, 2, 3, 4])])
  expect(got.cpu).toEqual(got.reference)
})

describe('review 14d: offsets compared modulo 2^32 in the wasm lanes', () => {
  it('loop pairs with offsets 2^32 − 1 apart (neighbours modulo 2^32; planLoopPairs gives no guard, but the loop is not paired end to end)', () => {
    const src = `
fn f(A: f64[], lo: i32, hi: i32) {
  for j in lo..hi { A[j + -2147483648] += A[j + 2147483647] * 2.0 }
}`
    const args = () => [Float64Array.from({ length: 12 }, (_, i) => (i === 0 ? 1 : 0)), -2147483647, -2147483637]
    const want = outcome(() => referenceBackend({ checks: false }).compile(src).f!(...args()))
    for (const [name, b] of [
      ['cpu', cpuBackend],
      ['wasm', wasmBackend],
    ] as const)
      expect(
        outcome(() => backendUnderTest(b, { checks: false }).compile(src).f!(...args())),
        name,
      ).toEqual(want)
  })
})

describe('review 14d: finite-history, earlier writes compared as exact integers', () => {
  it("an earlier write 2^32 above the loop's last element is that element (i32 wrap)", () => {
    const src = `
fn f(loss: f64, c: f64[]) {
  A: f64[] <- zeros(len(c))
  A[len(c) + 2147483647 + 2147483647 + 1] += 1.0
  for k in 0..len(c) { A[k] += c[k] }
  loss += A[len(c) - 1]
  for k in reverse 0..len(c) { A[k] -= c[k] }
  A[len(c) + 2147483647 + 2147483647 + 1] -= 1.0
  A -> zeros(len(c))
}`
    const got = same(src, 'f', () => [0, new Float64Array([1, 2, 3, 4])])
    console.log(got)
    for (const k of Object.keys(got)) expect(got[k], k).toEqual(got.reference)
  })
})

describe('review 14d: finite-history, reads compared as exact integers', () => {
  it("a read 2^32 − 1 below the written element is the next (later) iteration's element", () => {
    const src = `
fn f(loss: f64, c: f64[]) {
  A: f64[] <- zeros(len(c) + 1)
  for k in 0..len(c) { A[k] += A[k - 2147483647 - 2147483647 - 1] * 0.0 + c[k] }
  loss += A[0]
  for k in reverse 0..len(c) { A[k] -= A[k - 2147483647 - 2147483647 - 1] * 0.0 + c[k] }
  if (A[0] != A[0], ~) { loss += A[len(c) + 9] }
  A -> zeros(len(c) + 1)
}`
    const got = same(src, 'f', () => [0, new Float64Array([1, 1, Number.POSITIVE_INFINITY])])
    console.log(got)
    for (const k of Object.keys(got)) expect(got[k], k).toEqual(got.reference)
  })
})

describe('review 14d: first-writes (init updates, tables without zeroing), reads compared as exact integers', () => {
  it('a read 2^32 − 1 below the written element is the next element, not yet written (checks off, stale memory)', () => {
    const src = `
fn f(y: f64[], x: f64[]) {
  t: f64[] <- zeros(len(x) + 1)
  t[0] += x[0]
  for k in 1..len(x) { t[k] += t[k - 2147483647 - 2147483647 - 1] * 1.0 + x[k] }
  y[0] += t[len(x) - 1]
  for k in reverse 1..len(x) { t[k] -= t[k - 2147483647 - 2147483647 - 1] * 1.0 + x[k] }
  t[0] -= x[0]
  t -> zeros(len(x) + 1)
}`
    const run = (e: { compile(s: string): Record<string, (...a: unknown[]) => unknown> }) => {
      const f = e.compile(src).f!
      // (a long call first: memory and pools hold NaN and 1e308)
      f(
        new Float64Array(1),
        Float64Array.from({ length: 200 }, (_, i) => (i % 2 ? Number.NaN : 1e308)),
      )
      f(new Float64Array(1), Float64Array.of(1e308, 1e308, 1e308))
      return outcome(() => f(new Float64Array(1), Float64Array.of(1, 2, 3)))
    }
    const want = run(referenceBackend({ checks: false }) as never)
    expect(want).toBe('[["3"],["1","2","3"]]')
    for (const [name, b] of [
      ['cpu', cpuBackend],
      ['wasm', wasmBackend],
    ] as const)
      expect(run(backendUnderTest(b, { checks: false }) as never), name).toEqual(want)
  })
})
