/**
 * The gradient of paper 000's sparse dot product with a branch keeper, with run-time checks off
 * (where `sink-ancillas`, `dead-ancillas` and `contract-arrays` rewrite the forward, the one-pass
 * gradient and the adjoint) and on, on the cpu and wasm backends: every gradient program agrees
 * with the derivative of the bilinear form (∂r/∂A.nzval is the matching B entry) and with finite
 * differences.
 */
import { describe, expect, it } from 'vitest'
import { wasmBackend } from '@tenet/backend-wasm'
import { randomCsc } from '@tenet/testing'
import { checkGrad, grad } from './index.js'
import { sparseDotSource } from './examples/papers.js'
import { tag, testRegistry } from './test-util.js'

const [M, N] = [9, 7]
const a = randomCsc(M, N, 0.45, 5),
  b = randomCsc(M, N, 0.45, 8)
const args = () => [0.5, M, N, a.colptr, a.rowval, a.nzval, b.colptr, b.rowval, b.nzval]

/** ∂⟨A, B⟩/∂A.nzval: the B entry in the same row and column (0 where B has none). */
function matching(x: typeof a, y: typeof b): Float64Array {
  const out = new Float64Array(x.nzval.length)
  for (let j = 0; j < N; j++)
    for (let p = x.colptr[j]!; p < x.colptr[j + 1]!; p++)
      for (let q = y.colptr[j]!; q < y.colptr[j + 1]!; q++) if (y.rowval[q] === x.rowval[p]) out[p] = y.nzval[q]!

  return out
}

const registry = testRegistry().registerBackend(wasmBackend)
describe.each(['cpu', 'wasm'] as const)('the branch-keeper sparse dot on %s', (backend) => {
  for (const checks of [false, true]) {
    it(`checks ${checks ? 'on' : 'off'}: one-pass and two-sweep gradients are the matching entries, and agree with finite differences`, () => {
      const m = tag({ backend, checks, registry })(sparseDotSource)
      const f = m.sparse_dot!
      for (const fuse of [true, false]) {
        const g = grad(f, { loss: 0, fuse })
        const out = g(...args())
        expect(Array.from(out[5] as Float64Array)).toEqual(Array.from(matching(a, b)))
        expect(Array.from(out[8] as Float64Array)).toEqual(Array.from(matching(b, a)))
        expect(g.lastLoss).toBeCloseTo(0.5 + matching(a, b).reduce((s, v, k) => s + v * a.nzval[k]!, 0), 12)
      }
      const r = checkGrad(f, args(), { loss: 0, atol: 1e-8, rtol: 1e-8 })
      expect(r.ok, JSON.stringify(r.worst)).toBe(true)
    })
  }
})
