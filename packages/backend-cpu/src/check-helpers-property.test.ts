/**
 * The block deallocation checks (`$allNear`, `$allZero` and their pooled variants)
 * against element-by-element references on random adversarial arrays: f64, f32 and i32 arrays,
 * −0, subnormals, values at and around the tolerance, NaN, ±∞, sums that overflow, lengths that
 * are not multiples of 8, tolerances −0, 5e-324, 1e-300, the largest double.
 */
import { describe, expect, it } from 'vitest'
import { checkHelpers } from './codegen.js'

type Check = (a: ArrayLike<number>, n: number) => boolean
const helpers = (tol: number) =>
  new Function(
    `${checkHelpers(tol).join('\n')}\nreturn { allNear: $allNear, allZero: $allZero, allNearZ: $allNearZ, allZeroZ: $allZeroZ }`,
  )() as Record<'allNear' | 'allZero' | 'allNearZ' | 'allZeroZ', Check>

const refNear =
  (tol: number): Check =>
  (a, n) => {
    if (a.length !== n) return false
    for (let i = 0; i < n; i++) if (!(Math.abs(a[i]!) <= tol)) return false
    return true
  }
const refZero: Check = (a, n) => {
  if (a.length !== n) return false
  for (let i = 0; i < n; i++) if (a[i] !== 0) return false
  return true
}

/** A small deterministic generator. */
function rng(seed: number) {
  let s = seed >>> 0
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0
    return s / 2 ** 32
  }
}

describe('block deallocation checks: properties', () => {
  for (const tol of [-0, 0, 5e-324, 1e-300, 1e-9, 0.5, Number.MAX_VALUE])
    it(`equal to the element-by-element checks: tolerance ${Object.is(tol, -0) ? '-0' : tol}`, () => {
      const h = helpers(tol)
      const near = refNear(tol)
      const r = rng(17 + tol)
      const specials = [
        0,
        -0,
        5e-324,
        -5e-324,
        tol,
        -tol,
        tol * 2,
        Number.NaN,
        Infinity,
        -Infinity,
        Number.MAX_VALUE,
        -Number.MAX_VALUE,
        1e-310,
        2 ** -1022,
        1,
      ]
      for (let trial = 0; trial < 1500; trial++) {
        const n = Math.floor(r() * 35)
        const base = r() < 0.5 ? 0 : tol
        const x = Array.from({ length: n }, () =>
          r() < 0.15 ? specials[Math.floor(r() * specials.length)]! : r() < 0.5 ? base : -base,
        )
        for (const A of [Float64Array, Float32Array, Int32Array] as const) {
          const a = A.from(x.map((v) => (A === Int32Array ? (Number.isFinite(v) ? Math.trunc(v) : 0) : v)))
          const want = [near(a, n), refZero(a, n), near(a, n + 1)]
          expect([h.allNear(a, n), h.allZero(a, n), h.allNear(a, n + 1)], `${A.name} ${Array.from(a)}`).toEqual(want)
          const b = A.from(a)
          expect(h.allNearZ(b, n)).toBe(want[0])
          const c = A.from(a)
          expect(h.allZeroZ(c, n)).toBe(want[1])
        }
      }
      // i32 extremes: |−2³¹| sums exactly
      const i = Int32Array.from([0, 0, 0, -2147483648, 0, 0, 0, 0, 0])
      expect(h.allZero(i, 9)).toBe(false)
    })
})
