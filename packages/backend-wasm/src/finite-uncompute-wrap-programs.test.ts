/**
 * Review 19 (d): pass `finite-uncompute`'s "an element a nonzero constant away" (merged from
 * `rk4fwd`) on programs, checks on, cpu and wasm against the reference interpreter. A coefficient
 * of an index polynomial above 2⁵³ is rounded (`polynomial` computes in doubles), so
 * `xs[t·A³ + t + c + 1]` reads as 1 away from `xs[t·A³ + c]` (A = 1000003) though for t = −1 both
 * are `xs[0]`: the uncompute becomes `a -= a` and the reference's `runtime/dealloc` (a holds −2)
 * is lost; the call returns. (The printed IR: `@tenet/ir`'s `review19-d-finite-uncompute-wrap.test.ts`.)
 * What holds: an explicit Euler step that writes the history's next elements between a stage's
 * compute and uncompute, with finite, ±∞ and NaN inputs, forwards and backwards, and the checked
 * entry's `call/overlap` for one array passed twice.
 */
import { describe, expect, it } from 'vitest'
import { cpuBackend } from '@tenet/backend-cpu'
import { backendUnderTest, raisedError, referenceBackend } from '@tenet/testing'
import { wasmBackend } from './index.js'

const bits = (v: unknown): string =>
  JSON.stringify(v, (_k, x) =>
    typeof x === 'number'
      ? Object.is(x, -0)
        ? '-0'
        : String(x)
      : ArrayBuffer.isView(x)
        ? Array.from(x as Float64Array).map((e) => (Object.is(e, -0) ? '-0' : String(e)))
        : x,
  )
function outcome(run: () => unknown): string {
  try {
    return bits(run())
  } catch {
    return raisedError(run)
  }
}
const engines = {
  reference: referenceBackend({ checks: true }),
  cpu: backendUnderTest(cpuBackend, { checks: true }),
  wasm: backendUnderTest(wasmBackend, { checks: true }),
}
function expectAgree(src: string, args: () => unknown[], inverse = false) {
  const run = (m: Record<string, unknown>) => {
    const f = m.f as ((...a: unknown[]) => unknown[]) & { inverse: (...a: unknown[]) => unknown[] }
    const forward = f(...args())
    return inverse ? [bits(forward), f.inverse(...forward)] : forward
  }
  const want = outcome(() => run(engines.reference.compile(src)))
  expect
    .soft(
      outcome(() => run(engines.cpu.compile(src))),
      'cpu',
    )
    .toBe(want)
  expect
    .soft(
      outcome(() => run(engines.wasm.compile(src))),
      'wasm',
    )
    .toBe(want)
  return want
}

const K = 't * 1000003 * 1000003 * 1000003'

describe('review19-d: finite-uncompute, elements a nonzero constant away, on programs (checks on)', () => {
  it("indices equal modulo 2^32 whose polynomial coefficients (above 2^53) round alike: the reference's dealloc error (cpu, wasm return)", () => {
    const src = `
fn f(out: f64, xs: f64[], t: i32) {
  a <- 0.0
  a += xs[${K} + 583896283] * 2.0
  xs[${K} + t + 583896284] += 1.0
  out += a
  a -= xs[${K} + 583896283] * 2.0
  a -> 0.0
}`
    const want = expectAgree(src, () => [0, Float64Array.of(3, 4), -1])
    expect(want).toContain('runtime/dealloc')
  })

  const euler = `
fn f(out: f64, x0: f64[], p: f64, h: f64, n: i32) {
  xs: f64[] <- zeros(2 * n + 2)
  xs[0] += x0[0]
  xs[1] += x0[1]
  for t in 0..n {
    a <- 0.0
    a += xs[2 * t] * p - xs[2 * t + 1] * h
    xs[2 * t + 2] += xs[2 * t] + h * a
    xs[2 * t + 3] += xs[2 * t + 1] - h * a
    a -= xs[2 * t] * p - xs[2 * t + 1] * h
    a -> 0.0
  }
  out += xs[2 * n] * xs[2 * n + 1]
  for t in reverse 0..n {
    a <- 0.0
    a += xs[2 * t] * p - xs[2 * t + 1] * h
    xs[2 * t + 3] -= xs[2 * t + 1] - h * a
    xs[2 * t + 2] -= xs[2 * t] + h * a
    a -= xs[2 * t] * p - xs[2 * t + 1] * h
    a -> 0.0
  }
  xs[1] -= x0[1]
  xs[0] -= x0[0]
  xs -> zeros(2 * n + 2)
}`

  it("holds: an Euler step writing the next history elements between a stage's compute and uncompute, finite, ±∞, NaN, -0, both directions", () => {
    for (const [x0, p, h] of [
      [[0.7, -0.2], -0.3, 0.1],
      [[-0, -0], -0, 0.5],
      [[1e308, 1e308], 10, 1],
      [[Infinity, 1], 1, 0.1],
      [[NaN, 0], 1, 0.1],
      [[1, 2], 1e300, 1e10],
    ] as const)
      for (const n of [0, 1, 3])
        for (const inverse of [false, true]) expectAgree(euler, () => [0, Float64Array.from(x0), p, h, n], inverse)
  })

  it('holds: the checked entry rejects one array passed for two parameters (call/overlap), cpu and wasm', () => {
    const src = `
fn f(out: f64[], xs: f64[], n: i32) {
  for t in 0..n {
    a <- 0.0
    a += xs[2 * t] * 2.0
    out[2 * t + 2] += a
    a -= xs[2 * t] * 2.0
    a -> 0.0
  }
}`
    const shared = new Float64Array(8).fill(1)
    const want = expectAgree(src, () => [shared, shared, 3])
    expect(want).toContain('call/overlap')
  })
})
