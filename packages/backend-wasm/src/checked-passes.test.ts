/**
 * The passes that run with run-time checks on (`CHECKED_PASSES` of `@tenet/ir`) keep every check
 * on wasm too: `describeCheckedPasses` of `@tenet/testing/vitest` (the cpu backend's
 * `checked-passes.test.ts` adds its generated-code assertions; `optimize` runs the same passes for
 * both, see `tabulate.test.ts` and `passes.test.ts` of `@tenet/ir` for the IR with checks on); and
 * `tabulate`'s cost guard on cpu and wasm, checks on and off.
 */
import { describe, expect, it } from 'vitest'
import { createRegistry } from '@tenet/ir'
import { cpuBackend } from '@tenet/backend-cpu'
import { backendUnderTest, columnProblems, referenceBackend, runConformance } from '@tenet/testing'
import { describeCheckedPasses } from '@tenet/testing/vitest'
import { wasmBackend } from './index.js'

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
