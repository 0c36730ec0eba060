/**
 * Step `pair-uncomputes` of pass `pair-series` with run-time checks on: in a map loop of series
 * whose callee uncomputes its loop (`~routine` runs it backwards, as paper 001's Bessel series
 * does), the lanes' uncompute loops run side by side too, each lane's checks kept. The values are
 * the reference interpreter's bits, forwards and backwards; an element whose uncompute fails a
 * check (the loop's pre-condition, false after an iteration run backwards) or whose deallocation
 * after it fails raises the reference's error (code, message, location), wherever it sits in its
 * group of three; where two elements of a group fail, the later one's failing check in the
 * uncompute loop can be reached before the earlier one's deallocation (the order of two
 * independent failing checks, see `pair-series.ts`). Registered by `describeCheckedPasses`.
 */
import { describe, expect, it } from 'vitest'
import { raisedError } from './checked-programs.js'
import { referenceBackend, type BackendUnderTest } from './conformance.js'

/**
 * `batch(ys, xs, ns, nudges, bumps)`: per element, a routine whose loop counts `s` up from `x`
 * while `s < 50` (at most `n` iterations, a swap of `a` and `b` in each), then `s` moved by
 * `nudge` before the `~routine` runs the loop backwards: where `x + n − 1 + nudge ≥ 50` the
 * uncompute's check of the loop's pre-condition fails (in its first iteration, the counter
 * `k < n` and `s < 50.0` read after it); after it `s` moves back and by `bump`, whose
 * deallocation fails beyond the tolerance.
 */
export const uncomputeBatchProgram = `fn f(y: f64, x: f64, n: i32, nudge: f64, bump: f64) {
  k: i32 <- 0
  s <- 0.0
  a <- 0.0
  b <- 0.0
  routine {
    s += x
    a += x * 0.5
    while (k < n && s < 50.0, k != 0) {
      k += 1
      s += 1.0
      b += a * 0.5
      SWAP(a, b)
    }
  }
  y += s + a
  s += nudge
  ~routine
  s -= nudge
  s += bump
  b -> 0.0
  a -> 0.0
  s -> 0.0
  k -> 0
}
fn batch(ys: f64[], xs: f64[], ns: i32[], nudges: f64[], bumps: f64[]) {
  for i in 0..len(xs) { f(ys[i], xs[i], ns[i], nudges[i], bumps[i]) }
}`

/** Registers the tests of step `pair-uncomputes` for `backend` (compiled with checks on). */
export function describeCheckedPairedUncomputes(backend: BackendUnderTest): void {
  const reference = referenceBackend({ checks: true })
  const length = 8
  const args = (...fails: { at: number; nudge?: number; bump?: number }[]) => {
    const ns = Int32Array.from({ length }, (_, i) => 1 + ((i * 5) % 7))
    const nudges = new Float64Array(length),
      bumps = new Float64Array(length)
    for (const fail of fails) {
      if (fail.nudge !== undefined) nudges[fail.at] = fail.nudge
      if (fail.bump !== undefined) bumps[fail.at] = fail.bump
    }
    const xs = Float64Array.from({ length }, (_, i) => 0.25 + 0.5 * i)
    return [new Float64Array(length), xs, ns, nudges, bumps] as const
  }
  const both = (run: (b: BackendUnderTest) => unknown) => [
    raisedError(() => run(reference)),
    raisedError(() => run(backend)),
  ]

  describe(`pair-series' paired uncomputes with checks on (${backend.name})`, () => {
    it('computes the reference’s bits, forwards and backwards', () => {
      for (const inverse of [false, true]) {
        const want = args(),
          got = args()
        const run = (b: BackendUnderTest, a: ReturnType<typeof args>) => {
          const g = b.compile(uncomputeBatchProgram).batch!
          return inverse ? g.inverse!(...a) : g(...a)
        }
        expect(run(backend, got)).toEqual(run(reference, want))
        expect(Array.from(got[0])).toEqual(Array.from(want[0]))
        expect(Array.from(got[0]).every((v) => v !== 0)).toBe(true)
      }
    })

    it('raises the reference’s error where one element fails in its uncompute or after it, wherever it is in its group', () => {
      for (const at of [0, 1, 2, 4, 6, 7]) {
        for (const fail of [
          { at, nudge: 100 },
          { at, nudge: 1e-3 },
          { at, bump: 1e-3 },
        ]) {
          for (const inverse of [false, true]) {
            const [want, got] = both((b) => {
              const g = b.compile(uncomputeBatchProgram).batch!
              return inverse ? g.inverse!(...args(fail)) : g(...args(fail))
            })
            if (!inverse)
              expect(want).toMatch(
                fail.nudge === 100 ? /^runtime\/post-condition/ : fail.bump ? /^runtime\/dealloc/ : /^no error$/,
              )
            expect(got).toBe(want)
          }
        }
      }
    })

    it('where two elements of a group fail, may raise the later one’s uncompute error, which the reference raises without the earlier one', () => {
      // element 0 fails its deallocation (after its uncompute), element 1 its uncompute's first
      // iteration: the joint uncompute loop runs element 1's first iteration before element 0's end
      const ref = raisedError(() =>
        reference.compile(uncomputeBatchProgram).batch!(...args({ at: 0, bump: 1e-3 }, { at: 1, nudge: 100 })),
      )
      expect(ref).toMatch(/^runtime\/dealloc/)
      const got = raisedError(() =>
        backend.compile(uncomputeBatchProgram).batch!(...args({ at: 0, bump: 1e-3 }, { at: 1, nudge: 100 })),
      )
      expect(got).toMatch(/^runtime\/post-condition/)
      expect(got).toBe(
        raisedError(() => reference.compile(uncomputeBatchProgram).batch!(...args({ at: 1, nudge: 100 }))),
      )
      // the earlier one's uncompute failing first: its error, as the reference's
      const [want2, got2] = both((b) =>
        b.compile(uncomputeBatchProgram).batch!(...args({ at: 0, nudge: 100 }, { at: 1, nudge: 100 })),
      )
      expect(got2).toBe(want2)
    })
  })
}
