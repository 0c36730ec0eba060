/**
 * Pass `finite-uncompute` (see `@tenet/ir`) and the inline `$near` of a deallocation check in a
 * loop, on compiled programs with run-time checks on: a routine's f64 ancillas uncomputed by
 * `~routine`, in a loop, compute the reference interpreter's values, and where a value is not
 * finite (NaN, ±Infinity) the deallocation check fails as the reference's does (code, message,
 * source location); the uncomputes no longer evaluate their values again.
 */
import { describe, expect, it } from 'vitest'
import { TENET_FUNCTION } from '@tenet/reversible'
import { backendUnderTest, raisedError, referenceBackend } from '@tenet/testing'
import { cpuBackend } from './index.js'

const cpu = backendUnderTest(cpuBackend, { checks: true })
const reference = referenceBackend({ checks: true })

/** Per element: a rotation angle's cosine and sine in a routine, a branch on the radius, and the copy. */
const src = `
fn f(out: f64[], x: f64[], w: f64[]) {
  for i in 0..len(x) {
    r <- 0.0
    c <- 0.0
    s <- 0.0
    routine {
      r += sqrt(x[i])
      if (r != 0.0, ~) {
        c += cos(r) / r
        s += sin(r)
      } else {
        c += 1.0
      }
    }
    out[i] += w[i] * (c + s)
    ~routine
    s -> 0.0
    c -> 0.0
    r -> 0.0
  }
}`

const code = (): string =>
  (cpu.compile(src).f![TENET_FUNCTION] as { compiled: { sourceOf(n: string, i: boolean): string } }).compiled.sourceOf(
    'f',
    false,
  )

describe('finite-uncompute and the inline $near with checks on (cpu)', () => {
  it('uncomputes without evaluating the values again, and checks inline (generated code)', () => {
    const c = code()
    expect(c.match(/Math\.(sqrt|cos|sin)\(/g)).toHaveLength(3)
    expect(c).toMatch(/(v\d+) = \(\1 - \1\)/)
    expect(c).toMatch(/if \(!\(v(\d+) === 0 \|\| Math\.abs\(v\1\) <= \$tol\)\) rt\.fail/)
    expect(c).not.toMatch(/\$near\(/)
  })

  it('computes the reference’s values', () => {
    const x = Float64Array.from([0, 0.25, 1, 2, 9, 1e-300])
    const w = Float64Array.from([1, -2, 3, 0.5, 1, 2])
    const want = reference.compile(src).f!(new Float64Array(6), x, w)
    const got = cpu.compile(src).f!(new Float64Array(6), x, w)
    expect(got).toEqual(want)
  })

  it('fails as the reference does where a value is not finite', () => {
    for (const bad of [-1, Number.POSITIVE_INFINITY, Number.NaN, 1e-320]) {
      const args = () => [new Float64Array(3), Float64Array.from([1, bad, 4]), Float64Array.from([1, 1, 1])] as const
      const want = raisedError(() => reference.compile(src).f!(...args()))
      if (bad !== 1e-320) expect(want).toMatch(/^runtime\/dealloc/)
      expect(raisedError(() => cpu.compile(src).f!(...args()))).toBe(want)
    }
  })
})

describe('finite-uncompute across a call that only reads a scalar (cpu, checks on)', () => {
  // (paper 001's Bessel routine: `ifactorial(fact, nu)` between `p += h ** nu` and `p -= h ** nu`;
  // the callee is large enough to stay a call, and uncalled by `~routine`)
  const body = Array.from({ length: 12 }, () => '  out += 1\n  out -= 1').join('\n')
  const callSrc = `
fn g(out: i32, n: i32) {
  out += n
${body}
}
fn f(y: f64[], x: f64[], nu: i32) {
  for i in 0..len(x) {
    p <- 0.0
    k: i32 <- 0
    routine {
      p += x[i] ** nu
      g(k, nu)
    }
    y[i] += p * f64(k)
    ~routine
    k -> 0
    p -> 0.0
  }
}`
  const fCode = (): string =>
    (
      cpu.compile(callSrc).f![TENET_FUNCTION] as { compiled: { sourceOf(n: string, i: boolean): string } }
    ).compiled.sourceOf('f', false)

  it('uncomputes p as `p -= p`, the power evaluated once (generated code)', () => {
    const c = fCode()
    expect(c).toMatch(/(v\d+) = \(\1 - \1\)/)
    expect(c.match(/\$pow\(/g)).toHaveLength(1)
  })

  it('computes the reference’s values, and fails as the reference does where the power is not finite', () => {
    let failures = 0
    for (const nu of [2, 3, -1]) {
      for (const bad of [0.5, 0, Number.POSITIVE_INFINITY, Number.NaN, 1e300]) {
        const args = () => [new Float64Array(3), Float64Array.from([1.5, bad, 2]), nu] as const
        const wantError = raisedError(() => reference.compile(callSrc).f!(...args()))
        expect(raisedError(() => cpu.compile(callSrc).f!(...args()))).toBe(wantError)
        if (wantError === 'no error')
          expect(cpu.compile(callSrc).f!(...args())).toEqual(reference.compile(callSrc).f!(...args()))
        else failures++
      }
    }
    // (Infinity and NaN fail the deallocation of p, and so do 0 ** −1 and 1e300 ** 2, 3)
    expect(failures).toBeGreaterThan(4)
  })
})
