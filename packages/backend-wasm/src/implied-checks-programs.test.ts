/**
 * Pass `implied-checks` of `@tenet/ir` on compiled programs, cpu and wasm, with run-time checks
 * on: the leapfrog's acceleration (a pair's separation, squared length, length and force factor
 * under `routine` / `~routine`), f64 and f32, computes the reference interpreter's values, and
 * where a value is not finite (a position ±∞ or NaN, two bodies at one place, a squared length
 * that overflows) fails with the reference's error — the same code, message and location — as it
 * does with the pass switched off: the checks left out are those that cannot fail where they
 * stood. (The printed IR before and after is in `implied-checks.test.ts` of `@tenet/ir`.)
 *
 * The entry check of a loop run backwards right after the loop (a routine's `~routine`), which the
 * loop's exit decides, is left out: the Bessel listing computes the reference's values, and a
 * program that writes a name of the condition in between (an update, a call) fails with the
 * reference's error, with the pass and without. A square's check decides its base's (the
 * listing's (z/2)²): z = ±∞ or NaN fails the square's check, as on the reference.
 */
import { describe, expect, it } from 'vitest'
import { cpuBackend } from '@tenet/backend-cpu'
import { disabledPasses } from '@tenet/ir/backend'
import { accelSource, backendUnderTest, besselSource, raisedError, referenceBackend } from '@tenet/testing'
import { wasmBackend } from './index.js'

const accel = (T: 'f64' | 'f32') => `
${accelSource(true, T).trimEnd()}`

const backends = [
  referenceBackend({ checks: true }),
  backendUnderTest(cpuBackend, { checks: true }),
  backendUnderTest(wasmBackend, { checks: true }),
]

/** Three bodies' positions, with `bad` in place of body 1's y coordinate. */
const positions = (bad = 0.5) => [0, 0, 0, 1, bad, 0, -0.5, 2, 1.5]

describe('pass `implied-checks` on compiled programs (checks on)', () => {
  for (const T of ['f64', 'f32'] as const) {
    const A = T === 'f64' ? Float64Array : Float32Array
    const run = (b: (typeof backends)[number], x: number[], inverse = false) => {
      const a = new A(9)
      const f = b.compile(accel(T)).accel!
      f(a, A.from(x), A.of(1, 2, 3), 3, 0.5)
      // (the inverse, from what the forward run left: its checks left out the same way)
      if (inverse) f.inverse(a, A.from(x), A.of(1, 2, 3), 3, 0.5)
      return Array.from(a)
    }

    it(`${T}: computes the reference's accelerations, bit for bit`, () => {
      const want = run(backends[0]!, positions())
      expect(want.some((v) => v !== 0)).toBe(true)
      for (const b of backends.slice(1)) expect(run(b, positions())).toEqual(want)
      const back = run(backends[0]!, positions(), true)
      for (const b of backends.slice(1)) expect(run(b, positions(), true)).toEqual(back)
    })

    // ±∞: r2 and r are ∞, s is 0 — the check of r fails; NaN: s is NaN, its check fails first;
    // two bodies at one place: s = g·m / 0 is ∞; a squared length past the type's largest value
    const bad = [Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, Number.NaN, 0, T === 'f64' ? 1e200 : 1e20]
    it(`${T}: fails as the reference does where a value is not finite, with the pass and without`, () => {
      for (const y of bad) {
        const x = y === 0 ? [0, 0, 0, 0, 0, 0, -0.5, 2, 1.5] : positions(y)
        const want = raisedError(() => run(backends[0]!, x))
        // (r where r2 and the separation, whose checks are left out, are not finite either)
        expect(want).toMatch(
          y === Number.POSITIVE_INFINITY ? /cannot deallocate `r`/ : /^runtime\/dealloc \| cannot deallocate `(s|r)`/,
        )
        for (const b of backends.slice(1)) {
          expect(raisedError(() => run(b, x))).toBe(want)
          disabledPasses.add('implied-checks')
          try {
            expect(
              raisedError(() => b.compile(`${accel(T)}\n`).accel!(new A(9), A.from(x), A.of(1, 2, 3), 3, 0.5)),
            ).toBe(want)
          } finally {
            disabledPasses.delete('implied-checks')
          }
        }
      }
    })
  }

  it('the Bessel listing without the entry check of its series run backwards: the reference values, bit for bit', () => {
    const run = (b: (typeof backends)[number], z: number) => {
      const f = b.compile(besselSource).ibesselj!
      return [0, 1, 2, 5].map((nu) => (f(0, nu, z) as number[])[0])
    }
    for (const z of [0.1, 1, 2.5, 7]) {
      const want = run(backends[0]!, z)
      for (const b of backends.slice(1)) expect(run(b, z)).toEqual(want)
    }
  })

  /** A loop and the same loop run backwards (\`routine\` / \`~routine\` by hand), \`between\` the two. */
  const series = (between: string) => `
fn bump(m: i32) { m += 1 }
fn f(out: f64, n: i32) {
  k: i32 <- 0
  while (k < n, k != 0) { k += 1 }
  out += f64(k)
  ${between}
  while (k != 0, k < n) { k -= 1 }
  k -> 0
}`
  it('fails as the reference does where a name of the condition is written between the loop and its uncompute', () => {
    for (const between of ['n += 1', 'bump(n)', 'k += 0\n  n += 1']) {
      const want = raisedError(() => backends[0]!.compile(series(between)).f!(0, 3))
      expect(want).toMatch(/^runtime\/post-condition \| .* must be false when the loop starts \(at [89]:3\)/)
      for (const b of backends.slice(1)) {
        expect(raisedError(() => b.compile(series(between)).f!(0, 3))).toBe(want)
        disabledPasses.add('implied-checks')
        try {
          expect(raisedError(() => b.compile(`${series(between)}\n`).f!(0, 3))).toBe(want)
        } finally {
          disabledPasses.delete('implied-checks')
        }
      }
    }
    // (nothing in between: the check left out could not fail)
    for (const b of backends) expect((b.compile(series('')).f!(0, 3) as number[])[0]).toBe(3)
  })

  it("fails as the reference does where z/2 is not finite: the square's check, its base's left out", () => {
    const powers = `
fn f(out: f64, x: f64) {
  h: f64 <- 0.0
  h += x / 2.0
  p: f64 <- 0.0
  p += h ** 2
  out += p
  p -= h ** 2
  p -> 0.0
  h -= x / 2.0
  h -> 0.0
}`
    expect((backends[0]!.compile(powers).f!(0, 3) as number[])[0]).toBe(2.25)
    for (const b of backends.slice(1)) expect((b.compile(powers).f!(0, 3) as number[])[0]).toBe(2.25)
    for (const x of [Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, Number.NaN]) {
      const want = raisedError(() => backends[0]!.compile(powers).f!(0, x))
      expect(want).toMatch(/^runtime\/dealloc \| cannot deallocate `p`/)
      for (const b of backends.slice(1)) {
        expect(raisedError(() => b.compile(powers).f!(0, x))).toBe(want)
        disabledPasses.add('implied-checks')
        try {
          expect(raisedError(() => b.compile(`${powers}\n`).f!(0, x))).toBe(want)
        } finally {
          disabledPasses.delete('implied-checks')
        }
      }
    }
  })
})
