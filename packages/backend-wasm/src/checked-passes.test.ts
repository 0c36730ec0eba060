/**
 * (The wasm backend's side of the cpu backend's `checked-passes.test.ts`: the same programs, from
 * `@tenet/testing` (`checked-programs.ts`), and errors, without the cpu's generated-code
 * assertions; `optimize` runs the same passes for both, see `tabulate.test.ts` and
 * `passes.test.ts` of `@tenet/ir` for the IR with checks on.)
 *
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
import { createRegistry } from '@tenet/ir'
import { cpuBackend } from '@tenet/backend-cpu'
import {
  backendUnderTest,
  columnProblems,
  pairScratchArgs,
  pairScratchProgram,
  raisedError,
  referenceBackend,
  runConformance,
  unitaryMultiplySource,
} from '@tenet/testing'
import { wasmBackend } from './index.js'

const cpu = backendUnderTest(wasmBackend, { checks: true })
const reference = referenceBackend({ checks: true })

describe('scalar-arrays with checks on', () => {
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

  it('computes the reference’s bits', () => {
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

describe('tabulate’s cost guard never evaluates what the program does not', () => {
  // the guard counts the evaluations of cos(theta[j]) before the loop; it must not read
  // `cnt[5]`, the range of a loop the program never reaches when m = 0 (found by review: an
  // out-of-range error the interpreter does not raise, with checks on and off)
  const pad = Array.from({ length: 10 }, () => '  s += 1.0\n  s -= 1.0').join('\n')
  const source = `
fn peek(c: i32[], s: f64) {
  s += f64(c[0])
${pad}
  s -= f64(c[0])
}
fn f(y: f64[], theta: f64[], cnt: i32[], n: i32, m: i32) {
  for l in 0..n {
    for k in 0..m {
      peek(cnt, y[l])
      for j in 0..cnt[5] { y[l] += cos(theta[j]) }
    }
  }
}`
  const backends = [
    reference,
    { ...referenceBackend({ registry: createRegistry(), checks: false }), name: 'interpreter (checks off)' },
    cpu,
    { ...backendUnderTest(wasmBackend, { registry: createRegistry(), checks: false }), name: 'wasm (checks off)' },
    { ...backendUnderTest(cpuBackend, { registry: createRegistry().registerBackend(cpuBackend) }), name: 'cpu' },
    {
      ...backendUnderTest(cpuBackend, { registry: createRegistry().registerBackend(cpuBackend), checks: false }),
      name: 'cpu (checks off)',
    },
  ]
  it('m = 0: no error anywhere, the same values', () => {
    const args = [new Float64Array(3), Float64Array.from([0.1, 0.2]), Int32Array.from([1, 2, 3]), 3, 0]
    expect(columnProblems(runConformance({ source, entry: 'f' }, args, backends))).toEqual([])
  })
  it('m = 2, a long enough cnt: the same values', () => {
    const args = [new Float64Array(3), Float64Array.from([0.1, 0.2, 0.3]), Int32Array.from([1, 2, 3, 0, 0, 3]), 3, 2]
    expect(columnProblems(runConformance({ source, entry: 'f' }, args, backends))).toEqual([])
  })
})
