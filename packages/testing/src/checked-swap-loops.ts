/**
 * Pass `unroll-swaps` with run-time checks on (`unrollCheckedSwaps` of `@tenet/ir`): the swap
 * loop of `swapPostProgram` runs two iterations per pass, and each keeps its own
 * post-condition check, so the loop's failing iteration (odd: the first copy; even: the second)
 * raises the reference interpreter's error, and so does a deallocation after the loop; pass
 * `pair-series` with checks on runs a map loop of them (`swapPostBatchProgram`) three elements at
 * a time, each element's checks kept, and raises the reference's error where one element fails
 * (where two fail, it may reach the later one's first: see `pair-series.ts`; tested here too).
 * Registered by `describeCheckedPasses`.
 */
import { describe, expect, it } from 'vitest'
import { raisedError } from './checked-programs.js'
import { referenceBackend, type BackendUnderTest } from './conformance.js'
import { leafCallBatchProgram, swapPostBatchProgram, swapPostProgram } from './swap-loop-programs.js'

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
  describe(`pair-series with checks on (${backend.name})`, () => {
    const length = 7
    const args = (fail?: { at: number; stop?: number; bump?: number }) => {
      const ns = Int32Array.from({ length }, (_, i) => 2 + ((i * 5) % 7))
      const stops = new Int32Array(length),
        bumps = new Float64Array(length)
      if (fail?.stop !== undefined) stops[fail.at] = fail.stop
      if (fail?.bump !== undefined) bumps[fail.at] = fail.bump
      const xs = Float64Array.from({ length }, (_, i) => 0.3 + 0.1 * i)
      return [new Float64Array(length), xs, ns, stops, bumps] as const
    }

    it('computes the reference’s bits, forwards and backwards', () => {
      for (const inverse of [false, true]) {
        const want = args(),
          got = args()
        const run = (b: BackendUnderTest, a: ReturnType<typeof args>) => {
          const g = b.compile(swapPostBatchProgram).batch!
          return inverse ? g.inverse!(...a) : g(...a)
        }
        run(reference, want)
        run(backend, got)
        expect(Array.from(got[0])).toEqual(Array.from(want[0]))
        expect(Array.from(got[0]).every((v) => v !== 0)).toBe(true)
      }
    })

    it('raises the reference’s error where one element fails, wherever it is in its group of three', () => {
      for (const at of [0, 1, 2, 4, 6]) {
        for (const fail of [
          { at, stop: 1 },
          { at, stop: 2 },
          { at, bump: 1e-3 },
        ]) {
          const [want, got] = both((b) => b.compile(swapPostBatchProgram).batch!(...args(fail)))
          expect(want).toMatch(fail.stop ? /^runtime\/post-condition/ : /^runtime\/dealloc/)
          expect(got).toBe(want)
        }
      }
    })

    it('inlines the lanes’ leaf calls: the reference’s bits, and its error where a leaf’s deallocation fails', () => {
      const leafArgs = (at?: number, bump = 1e-3) => {
        const bumps = new Float64Array(length)
        if (at !== undefined) bumps[at] = bump
        const xs = Float64Array.from({ length }, (_, i) => 0.3 + 0.1 * i)
        return [new Float64Array(length), xs, Int32Array.from({ length }, (_, i) => 1 + (i % 4)), bumps] as const
      }
      const want = leafArgs(),
        got = leafArgs()
      reference.compile(leafCallBatchProgram).batch!(...want)
      backend.compile(leafCallBatchProgram).batch!(...got)
      expect(Array.from(got[0])).toEqual(Array.from(want[0]))
      for (const at of [0, 1, 2, 5]) {
        for (const inverse of [false, true]) {
          const [w, g] = both((b) => {
            const f = b.compile(leafCallBatchProgram).batch!
            return inverse ? f.inverse!(...leafArgs(at)) : f(...leafArgs(at))
          })
          expect(w).toMatch(/^runtime\/dealloc \| cannot deallocate `t`/)
          expect(g).toBe(w)
        }
      }
    })

    it('where two elements of a group fail, may raise the later one’s error, which the reference raises without the earlier one', () => {
      // element 0 fails its deallocation (after its loop), element 1 its post-condition after its
      // first iteration: the joint loop runs element 1's first iteration before element 0's end
      const failing = (bump0: number) => {
        const n = 7
        const bumps = new Float64Array(n)
        bumps[0] = bump0
        const stops = new Int32Array(n)
        stops[1] = 1
        return [
          new Float64Array(n),
          Float64Array.from({ length: n }, (_, i) => 0.3 + 0.1 * i),
          new Int32Array(n).fill(4),
          stops,
          bumps,
        ] as const
      }
      const ref = raisedError(() => reference.compile(swapPostBatchProgram).batch!(...failing(1e-3)))
      expect(ref).toMatch(/^runtime\/dealloc/)
      const got = raisedError(() => backend.compile(swapPostBatchProgram).batch!(...failing(1e-3)))
      expect(got).toMatch(/^runtime\/post-condition/)
      expect(got).toBe(raisedError(() => reference.compile(swapPostBatchProgram).batch!(...failing(0))))
    })
  })
}
