/**
 * With run-time checks on, the deallocation check of a pooled array ancilla sets its elements to
 * +0 as it checks them and marks the pool's array zeroed, and the next allocation at the site
 * takes it without zeroing (see `pooled` in `codegen.ts`). One compiled module called many times
 * in a row, with calls whose deallocation check fails (an element left nonzero, beyond the
 * tolerance, NaN), calls that throw between the allocation and the check (an index out of range),
 * and calls that pass, including within the tolerance (elements left tiny, not zero) and with
 * −0: every call gives the interpreter's result or error, so no call sees an array a failed call
 * left dirty. (A small array, at most \`ZERO_STORES_MAX_ELEMENTS\` elements, and a larger one,
 * which the check does not zero.)
 */
import { describe, expect, it } from 'vitest'
import { TENET_FUNCTION } from '@tenet/reversible'
import { backendUnderTest, raisedError, referenceBackend } from '@tenet/testing'
import { cpuBackend } from './index.js'

const cpu = backendUnderTest(cpuBackend, { checks: true })
const reference = referenceBackend({ checks: true })

/**
 * Per point j: a small scratch array filled from x, read, and taken back, except that `leave`
 * (a parameter) is added to one element and not taken back (beyond the tolerance: the check
 * fails; within it: it passes with the element not zero), and `k` indexes the array (out of
 * range: a throw between the allocation and the check).
 */
const src = `
fn f(out: f64[], x: f64[], leave: f64, k: i32) {
  for j in 0..len(x) {
    a: f64[] <- zeros(4)
    a[0] += x[j]
    a[1] += x[j] * x[j]
    a[2] += leave
    out[j] += a[0] + a[1] + a[k]
    a[1] -= x[j] * x[j]
    a[0] -= x[j]
    a -> zeros(4)
  }
}
fn h(out: f64[], x: f64[], leave: f64, k: i32) {
  for j in 0..len(x) {
    a: f64[] <- zeros(20)
    a[0] += x[j]
    a[1] += x[j] * x[j]
    a[2] += leave
    out[j] += a[0] + a[1] + a[k]
    a[1] -= x[j] * x[j]
    a[0] -= x[j]
    a -> zeros(20)
  }
}
fn g(out: i32[], x: i32[], leave: i32) {
  for j in 0..len(x) {
    b: i32[] <- zeros(3)
    b[0] += x[j]
    b[2] += leave
    out[j] += b[0] + b[1] + b[2]
    b[0] -= x[j]
    b -> zeros(3)
  }
}`

const code = (): string =>
  (cpu.compile(src).f![TENET_FUNCTION] as { compiled: { sourceOf(n: string, i: boolean): string } }).compiled.sourceOf(
    'f',
    false,
  )

/** The result or the error. */
function outcome(run: () => unknown): unknown {
  try {
    return JSON.stringify(run(), (_k, v) =>
      ArrayBuffer.isView(v) ? Array.from(v as Float64Array, (y) => (Object.is(y, -0) ? '-0' : String(y))) : v,
    )
  } catch {
    return raisedError(run)
  }
}

describe('pooled array ancillas with checks on (cpu)', () => {
  it('the deallocation check zeroes the pool’s array and marks it; the allocation takes it unzeroed', () => {
    const c = code()
    expect(c).toMatch(/\$allNearZ\((v\d+), 4\) && \(\((PZ\d+) = \1 === PL\d+ && \1\.length <= 16\), true\)/)
    expect(c).toMatch(/\((PZ\d+) \? \(\(\1 = false\), ((?:PL|h)\d+)\) : \$zeroFloat64Array\(\2\)\)/)
  })

  it('calls in a row, failing and passing, give the interpreter’s results and errors', () => {
    const m = cpu.compile(src)
    const r = reference.compile(src)
    const leaves = [0, 1e-12, -1e-12, 0.5, Number.NaN, 0, -0, 1e-300, Number.POSITIVE_INFINITY, 0]
    const xs = [Float64Array.of(1, 2, 3), Float64Array.of(-0, 0.5), Float64Array.of(), Float64Array.of(7)]
    let failures = 0
    let passes = 0
    // (first in a fixed order: a call that leaves an element within the tolerance, one that fails
    // the check, one that throws before it, each followed by a call that reads that element)
    const x3 = Float64Array.of(1, 2, 3)
    const fixed: Array<[number, Float64Array, number]> = [
      [1e-12, x3, 2],
      [0, x3, 2],
      [-1e-12, x3, 0],
      [0, x3, 2],
      [0.5, x3, 1],
      [0, x3, 2],
      [0.25, x3, 6],
      [0, x3, 2],
      [-0, x3, 2],
      [1e-9, x3, 2],
      [0, x3, 2],
    ]
    for (let call = 0; call < 60 + fixed.length; call++) {
      const [leave, x, k] =
        call < fixed.length
          ? fixed[call]!
          : [
              leaves[call % leaves.length]!,
              xs[(call * 7) % xs.length]!,
              // (an index out of range now and then: a throw between the allocation and the check)
              call % 9 === 4 ? 6 : call % 4,
            ]
      const args = () => [new Float64Array(x.length), x.slice(), leave, k] as const
      const want = outcome(() => r.f!(...args()))
      if (typeof want === 'string' && want.startsWith('runtime/')) failures++
      else passes++
      expect(
        outcome(() => m.f!(...args())),
        `call ${call}: leave ${leave}, k ${k}`,
      ).toEqual(want)
      // (an array above ZERO_STORES_MAX_ELEMENTS: checked without stores, zeroed when allocated again)
      expect(
        outcome(() => m.h!(...args())),
        `h call ${call}`,
      ).toEqual(outcome(() => r.h!(...args())))
      // (the exact one: an i32 array)
      const gi = () =>
        [new Int32Array(x.length), Int32Array.from(x, (v) => Math.trunc(v)), call % 5 === 2 ? 1 : 0] as const
      expect(
        outcome(() => m.g!(...gi())),
        `g call ${call}`,
      ).toEqual(outcome(() => r.g!(...gi())))
    }
    expect(failures).toBeGreaterThan(10)
    expect(passes).toBeGreaterThan(10)
  })
})
