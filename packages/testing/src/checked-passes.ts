/**
 * The behaviour of the passes that run with run-time checks on (`CHECKED_PASSES` of `@tenet/ir`),
 * as vitest tests for any backend: the same values as the reference interpreter where it raises
 * nothing, and its errors (code, message, source location) where it raises them.
 *
 * - `scalar-arrays`: a small array ancilla used at literal positions becomes scalars, and its
 *   deallocation check stays the array's (one check over every element);
 * - `tabulate`: tables of cos θ replace the rotations' evaluations, and the bounds check of each
 *   angle read stays the angle array's;
 * - `unroll-swaps`: see `checked-swap-loops.ts`.
 * - `interchange`, `jam`, `hoist-calls`: the column loop of the unitary multiply moves innermost,
 *   two rotations share a pass over the columns, and each rotation's cos θ and sin θ are computed
 *   once before it. A program with one violation raises the reference's error (or, for an index
 *   out of range that the hoisted bounds check of the column loop catches, the same check at the
 *   same statement, naming the column loop's far end); one with two independent violations may
 *   raise either: the passes change the order in which failing checks are reached, nothing else.
 */
import { describe, expect, it } from 'vitest'
import { pairScratchArgs, pairScratchProgram, raisedError, unitaryMultiplySource } from './checked-programs.js'
import { referenceBackend, type BackendUnderTest } from './conformance.js'
import { describeCheckedSwapLoops } from './checked-swap-loops.js'

