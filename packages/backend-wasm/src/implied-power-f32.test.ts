/**
 * Review 18 (d) of pass `implied-checks` (`@tenet/ir`), checks on, cpu and wasm against the
 * reference interpreter: a passed check of `h ** c` (a literal c > 0) deciding the check of h, and
 * the entry check of a loop run backwards that the loop's exit decides.
 *
 * Defect: in an f32 expression a positive literal exponent below f32's least subnormal (`1e-50`,
 * `5e-324`) is rounded to 0 when evaluated, and `±∞ ** 0` = `NaN ** 0` = 1: the power is finite
 * although h is not, the power's check passes, and h's check — the one that fails on the
 * reference — is left out. The compiled function returns where the reference raises.
 */
import { describe, expect, it } from 'vitest'
import { cpuBackend } from '@tenet/backend-cpu'
import { disabledPasses } from '@tenet/ir/backend'
import { backendUnderTest, raisedError, referenceBackend } from '@tenet/testing'
import { wasmBackend } from './index.js'

const backends = [
  referenceBackend({ checks: true }),
  backendUnderTest(cpuBackend, { checks: true }),
  backendUnderTest(wasmBackend, { checks: true }),
]

/** h = x/2, p = e (a power of h) computed and uncomputed, then h uncomputed. */
const powers = (T: 'f64' | 'f32', e: string) => `
fn f(out: ${T}, x: ${T}) {
  h: ${T} <- 0.0
  h += x / 2.0
  p: ${T} <- 0.0
  p += ${e}
  out += p
  p -= ${e}
  p -> 0.0
  h -= x / 2.0
  h -> 0.0
}`

/** The outcome of f(0, x): its error, or its `out`. */
const outcome = (b: (typeof backends)[number], src: string, x: number): string => {
  let r: unknown
  const e = raisedError(() => {
    r = b.compile(src).f!(0, x)
  })
  return e === 'no error' ? `out = ${(r as number[])[0]}` : e
}

/** Every backend, with the pass and without, has the reference's outcome. */
const expectReference = (src: string, xs: number[]) => {
  for (const x of xs) {
    const want = outcome(backends[0]!, src, x)
    for (const b of backends.slice(1)) {
      expect(outcome(b, src, x), `${b.name} x=${x}`).toBe(want)
      disabledPasses.add('implied-checks')
      try {
        expect(outcome(b, `${src}\n`, x), `${b.name} x=${x}, pass off`).toBe(want)
      } finally {
        disabledPasses.delete('implied-checks')
      }
    }
  }
}

const nonFinite = [Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, Number.NaN]

describe('review18-d: implied-checks, h ** c and loop exits (checks on)', () => {
  it('f32 h ** 1e-50 (the exponent rounds to 0 in f32, ∞ ** 0 = 1): the check of h still fails as on the reference', () => {
    const src = powers('f32', 'h ** 1e-50')
    expect(outcome(backends[0]!, src, Number.POSITIVE_INFINITY)).toMatch(/^runtime\/dealloc \| cannot deallocate `h`/)
    expectReference(src, [...nonFinite, 3])
  })

  it('f32 h ** 5e-324: the check of h still fails as on the reference', () => {
    expectReference(powers('f32', 'h ** 5e-324'), [...nonFinite, 1e200, 3])
  })

  it('holds: f64 and f32 powers of literal exponents, zero, subnormal, huge and negative h (the error or the value of the reference)', () => {
    for (const e of ['h ** 0.5', 'h ** 3', 'h ** 1e-300'])
      expectReference(powers('f64', e), [Number.NEGATIVE_INFINITY, Number.NaN, -3, 2e200, -0, 5e-324])
    for (const e of ['h ** 0.5', 'h ** 1e-45']) expectReference(powers('f32', e), [Number.POSITIVE_INFINITY, 3, 1e30])
  })

  /** A loop and the same loop run backwards (`routine` / `~routine`), `between` the two. */
  const series = (between: string) => `
fn up(k: i32, n: i32) { while (k < n, k != 0) { k += 1 } }
fn f(out: f64, n: i32, m: i32) {
  k: i32 <- 0
  x: f32 <- 0.0
  x += f32(n) * f32(0.1)
  routine { while (f32(k) * f32(0.3) < x && k < n, k != 0) { k += 1 } }
  out += f64(k)
  ${between}
  ~routine
  x -= f32(n) * f32(0.1)
  x -> 0.0
  up(k, m)
  out += f64(k)
  ~up(k, m)
  k -> 0
}`
  it('holds: the entry check of a loop run backwards, with a swap, a call, an `if` or a loop writing its names in between', () => {
    for (const between of [
      '',
      'n <-> m',
      'INC(n)',
      'if (m > 0, m > 0) { n += 1 } else { }',
      'for j in 0..m { n += 1 }',
    ])
      for (const [n, m] of [
        [3, 0],
        [3, 2],
        [-1, 0],
      ]) {
        const src = series(between)
        const want = raisedError(() => backends[0]!.compile(src).f!(0, n, m))
        for (const b of backends.slice(1)) expect(raisedError(() => b.compile(src).f!(0, n, m))).toBe(want)
      }
  })
})
