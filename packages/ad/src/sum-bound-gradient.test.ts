/**
 * Gradients through `sum-bound` (cpu, checks on) against the interpreter, fused and
 * two-sweep where the options allow, on sums whose uncompute passes and fails its check.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { disabledPasses } from '@tenet/ir/backend'
import { raisedError } from '@tenet/testing'
import { softmaxCeLossSource } from '@tenet/testing/programs'
import { gradient } from './index.js'
import { tag } from './test-util.js'

afterEach(() => disabledPasses.delete('sum-bound'))
const text = (v: unknown) =>
  JSON.stringify(v, (_k, x) =>
    ArrayBuffer.isView(x) ? Array.from(x as Float64Array, String) : typeof x === 'number' ? String(x) : x,
  )

const lse = (term: string) => `
fn f(loss: f64, x: f64[], n: i32) {
  routine {
    s: f64 <- 0.0
    for i in 0..n { s += ${term} }
    l: f64 <- 0.0
    l += log(s)
  }
  loss += l
  ~routine
}`

function run(src: string, args: () => unknown[], opts: Record<string, unknown>) {
  let g: unknown
  const a = args()
  const e = raisedError(() => {
    g = gradient(tag(opts as never)(src).f!, a, { loss: 0 })
  })
  return e === 'no error' ? `${text(g)} ${text(a)}` : e
}

describe('gradients through sum-bound', () => {
  const cases: Array<[string, string, number[]]> = [
    ['exp, passing', 'exp(x[i])', [0.1, -0.5, 0.3, 2]],
    ['exp, residue −1 (fails)', 'exp(x[i])', [0, 40]],
    ['exp, NaN', 'exp(x[i])', [0.1, Number.NaN]],
    ['squares', 'x[i] * x[i]', [1e8, 3, -2, 1e-3]],
    ['squares of -0 and subnormals', 'x[i] * x[i]', [-0, 5e-324, -1e-160]],
  ]
  for (const [label, term, x] of cases)
    it(`${label}: cpu (on, off) as the interpreter`, () => {
      const args = () => [0, Float64Array.from(x), x.length]
      const ref = run(lse(term), args, { checks: true, backend: 'interpreter' })
      const on = run(lse(term), args, { checks: true })
      disabledPasses.add('sum-bound')
      const off = run(lse(term), args, { checks: true })
      disabledPasses.delete('sum-bound')
      expect(off).toBe(ref)
      expect(on).toBe(ref)
    })
  it('softmax cross-entropy gradient: cpu as the interpreter', () => {
    const src = softmaxCeLossSource.replace('fn softmax_ce_loss(', 'fn f(')
    const z = Array.from({ length: 12 }, (_, k) => Math.sin(k * 1.7) * 3)
    for (const zz of [z, z.map((v, k) => (k === 5 ? v + 40 : v)), z.map((v, k) => (k === 7 ? Number.NaN : v))]) {
      const args = () => [0, Float64Array.from(zz), Int32Array.from([0, 2, 1]), 4]
      const ref = run(src, args, { checks: true, backend: 'interpreter' })
      const on = run(src, args, { checks: true })
      expect(on).toBe(ref)
    }
  })
})
