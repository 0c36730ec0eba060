/**
 * The passes that run with run-time checks on (`CHECKED_PASSES` of `@tenet/ir`) keep every check
 * on wasm too: `describeCheckedPasses` of `@tenet/testing/vitest` (the cpu backend's
 * `checked-passes.test.ts` adds its generated-code assertions; `optimize` runs the same passes for
 * both, see `tabulate.test.ts` and `passes.test.ts` of `@tenet/ir` for the IR with checks on); and
 * `tabulate`'s cost guard on cpu and wasm, checks on and off; and passes `pair-series` and
 * `unroll-swaps` with checks on, which the wasm backend runs on the program whose asserts are placed
 * as the cpu backend does (`checkedSeries` in `backend.ts`).
 */
import { describe, expect, it } from 'vitest'
import { createRegistry } from '@tenet/ir'
import { cpuBackend } from '@tenet/backend-cpu'
import {
  backendUnderTest,
  columnProblems,
  raisedError,
  referenceBackend,
  runConformance,
  swapPostBatchProgram,
} from '@tenet/testing'
import { describeCheckedPasses } from '@tenet/testing/vitest'
import { wasmBackend } from './index.js'
import { bessel, compile, expectSameRuns, lastCheckedSeries, lastMapLanes } from './test-util.js'

const wasm = backendUnderTest(wasmBackend, { checks: true })
const reference = referenceBackend({ checks: true })

describeCheckedPasses(wasm)

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
    wasm,
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

describe('pair-series and unroll-swaps with checks on (wasm, see `checkedSeries` in backend.ts)', () => {
  // (the shared tests above, `describeCheckedSwapLoops`, compare the paired programs' values and
  // errors with the reference's; these show that the passes applied on wasm, on the paper's series)
  const zs = (n: number) => Float64Array.from({ length: n }, (_, i) => 0.1 + (2.9 * ((i * 7) % 11)) / 11)
  const args = (n: number) => () => [new Float64Array(n), 2, zs(n)]

  it('runs a map loop of series a few elements at a time with checks on (in lanes without)', () => {
    compile(bessel, 'wasm', true)
    expect(lastCheckedSeries).toBeGreaterThan(0)
    compile(swapPostBatchProgram, 'wasm', true)
    expect(lastCheckedSeries).toBeGreaterThan(0)
    compile(bessel, 'wasm', false)
    expect(lastCheckedSeries).toBe(0)
    expect(lastMapLanes).toBeGreaterThan(0)
  })

  it('the Bessel batch: the interpreter’s and the cpu backend’s bits, forwards and backwards, checks on, every count of elements left over', () => {
    const modules = [compile(bessel, 'interpreter', true), compile(bessel, 'cpu', true), compile(bessel, 'wasm', true)]
    for (const n of [0, 1, 2, 3, 4, 5, 7, 10]) expectSameRuns(modules, args(n))
  })

  it('the single series (its swap loop unrolled by two): the interpreter’s bits, forwards and backwards, checks on', () => {
    const single = bessel.replace(/fn f\(out[\s\S]*$/, 'fn f(out: f64, nu: i32, z: f64) { ibesselj(out, nu, z) }')
    const [interp, wasmSingle] = [compile(single, 'interpreter', true), compile(single, 'wasm', true)]
    let passed = 0
    for (const z of [0, 0.1, 1, 2.5, 7]) {
      for (const nu of [0, 1, 2, 3]) {
        // (some fail a check, z = 0 and ν = 0 among them: the same error, code, message and location)
        const want = raisedError(() => interp.f!(0, nu, z))
        expect(raisedError(() => wasmSingle.f!(0, nu, z))).toBe(want)
        if (want !== 'no error') continue
        expectSameRuns([interp, wasmSingle], () => [0, nu, z])
        passed++
      }
    }
    expect(passed).toBeGreaterThan(8)
  })
})
