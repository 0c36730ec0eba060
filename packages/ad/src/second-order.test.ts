import { describe, expect, it } from 'vitest'
import { graphEmbeddingArgs, graphEmbeddingSource } from './examples/graph-embedding.js'
import { gradient } from './gradient.js'
import { hessian, hvp } from './hessian.js'
import { hessianReverseOverForward, secondOrderAdjoint } from './second-order.js'
import { randomExpressions, tag } from './test-util.js'

/** max |a − b| / (1 + |b|) over the elements. */
function worst(a: ArrayLike<number>, b: ArrayLike<number>): number {
  expect(a.length).toBe(b.length)
  let w = 0
  for (let i = 0; i < a.length; i++) w = Math.max(w, Math.abs(a[i]! - b[i]!) / (1 + Math.abs(b[i]!)))
  return w
}

describe('the second-order adjoint (reverse-over-forward, seed 002 §III.B)', () => {
  it('H·v and the gradient of loss += x³·y from one sweep', () => {
    const m = tag()`fn f(loss: f64, x: f64, y: f64) { loss += x * x * x * y }`
    const r = secondOrderAdjoint(m.f!, [0, 2, 3], { loss: 0, v: [0, 1, 0.5] })
    // ∇ = (3x²y, x³) = (36, 8); H = [[6xy, 3x²], [3x², 0]] = [[36, 12], [12, 0]]
    expect(r.gradient[1]).toBeCloseTo(36, 12)
    expect(r.gradient[2]).toBeCloseTo(8, 12)
    expect(r.hvp[1]).toBeCloseTo(36 + 6, 12)
    expect(r.hvp[2]).toBeCloseTo(12, 12)
  })

  it('equals forward-over-reverse on random programs with arrays and loops (1e-10)', () => {
    const { expr, rnd } = randomExpressions(3)
    for (let trial = 0; trial < 4; trial++) {
      const vars = ['a', 'b', 'x[0]', 'x[1]', 'x[2]']
      const lines: string[] = []
      for (let s = 0; s < 3; s++) lines.push(`  t${s} <- 0.0\n  t${s} += ${expr(vars, 2)}`)
      lines.push(`  for i in 0..3 { x[i] += ${expr(['a', 'b', 't0'], 2)} }`)
      lines.push(`  loss += ${expr(['t0', 't1', 't2', 'x[0]', 'x[1]', 'x[2]'], 3)}`)
      // the ancillas leave through outputs (swapped out) instead of being uncomputed
      const text = `fn f(loss: f64, a: f64, b: f64, x: f64[], o0: f64, o1: f64, o2: f64) {\n${lines.join('\n')}\n  SWAP(o0, t0)\n  SWAP(o1, t1)\n  SWAP(o2, t2)\n  t0 -> 0.0\n  t1 -> 0.0\n  t2 -> 0.0\n}`
      const m = tag({ checks: rnd() < 0.5 })(text)
      const args = [0, 0.3, -0.4, Float64Array.of(0.5, -0.1, 0.2), 0, 0, 0]
      const H1 = hessian(m.f!, args, { loss: 0, wrt: [1, 2, 3] })
      const H2 = hessian(m.f!, args, { loss: 0, wrt: [1, 2, 3], method: 'reverse-over-forward' })
      expect(worst(H2, H1), text).toBeLessThanOrEqual(1e-10)
      const v = [null, 0.7, -0.2, Float64Array.of(1, 0.5, -1), null, null, null]
      const r = secondOrderAdjoint(m.f!, args, { loss: 0, v })
      const ref = hvp(m.f!, args, { loss: 0, v })
      const g = gradient(m.f!, args, { loss: 0 })
      for (const i of [1, 2]) {
        expect(Math.abs((r.hvp[i] as number) - (ref[i] as number))).toBeLessThanOrEqual(
          1e-10 * (1 + Math.abs(ref[i] as number)),
        )
        expect(Math.abs((r.gradient[i] as number) - (g[i] as number))).toBeLessThanOrEqual(
          1e-12 * (1 + Math.abs(g[i] as number)),
        )
      }
      expect(worst(r.hvp[3] as Float64Array, ref[3] as Float64Array)).toBeLessThanOrEqual(1e-10)
    }
  })

  for (const checks of [true, false]) {
    it(`equals forward-over-reverse on the graph embedding, k = 2 and 5 (checks ${checks ? 'on' : 'off'})`, () => {
      const m = tag({ checks })(graphEmbeddingSource)
      for (const k of [2, 5]) {
        const x = Float64Array.from({ length: 10 * k }, (_, i) => Math.sin(1.3 * i) + 0.2 * i)
        const H1 = hessian(m.embedding_loss!, graphEmbeddingArgs(x, k), { loss: 0, wrt: [1] })
        const H2 = hessian(m.embedding_loss!, graphEmbeddingArgs(x, k), {
          loss: 0,
          wrt: [1],
          method: 'reverse-over-forward',
        })
        expect(worst(H2, H1)).toBeLessThanOrEqual(1e-10)
        expect(hessianReverseOverForward(m.embedding_loss!, graphEmbeddingArgs(x, k), { loss: 0, wrt: [1] })).toEqual(
          H2,
        )
      }
    })
  }

  it('checks its options', () => {
    const m = tag()`fn f(loss: f64, x: f64, n: i32) { loss += x * x }`
    expect(() => hessian(m.f!, [0, 1, 2], { loss: 0, method: 'sideways' as never })).toThrow(/method/)
    expect(() => hessian(m.f!, [0, 1, 2], { loss: 0, wrt: [2], method: 'reverse-over-forward' })).toThrow(/no Hessian/)
    expect(() => secondOrderAdjoint(m.f!, [0, 1, 2], { loss: 2, v: [] })).toThrow(/float scalar/)
    expect(() => secondOrderAdjoint(m.f!, [0, 1, 2], { loss: 0 } as never)).toThrow(/needs `v`/)
  })
})
