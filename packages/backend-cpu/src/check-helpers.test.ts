/**
 * The array deallocation checks of the generated code (`checkHelpers` of `codegen.ts`): `$allNear`
 * and `$allZero` pass eight elements at a time where the sum of their magnitudes passes, and fall
 * back to the element-by-element loop from the first block that does not. Their result must be the
 * element-by-element one on every input: lengths around the block size, one or two bad elements at
 * every position (NaN, ±∞, just above and at the tolerance, the largest double, whose block sum
 * overflows), and odd tolerances (0, negative, +∞, NaN). The pooled variants (`…Z`) give the same
 * answers, and zero what they passed where they are given at most `ZERO_STORES_MAX_ELEMENTS`.
 */
import { describe, expect, it } from 'vitest'
import { checkHelpers, ZERO_STORES_MAX_ELEMENTS } from './codegen.js'

type Check = (a: ArrayLike<number>, n: number) => boolean
interface Helpers {
  allNear: Check
  allZero: Check
  allNearZ: Check
  allZeroZ: Check
}

function helpers(tolerance: number): Helpers {
  const body = `${checkHelpers(tolerance).join('\n')}\nreturn { allNear: $allNear, allZero: $allZero, allNearZ: $allNearZ, allZeroZ: $allZeroZ }`
  return new Function(body)() as Helpers
}

/** The element-by-element checks, as the helpers were before their block test. */
function reference(tolerance: number): { allNear: Check; allZero: Check } {
  return {
    allNear: (a, n) => {
      if (a.length !== n) return false
      for (let i = 0; i < n; i++) if (!(Math.abs(a[i]!) <= tolerance)) return false
      return true
    },
    allZero: (a, n) => {
      if (a.length !== n) return false
      for (let i = 0; i < n; i++) if (a[i] !== 0) return false
      return true
    },
  }
}

const TOLERANCES = [1e-9, 0, -0, -1, Number.POSITIVE_INFINITY, Number.NaN, 1e-300]

/** The arrays: zeros with small residues, and one or two special values at chosen positions. */
function* cases(tolerance: number): Generator<Float64Array> {
  const t = Number.isFinite(tolerance) && tolerance > 0 ? tolerance : 1e-9
  const specials = [
    Number.NaN,
    Number.POSITIVE_INFINITY,
    Number.NEGATIVE_INFINITY,
    t,
    -t,
    t * (1 + 2 ** -52),
    t / 2,
    -0,
    Number.MAX_VALUE,
    -Number.MAX_VALUE,
    5e-324,
    1,
  ]
  for (const n of [0, 1, 7, 8, 9, 15, 16, 17, 24, 31, 32, 33, 40]) {
    yield new Float64Array(n)
    // residues well within the tolerance whose block sums still pass (or not: t/3 each, 8 of them)
    yield Float64Array.from({ length: n }, (_, i) => (i % 3 === 0 ? t / 3 : -t / 5))
    for (const v of specials)
      for (let p = 0; p < n; p++) {
        const a = new Float64Array(n)
        a[p] = v
        yield a
        // two of them, the second in the next block
        if (p + 9 < n) {
          const b = Float64Array.from(a)
          b[p + 9] = v
          yield b
        }
      }
    // the largest doubles everywhere: every block's sum overflows to +∞
    yield new Float64Array(n).fill(Number.MAX_VALUE)
  }
}

describe('array deallocation checks (block test, then element by element)', () => {
  for (const tolerance of TOLERANCES)
    it(`agree with the element-by-element checks, tolerance ${tolerance}`, () => {
      const h = helpers(tolerance)
      const r = reference(tolerance)
      let count = 0
      const wrong: string[] = []
      const zeroed = (x: Float64Array) => x.every((y) => Object.is(y, 0))
      for (const a of cases(tolerance)) {
        const near = r.allNear(a, a.length)
        const zero = r.allZero(a, a.length)
        // the pooled variants: the same answer; where they zero (small arrays), every element +0
        // when they pass; a larger array is left as it was
        const b = Float64Array.from(a)
        const c = Float64Array.from(a)
        const small = a.length <= ZERO_STORES_MAX_ELEMENTS
        const ok =
          h.allNear(a, a.length) === near &&
          h.allZero(a, a.length) === zero &&
          // a wrong length fails, whatever the elements
          !h.allNear(a, a.length + 1) &&
          !h.allZero(a, a.length + 1) &&
          h.allNearZ(b, b.length) === near &&
          (small ? !near || zeroed(b) : b.every((x, i) => Object.is(x, a[i]))) &&
          h.allZeroZ(c, c.length) === zero &&
          (small ? !zero || zeroed(c) : c.every((x, i) => Object.is(x, a[i])))
        if (!ok) wrong.push(`[${Array.from(a).join(', ')}] (near ${near}, zero ${zero})`)
        count++
      }
      expect(wrong.slice(0, 5)).toEqual([])
      expect(count).toBeGreaterThan(1000)
    })

  it('integer and boolean arrays: exactly zero, the most negative i32 included', () => {
    const h = helpers(1e-9)
    const r = reference(1e-9)
    for (const n of [0, 3, 8, 9, 16, 17, 33]) {
      for (const v of [0, 1, -1, -(2 ** 31), 2 ** 31 - 1]) {
        for (let p = 0; p < n; p++) {
          const a = new Int32Array(n)
          a[p] = v
          expect(h.allZero(a, n)).toBe(r.allZero(a, n))
          expect(h.allZeroZ(Int32Array.from(a), n)).toBe(r.allZero(a, n))
        }
      }
      const all = new Int32Array(n).fill(-(2 ** 31))
      expect(h.allZero(all, n)).toBe(n === 0)
      for (let p = 0; p < n; p++) {
        const b = new Uint8Array(n)
        b[p] = 1
        expect(h.allZero(b, n)).toBe(false)
        expect(h.allZero(new Uint8Array(n), n)).toBe(true)
      }
    }
  })

  it('the code: a block of eight magnitudes summed from −0, then the loop from that block on', () => {
    const code = checkHelpers(1e-9).join('\n')
    console.log(code)
    expect(code).toContain(
      'for (; i + 7 < n; i += 8) if (!(-0 + Math.abs(a[i]) + Math.abs(a[i + 1]) + Math.abs(a[i + 2]) + Math.abs(a[i + 3]) + Math.abs(a[i + 4]) + Math.abs(a[i + 5]) + Math.abs(a[i + 6]) + Math.abs(a[i + 7]) <= $tol)) break; for (; i < n; i++) if (!(Math.abs(a[i]) <= $tol)) return false; return true;',
    )
  })
})
