/**
 * Pass `exact-uncompute` of `@tenet/ir` on compiled programs, cpu and wasm, with run-time checks
 * on: paper 001's Bessel function (ν! by the integer approximate multiplier in a routine, uncalled
 * by `~routine`), once and over a batch, computes the reference interpreter's values bit for bit,
 * forward and inverse, with the pass and without; where the factorial itself fails (ν! past the
 * i32 range) every engine raises the reference's error; and a helper that is not exact (an
 * `@unchecked` deallocation) keeps its uncall, whose check fails as the reference's does. (The
 * printed IR before and after is in `exact-uncompute.test.ts` of `@tenet/ir`.)
 */
import { describe, expect, it } from 'vitest'
import { cpuBackend } from '@tenet/backend-cpu'
import { disabledPasses } from '@tenet/ir/backend'
import { TENET_FUNCTION } from '@tenet/reversible'
import { backendUnderTest, raisedError, referenceBackend } from '@tenet/testing'
import { wasmBackend } from './index.js'
import { bessel } from './test-util.js'

// paper 001's listing (`bessel` of test-util: the approximate multipliers, ν! in a routine), batched
const src = `${bessel}
fn ibesselj_batch(out: f64[], nu: i32, z: f64[]) {
  for i in 0..len(z) { ibesselj(out[i], nu, z[i]) }
}`

const reference = referenceBackend({ checks: true })
const engines = [backendUnderTest(cpuBackend, { checks: true }), backendUnderTest(wasmBackend, { checks: true })]

/** Runs `f` with pass `exact-uncompute` switched off (a source of its own: the compile caches key on it). */
function withoutPass<T>(f: (text: string) => T): T {
  disabledPasses.add('exact-uncompute')
  try {
    return f(`${src}\n`)
  } finally {
    disabledPasses.delete('exact-uncompute')
  }
}

const zs = [0.1, 0.75, 1, 2.5, 7]

describe('pass `exact-uncompute` on compiled programs (checks on)', () => {
  it('leaves the factorial’s uncall out of the generated code (cpu)', () => {
    const info = engines[0]!.compile(src).ibesselj![TENET_FUNCTION] as {
      compiled: { sourceOf(n: string, i: boolean): string }
    }
    const code = info.compiled.sourceOf('ibesselj', false)
    expect(code).toMatch(/= FI\d+\(/)
    expect(code).not.toMatch(/= BI\d+\(/)
    expect(code).toMatch(/(v\d+) = \(\(\1 - \1\) \| 0\)/)
    const plain = withoutPass((t) =>
      (
        engines[0]!.compile(t).ibesselj![TENET_FUNCTION] as { compiled: { sourceOf(n: string, i: boolean): string } }
      ).compiled.sourceOf('ibesselj', false),
    )
    expect(plain).toMatch(/= BI\d+\(/)
  })

  it('computes the reference’s values bit for bit, forward and inverse, with the pass and without', () => {
    for (const nu of [0, 1, 2, 5]) {
      const want = zs.map((z) => reference.compile(src).ibesselj!(0, nu, z))
      const back = zs.map((z, k) => reference.compile(src).ibesselj!.inverse((want[k] as number[])[0]!, nu, z))
      for (const e of engines) {
        expect(zs.map((z) => e.compile(src).ibesselj!(0, nu, z))).toEqual(want)
        expect(withoutPass((t) => zs.map((z) => e.compile(t).ibesselj!(0, nu, z)))).toEqual(want)
        expect(zs.map((z, k) => e.compile(src).ibesselj!.inverse((want[k] as number[])[0]!, nu, z))).toEqual(back)
      }
      const batch = (b: { compile(t: string): Record<string, ((...a: unknown[]) => unknown) | undefined> }, t = src) =>
        b.compile(t).ibesselj_batch!(new Float64Array(zs.length), nu, Float64Array.from(zs))
      const wantBatch = batch(reference)
      for (const e of engines) {
        expect(batch(e)).toEqual(wantBatch)
        expect(withoutPass((t) => batch(e, t))).toEqual(wantBatch)
      }
    }
  })

  it('raises the reference’s error where the factorial fails (ν! past the i32 range)', () => {
    const want = raisedError(() => reference.compile(src).ibesselj!(0, 13, 1))
    expect(want).toMatch(/^runtime\//)
    const wantBatch = raisedError(() =>
      reference.compile(src).ibesselj_batch!(new Float64Array(2), 13, Float64Array.of(1, 2)),
    )
    for (const e of engines) {
      expect(raisedError(() => e.compile(src).ibesselj!(0, 13, 1))).toBe(want)
      expect(withoutPass((t) => raisedError(() => e.compile(t).ibesselj!(0, 13, 1)))).toBe(want)
      expect(raisedError(() => e.compile(src).ibesselj_batch!(new Float64Array(2), 13, Float64Array.of(1, 2)))).toBe(
        wantBatch,
      )
    }
  })

  it('keeps the uncall of a helper that is not exact: its failing check fires as the reference’s', () => {
    // (the deallocation of anc is not checked in g: the uncall does not restore y, and its own check of anc fails)
    const text = `
fn g(y: i32, n: i32) {
  anc: i32 <- 0
  @unchecked { anc += n }
  y += anc
  @unchecked { anc -> 0 }
}
fn f(out: f64, n: i32) {
  y: i32 <- 0
  g(y, n)
  out += f64(y)
  ~g(y, n)
  y -> 0
}`
    const want = raisedError(() => reference.compile(text).f!(0, 3))
    expect(want).toMatch(/^runtime\/dealloc/)
    for (const e of engines) expect(raisedError(() => e.compile(text).f!(0, 3))).toBe(want)
  })
})
