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
    // (the loop runs in two versions, hoist-bounds': the reads of x and w unchecked where a test
    // before the loop shows them in range, checked each where it does not; each as above)
    const versions = code().split('\n  } else {\n')
    expect(versions).toHaveLength(2)
    for (const c of versions) {
      expect(c.match(/Math\.(sqrt|cos|sin)\(/g)).toHaveLength(3)
      expect(c).toMatch(/(v\d+) = \(\1 - \1\)/)
      expect(c).toMatch(/if \(!\(v(\d+) === 0\)\) rt\.fail/)
    }
    const c = code()
    expect(c).toMatch(/(v\d+) = \(\1 - \1\)/)
    // (after \`y -= y\`, y is +0 or NaN: the check is a comparison with zero, the same test)
    expect(c).toMatch(/if \(!\(v(\d+) === 0\)\) rt\.fail/)
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

  // a call between the computation and its uncompute that only reads what the value reads (\`nu\`,
  // a parameter its callee does not write): the uncompute \`p -= x ** nu\` is still \`p -= p\`
  // (\`scale\` calls another function: the small-call inliner leaves its call at the top level)
  const between = `
fn twice(out: i32, n: i32) {
  out += n * 2
}
fn scale(out: i32, n: i32) {
  twice(out, n)
  twice(out, n)
}
fn g(out: f64, x: f64, nu: i32) {
  p <- 0.0
  k: i32 <- 0
  routine {
    p += x ** nu
    scale(k, nu)
  }
  out += p * f64(k)
  ~routine
  k -> 0
  p -> 0.0
}`
  const gCode = (): string =>
    (
      cpu.compile(between).g![TENET_FUNCTION] as { compiled: { sourceOf(n: string, i: boolean): string } }
    ).compiled.sourceOf('g', false)

  it('a call that only reads what the value reads leaves the uncompute `p -= p` (generated code)', () => {
    const c = gCode()
    expect(c).toMatch(/= FI\d+\(/)
    // the power is evaluated once (the computation), not again in the uncompute
    expect(c.match(/\$pow\(|Math\.pow\(/g)).toHaveLength(1)
    expect(c).toMatch(/(v\d+) = \(\1 - \1\)/)
  })

  it('with such a call, computes the reference’s values and fails where it fails', () => {
    for (const [x, nu] of [
      [1.5, 3],
      [-2, 2],
      [0.5, 0],
      [3, -1],
    ] as const) {
      expect(cpu.compile(between).g!(0.25, x, nu)).toEqual(reference.compile(between).g!(0.25, x, nu))
    }
    // x ** nu not finite: the deallocation check of p fails as the reference's does
    for (const [x, nu] of [
      [1e300, 2],
      [0, -1],
      [Number.NaN, 1],
    ] as const) {
      const want = raisedError(() => reference.compile(between).g!(0.25, x, nu))
      expect(want).toMatch(/^runtime\/dealloc/)
      expect(raisedError(() => cpu.compile(between).g!(0.25, x, nu))).toBe(want)
    }
  })
})
