import { describe, expect, it } from 'vitest'
import { parse, printStmt, walk } from '@tenet/ir'
import { preprocess } from '@tenet/reversible'
import { dropDeadUpdates } from './dead.js'
import { compileFused, grad, graphEmbeddingArgs, graphEmbeddingSource } from './index.js'
import { besselSource } from './examples/papers.js'
import { tag } from './test-util.js'

const body = (src: string, observed: string[]) => {
  const f = preprocess(parse({ text: src, name: 'dead' }).functions[0]!)
  // what the checker records on calls (these tests skip it)
  walk(f.body, (s) => { if (s.kind === 'callstmt') s.target = s.callee === 'SWAP' ? 'bijection' : 'function' })
  return dropDeadUpdates(f, new Set(observed)).body.map((s) => printStmt(s, 0)).join('\n')
}

describe('dead-update elimination (fused gradient programs without checks)', () => {
  it('drops updates nothing reads afterwards and keeps what a later statement, condition or iteration reads', () => {
    const out = body(`fn f(g: f64, x: f64, y: f64, k: i32, a: f64[]) {
      y += x * 2.0
      g += x
      for i in 0..3 { a[i] += x; y += a[i] }
      k += 1
      while (k > 0, k != 1) { g += y * 3.0; k -= 1 }
      x -= 1.0
    }`, ['g'])
    expect(out).not.toMatch(/x -= 1/) // x is never read afterwards
    expect(out).toMatch(/y \+= x \* 2/) // read by the loop body later
    expect(out).toMatch(/a\[i\] \+= x/) // read by `y += a[i]`
    expect(out).toMatch(/k \+= 1/) // read by the loop condition
    expect(out).toMatch(/k -= 1/) // loop-carried: the next test of the condition reads it
  })

  it('drops a whole loop body when it only restores values, and bijections on dead values', () => {
    const out = body(`fn f(g: f64, x: f64, y: f64, a: f64[]) {
      g += x * y
      for i in 0..3 { a[i] -= x; SWAP(a[i], y) }
    }`, ['g'])
    expect(out).not.toMatch(/a\[i\] -= x|SWAP/)
    expect(out).toMatch(/g \+= x \* y/)
  })
})

describe('fused gradient programs compiled without checks agree with the two sweeps', () => {
  const fast = tag({ backend: 'cpu', checks: false })
  it('Bessel J₂ and its derivative 0.2102436…', () => {
    const b = fast(besselSource)
    expect(compileFused(b.ibesselj!, 0)).not.toBeNull()
    const g1 = grad(b.ibesselj!, { loss: 0 }), g2 = grad(b.ibesselj!, { loss: 0, fuse: false })
    const d1 = g1(0, 2, 1.0)[2] as number, d2 = g2(0, 2, 1.0)[2] as number
    expect(d1).toBeCloseTo(d2, 13)
    expect(d1).toBeCloseTo(0.21024361588, 9)
    expect(g1.lastLoss).toBeCloseTo(g2.lastLoss, 15)
  })
  it('the graph-embedding loss (k = 3)', () => {
    const m = fast(graphEmbeddingSource)
    const x = Float64Array.from({ length: 30 }, (_, i) => Math.sin(1.3 * i) + 0.2 * i)
    const args = graphEmbeddingArgs(x, 3)
    const g1 = grad(m.embedding_loss!, { loss: 0 }), g2 = grad(m.embedding_loss!, { loss: 0, fuse: false })
    for (let rep = 0; rep < 2; rep++) {
      const a = Array.from(g1(...args)[1] as Float64Array), b = Array.from(g2(...args)[1] as Float64Array)
      a.forEach((v, i) => expect(v).toBeCloseTo(b[i]!, 12))
      expect(g1.lastLoss).toBeCloseTo(g2.lastLoss, 14)
    }
    expect(Array.from(x)).toEqual(Array.from({ length: 30 }, (_, i) => Math.sin(1.3 * i) + 0.2 * i))
    expect(Array.from(args[2] as Float64Array)).toEqual(new Array(15).fill(0))
  })
})
