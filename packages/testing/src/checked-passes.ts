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
 * - `jam-iterations`: Horner least squares (`hornerLossSource`) and variants with a wrong
 *   uncompute (of a float ancilla, of a history array, of a small array that `scalar-arrays`
 *   replaces by scalars) that fails in one iteration only, in each lane of a jammed group and in
 *   the leftover loop: the reference's bits, and its error (code, message, location; the copies'
 *   renamed ancillas and moved indices named as the source wrote them).
 */
import { describe, expect, it } from 'vitest'
import { pairScratchArgs, pairScratchProgram, raisedError, unitaryMultiplySource } from './checked-programs.js'
import { hornerLossSource } from './kernel-programs.js'
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

  describe(`jam-iterations with checks on (${backend.name})`, () => {
    /**
     * Horner per point (the leading coefficient's term left out), its uncompute written out, that
     * of \`where\` wrong where z[j] ≠ 1: 15 statements, so that with checks on it is jammed
     * (\`JAM_ITERATIONS_MAX_CHECKED_STATEMENTS\`; review 18c: a longer one ran as written).
     */
    const wrong = (where: 'acc' | 'e' | 'd') => `fn f(loss: f64, c: f64[], xs: f64[], ys: f64[], z: f64[]) {
  for j in 0..len(xs) {
    acc: f64[] <- zeros(len(c))
    d: f64[] <- zeros(1)
    d[0] += ys[j] * 2.0
    for k in len(c) - 2..=0 by -1 { acc[k] += acc[k + 1] * xs[j] + c[k] }
    e <- 0.0
    e += acc[0] - d[0]
    loss += e * e
    e -= acc[0] - d[0]${where === 'e' ? ' * z[j]' : ''}
    e -> 0.0
    for k in 0..=len(c) - 2 { acc[k] -= acc[k + 1] * xs[j] + c[k]${where === 'acc' ? ' * z[j]' : ''} }
    d[0] -= ys[j] * 2.0${where === 'd' ? ' * z[j]' : ''}
    d -> zeros(1)
    acc -> zeros(len(c))
  }
}`
    const c = () => Float64Array.of(0.3, -0.2, 0.1, 0.05, 0.7)
    const points = (n: number) => Float64Array.from({ length: n }, (_, i) => Math.sin(i + 1))
    /** The loss (or the error) of \`src\`'s \`fn\` on the reference and on the backend. */
    const both = (src: string, fn: string, args: () => unknown[]) =>
      [reference, backend].map((b) => {
        const a = args()
        let loss: unknown
        const e = raisedError(() => {
          loss = (b.compile(src)[fn]!(...a) as unknown[])[0]
        })
        return e === 'no error' ? loss : e
      })

    it('computes the reference’s bits (groups of four and the iterations left)', () => {
      for (const n of [3, 4, 7, 8, 9, 10, 11]) {
        const [want, got] = both(hornerLossSource, 'horner_loss', () => [0, c(), points(n), points(n).reverse()])
        expect(typeof want).toBe('number')
        expect(got).toBe(want)
        const ones = () => [0, c(), points(n), points(n), new Float64Array(n).fill(1)]
        for (const where of ['acc', 'e', 'd'] as const) {
          const [w, g] = both(wrong(where), 'f', ones)
          expect(typeof w).toBe('number')
          expect(g).toBe(w)
        }
      }
    })

    it('one violation: the reference’s error (code, message, location), in every lane', () => {
      for (const n of [8, 11]) {
        // ys too short by 1 … 4: the first point without a y in each lane of the last group, or left over
        for (const short of [1, 2, 3, 4]) {
          const [want, got] = both(hornerLossSource, 'horner_loss', () => [0, c(), points(n), points(n - short)])
          expect(want).toMatch(/^runtime\/out-of-bounds \| index \d+ is out of bounds for `ys`/)
          expect(got).toBe(want)
        }
        // a wrong uncompute at point `bad` only: lanes 0 … 3 of the first group, the last point
        for (const where of ['acc', 'e', 'd'] as const)
          for (const bad of [0, 1, 2, 3, 5, n - 1]) {
            const z = () => Float64Array.from({ length: n }, (_, i) => (i === bad ? 2 : 1))
            const [want, got] = both(wrong(where), 'f', () => [0, c(), points(n), points(n), z()])
            expect(want).toMatch(new RegExp(`^runtime/dealloc \\| cannot deallocate \`${where}\``))
            expect(got).toBe(want)
          }
      }
    })
  })
}