/** Registers the checked-passes tests of `backend` (compiled with checks on). */
export function describeCheckedPasses(backend: BackendUnderTest): void {
  const reference = referenceBackend({ checks: true })
  describeCheckedSwapLoops(backend)
  const undo = 'x[3 * j + c] - x[3 * i + c]'

  describe(`scalar-arrays with checks on (${backend.name})`, () => {
    for (const T of ['f64', 'f32', 'i32'] as const) {
      it(`${T}: runs as the reference does when the array is returned to zeros`, () => {
        const src = pairScratchProgram(T, undo)
        const want = pairScratchArgs(T),
          got = pairScratchArgs(T)
        reference.compile(src).f!(...want)
        backend.compile(src).f!(...got)
        expect(Array.from(got[0])).toEqual(Array.from(want[0]))
        expect(Array.from(got[0]).some((v) => v !== 0)).toBe(true)
      })

      it(`${T}: raises the array's deallocation error, as the reference does, when one element is not returned`, () => {
        // only element 1 keeps a value: the per-element check must look at every element
        const src = pairScratchProgram(T, undo, `\n  dx[1] += ${T === 'i32' ? '1' : '1.0'}`)
        const want = raisedError(() => reference.compile(src).f!(...pairScratchArgs(T)))
        expect(want).toMatch(/^runtime\/dealloc \| cannot deallocate `dx`: it holds an array that is not zeros\(3\)/)
        expect(raisedError(() => backend.compile(src).f!(...pairScratchArgs(T)))).toBe(want)
      })
    }

    it('f64: an element off by more than the tolerance fails, within it passes, as the reference decides', () => {
      for (const off of ['1e-6', '1e-12']) {
        const src = pairScratchProgram('f64', undo, `\n  dx[2] += ${off}`)
        const want = raisedError(() => reference.compile(src).f!(...pairScratchArgs('f64')))
        expect(want).toEqual(off === '1e-6' ? expect.stringMatching(/^runtime\/dealloc/) : 'no error')
        expect(raisedError(() => backend.compile(src).f!(...pairScratchArgs('f64')))).toBe(want)
      }
    })

    it('the inverse keeps the check too', () => {
      const src = pairScratchProgram('f64', undo, '\n  dx[0] += 2.0')
      const inv = (b: BackendUnderTest) => raisedError(() => b.compile(src).f!.inverse!(...pairScratchArgs('f64')))
      const want = inv(reference)
      expect(want).toMatch(/^runtime\/dealloc/)
      expect(inv(backend)).toBe(want)
    })
  })

  describe(`tabulate with checks on (${backend.name})`, () => {
    const M = 6,
      N = 5
    const angles = (count: number) => Float64Array.from({ length: count }, (_, i) => 0.1 + 0.3 * i)
    const matrix = () => Float64Array.from({ length: M * N }, (_, i) => Math.sin(i + 1))
    const rotations = (M * (M - 1)) / 2
    const both = (run: (b: BackendUnderTest) => unknown) => [
      raisedError(() => run(reference)),
      raisedError(() => run(backend)),
    ]

    it('computes the reference’s bits', () => {
      const want = [matrix(), angles(rotations), M, N] as const
      const got = [matrix(), angles(rotations), M, N] as const
      reference.compile(unitaryMultiplySource).f!(...want)
      backend.compile(unitaryMultiplySource).f!(...got)
      expect(Array.from(got[0])).toEqual(Array.from(want[0]))
      const y0 = new Float64Array(M * N),
        y1 = new Float64Array(M * N)
      reference.compile(unitaryMultiplySource).g!(y0, matrix(), angles(M), M, N)
      backend.compile(unitaryMultiplySource).g!(y1, matrix(), angles(M), M, N)
      expect(Array.from(y1)).toEqual(Array.from(y0))
    })

    it('raises the out-of-bounds error of the angle array, as the reference does, when the angles are too few', () => {
      const [want, got] = both((b) => b.compile(unitaryMultiplySource).f!(matrix(), angles(rotations - 1), M, N))
      expect(want).toMatch(/^runtime\/out-of-bounds \| .*`theta`/)
      expect(got).toBe(want)
      const [wantG, gotG] = both((b) =>
        b.compile(unitaryMultiplySource).g!(new Float64Array(M * N), matrix(), angles(M - 1), M, N),
      )
      expect(wantG).toMatch(/^runtime\/out-of-bounds \| .*`theta`/)
      expect(gotG).toBe(wantG)
    })

    it('raises the deallocation error of the counter, as the reference does, when the angles are too many', () => {
      const [want, got] = both((b) => b.compile(unitaryMultiplySource).f!(matrix(), angles(rotations + 1), M, N))
      expect(want).toMatch(/^runtime\/dealloc/)
      expect(got).toBe(want)
    })
  })

  describe(`interchange, jam and hoist-calls with checks on (${backend.name})`, () => {
    const angles = (count: number) => Float64Array.from({ length: count }, (_, i) => 0.1 + 0.3 * i)
    const matrix = (length: number) => Float64Array.from({ length }, (_, i) => Math.sin(i + 1))
    const rotations = (M: number) => (M * (M - 1)) / 2
    /** `f`'s error on the reference and on the backend, for x of `xs` elements and `ts` angles. */
    const both = (xs: number, ts: number, M: number, N: number) =>
      [reference, backend].map((b) =>
        raisedError(() => b.compile(unitaryMultiplySource).f!(matrix(xs), angles(ts), M, N)),
      ) as [string, string]
    // (M = 6: an even number of rotations per pass, but for j = 0, 2, 4; M = 7: odd for j = 1, 3, 5)
    const sizes = [
      [6, 5],
      [7, 3],
      [5, 1],
    ] as const

    it('computes the reference’s bits, and nothing (no error) when there are no columns', () => {
      for (const [M, N] of sizes) {
        const want = [matrix(M * N), angles(rotations(M)), M, N] as const
        const got = [matrix(M * N), angles(rotations(M)), M, N] as const
        reference.compile(unitaryMultiplySource).f!(...want)
        backend.compile(unitaryMultiplySource).f!(...got)
        expect(Array.from(got[0])).toEqual(Array.from(want[0]))
        expect(Array.from(got[0])).not.toEqual(Array.from(matrix(M * N)))
      }
      // n = 0: the loop never runs, so neither does its counter's check (here it would fail)
      expect(both(0, 2, 6, 0)).toEqual(['no error', 'no error'])
    })

    it('one violation: the reference’s error (code, message, location)', () => {
      for (const [M, N] of sizes) {
        const R = rotations(M),
          X = M * N
        // too few angles by 1, 2, 3 (the last rotation in a jammed pair or alone), too many
        for (const ts of [R - 1, R - 2, R - 3, R + 1]) {
          const [want, got] = both(X, ts, M, N)
          expect(want).toMatch(ts < R ? /^runtime\/out-of-bounds \| .*`theta`/ : /^runtime\/dealloc/)
          expect(got).toBe(want)
        }
        // the matrix one element short: the last column's last row, first reached by the first rotation
        const [want, got] = both(X - 1, R, M, N)
        expect(want).toMatch(/^runtime\/out-of-bounds \| .*`x`/)
        expect(got).toBe(want)
      }
    })

    it('one violation an element short of the last column but one: the same check, at the same statement', () => {
      // (the bounds check of the column loop, hoisted before it, names the far end of the range:
      // index M − 2 + M·(N − 1) of the rotation's first argument, where the reference, column by
      // column, met M − 1 + M·(N − 2), of its second)
      const M = 6,
        N = 5
      const [want, got] = both(M * N - M - 1, rotations(M), M, N)
      const parts = (e: string) => {
        const m =
          /^(runtime\/out-of-bounds) \| index \d+ is out of bounds for `(\w+)` \(length (\d+)\)[\s\S]*\| (\d+):\d+$/.exec(
            e,
          )
        return m && [m[1], m[2], m[3], m[4]]
      }
      expect(parts(want)).toEqual(['runtime/out-of-bounds', 'x', String(M * N - M - 1), '6'])
      expect(parts(got)).toEqual(parts(want))
    })

    it('two independent violations: the error of one of them (the order changes, nothing else)', () => {
      const M = 6,
        N = 5
      const R = rotations(M),
        X = M * N
      const short = both(X - 1, R, M, N)[0]
      for (const ts of [R + 1, R - 1]) {
        const alone = both(X, ts, M, N)[0]
        const [want, got] = both(X - 1, ts, M, N)
        // the reference meets the angles' violation in column 0, before the matrix's in column N − 1
        expect(want).toBe(alone)
        // the columns' loop innermost: the matrix's violation comes first (the first rotation)
        expect(got).toBe(short)
      }
    })
  })
}
