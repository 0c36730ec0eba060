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
}
