/**
 * Pass `unroll-swaps` with run-time checks on (`unrollCheckedSwaps` of `@tenet/ir`): the swap
 * loop of `swapPostProgram` runs two iterations per pass, and each keeps its own
 * post-condition check, so the loop's failing iteration (odd: the first copy; even: the second)
 * raises the reference interpreter's error, and so does a deallocation after the loop. Registered
 * by `describeCheckedPasses`.
 */
import { describe, expect, it } from 'vitest'
import { raisedError } from './checked-programs.js'
import { referenceBackend, type BackendUnderTest } from './conformance.js'
import { swapPostProgram } from './swap-loop-programs.js'

/** Registers the tests of pass `unroll-swaps` with checks on for `backend` (compiled with checks on). */
export function describeCheckedSwapLoops(backend: BackendUnderTest): void {
  const reference = referenceBackend({ checks: true })
  const both = (run: (b: BackendUnderTest) => unknown) => [
    raisedError(() => run(reference)),
    raisedError(() => run(backend)),
  ]

  describe(`unroll-swaps with checks on (${backend.name})`, () => {
    it('computes the reference’s bits, forwards and backwards, for odd and even trip counts', () => {
      for (const n of [0, 1, 2, 5, 6]) {
        const want = reference.compile(swapPostProgram).f!
        const got = backend.compile(swapPostProgram).f!
        expect(got(0, 0.7, n, 0, 0)).toEqual(want(0, 0.7, n, 0, 0))
        expect(got.inverse!(1.5, 0.7, n, 0, 0)).toEqual(want.inverse!(1.5, 0.7, n, 0, 0))
      }
    })

    it('raises the post-condition error of the iteration that fails, in the first copy and in the second, as the reference does', () => {
      for (const stop of [1, 2, 3, 4]) {
        const [want, got] = both((b) => b.compile(swapPostProgram).f!(0, 0.7, 5, stop, 0))
        expect(want).toMatch(/^runtime\/post-condition .* after every iteration/)
        expect(got).toBe(want)
        const [wantInv, gotInv] = both((b) => b.compile(swapPostProgram).f!.inverse!(0, 0.7, 5, stop, 0))
        expect(wantInv).not.toBe('no error')
        expect(gotInv).toBe(wantInv)
      }
    })

    it('raises the deallocation error after the loop, as the reference does, and passes within the tolerance', () => {
      for (const n of [3, 4]) {
        for (const bump of [1e-3, 1e-12]) {
          const [want, got] = both((b) => b.compile(swapPostProgram).f!(0, 0.7, n, 0, bump))
          expect(want).toEqual(bump > 1e-8 ? expect.stringMatching(/^runtime\/dealloc/) : 'no error')
          expect(got).toBe(want)
        }
      }
    })
  })
}
