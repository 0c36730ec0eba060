/**
 * The passes that run with run-time checks on (`CHECKED_PASSES` of `@tenet/ir`) keep every check:
 * the same errors (code, message, source location) as the reference interpreter, where it raises
 * them and only there.
 *
 * - `scalar-arrays`: a small array ancilla used at literal positions becomes scalars, and its
 *   deallocation check stays the array's (`deallocArray`, one check over every element);
 * - `tabulate`: a table of cos θ and sin θ replaces the rotations' evaluations, and the bounds
 *   check of each angle read stays the angle array's.
 */
import { describe, expect, it } from 'vitest'
import { TENET_FUNCTION } from '@tenet/reversible'
import {
  backendUnderTest,
  pairScratchArgs,
  pairScratchProgram,
  raisedError,
  referenceBackend,
  unitaryMultiplySource,
} from '@tenet/testing'
import { cpuBackend } from './index.js'

const cpu = backendUnderTest(cpuBackend, { checks: true })
const reference = referenceBackend({ checks: true })

describe('scalar-arrays with checks on', () => {
  it('replaces the array by scalars and keeps one deallocArray check over its elements (generated code)', () => {
    const src = pairScratchProgram('f64', 'x[3 * j + c] - x[3 * i + c]')
    const code = (
      cpu.compile(src).f![TENET_FUNCTION] as { compiled: { sourceOf(n: string, i: boolean): string } }
    ).compiled.sourceOf('f', false)
    expect(code).not.toMatch(/Float64Array|fill\(|\$allNear|rt\.near/)
    expect(code).toMatch(/if \(!\(\(\$near\(v\d+, 0\) && \$near\(v\d+, 0\)\) && \$near\(v\d+, 0\)\)\) rt\.fail/)
  })

  for (const T of ['f64', 'f32', 'i32'] as const) {
    it(`${T}: runs as the reference does when the array is returned to zeros`, () => {
      const src = pairScratchProgram(T, 'x[3 * j + c] - x[3 * i + c]')
      const want = pairScratchArgs(T),
        got = pairScratchArgs(T)
      reference.compile(src).f!(...want)
      cpu.compile(src).f!(...got)
      expect(Array.from(got[0])).toEqual(Array.from(want[0]))
      expect(Array.from(got[0]).some((v) => v !== 0)).toBe(true)
    })

    it(`${T}: raises the array's deallocation error, as the reference does, when one element is not returned`, () => {
      // only element 1 keeps a value: the per-element check must look at every element
      const src = pairScratchProgram(T, `x[3 * j + c] - x[3 * i + c]`, `\n  dx[1] += ${T === 'i32' ? '1' : '1.0'}`)
      const want = raisedError(() => reference.compile(src).f!(...pairScratchArgs(T)))
      expect(want).toMatch(/^runtime\/dealloc \| cannot deallocate `dx`: it holds an array that is not zeros\(3\)/)
      expect(raisedError(() => cpu.compile(src).f!(...pairScratchArgs(T)))).toBe(want)
    })
  }

  it('f64: an element off by more than the tolerance fails, within it passes, as the reference decides', () => {
    for (const off of ['1e-6', '1e-12']) {
      const src = pairScratchProgram('f64', 'x[3 * j + c] - x[3 * i + c]', `\n  dx[2] += ${off}`)
      const want = raisedError(() => reference.compile(src).f!(...pairScratchArgs('f64')))
      expect(want).toEqual(off === '1e-6' ? expect.stringMatching(/^runtime\/dealloc/) : 'no error')
      expect(raisedError(() => cpu.compile(src).f!(...pairScratchArgs('f64')))).toBe(want)
    }
  })

  it('the inverse keeps the check too', () => {
    const src = pairScratchProgram('f64', 'x[3 * j + c] - x[3 * i + c]', '\n  dx[0] += 2.0')
    const inv = (b: typeof cpu) => raisedError(() => b.compile(src).f!.inverse!(...pairScratchArgs('f64')))
    const want = inv(reference)
    expect(want).toMatch(/^runtime\/dealloc/)
    expect(inv(cpu)).toBe(want)
  })
})

describe('tabulate with checks on', () => {
  const M = 6,
    N = 5
  const angles = (count: number) => Float64Array.from({ length: count }, (_, i) => 0.1 + 0.3 * i)
  const matrix = () => Float64Array.from({ length: M * N }, (_, i) => Math.sin(i + 1))

  it('builds the tables (generated code) and computes the reference’s bits', () => {
    const code = (name: string) =>
      (
        cpu.compile(unitaryMultiplySource)[name]![TENET_FUNCTION] as {
          compiled: { sourceOf(n: string, i: boolean): string }
        }
      ).compiled.sourceOf(name, false)
    // the tables, and the loops reading them (no cos in the column loop)
    for (const name of ['f', 'g']) {
      expect(code(name)).toMatch(/Float64Array/)
      expect(code(name)).toMatch(/Math\.cos\(p\d\[i\d+\]\)/)
    }
    const want = [matrix(), angles((M * (M - 1)) / 2), M, N] as const
    const got = [matrix(), angles((M * (M - 1)) / 2), M, N] as const
    reference.compile(unitaryMultiplySource).f!(...want)
    cpu.compile(unitaryMultiplySource).f!(...got)
    expect(Array.from(got[0])).toEqual(Array.from(want[0]))
    const y0 = new Float64Array(M * N),
      y1 = new Float64Array(M * N)
    reference.compile(unitaryMultiplySource).g!(y0, matrix(), angles(M), M, N)
    cpu.compile(unitaryMultiplySource).g!(y1, matrix(), angles(M), M, N)
    expect(Array.from(y1)).toEqual(Array.from(y0))
  })

  it('raises the out-of-bounds error of the angle array, as the reference does, when the angles are too few', () => {
    const want = raisedError(() =>
      reference.compile(unitaryMultiplySource).f!(matrix(), angles((M * (M - 1)) / 2 - 1), M, N),
    )
    expect(want).toMatch(/^runtime\/out-of-bounds \| .*`theta`/)
    expect(
      raisedError(() => cpu.compile(unitaryMultiplySource).f!(matrix(), angles((M * (M - 1)) / 2 - 1), M, N)),
    ).toBe(want)
    const wantG = raisedError(() =>
      reference.compile(unitaryMultiplySource).g!(new Float64Array(M * N), matrix(), angles(M - 1), M, N),
    )
    expect(wantG).toMatch(/^runtime\/out-of-bounds \| .*`theta`/)
    expect(
      raisedError(() => cpu.compile(unitaryMultiplySource).g!(new Float64Array(M * N), matrix(), angles(M - 1), M, N)),
    ).toBe(wantG)
  })

  it('raises the deallocation error of the counter, as the reference does, when the angles are too many', () => {
    const want = raisedError(() =>
      reference.compile(unitaryMultiplySource).f!(matrix(), angles((M * (M - 1)) / 2 + 1), M, N),
    )
    expect(want).toMatch(/^runtime\/dealloc/)
    expect(
      raisedError(() => cpu.compile(unitaryMultiplySource).f!(matrix(), angles((M * (M - 1)) / 2 + 1), M, N)),
    ).toBe(want)
  })
})
