import { describe, expect, it } from 'vitest'
import { parse, printStmt } from '@tenet/ir'
import { walk } from '@tenet/ir/backend'
import { preprocess } from '@tenet/reversible'
import { dropDeadUpdates, dropDeadUpdatesIn, privateArrays } from './dead.js'
import { compileFused, grad, graphEmbeddingArgs, graphEmbeddingSource } from './index.js'
import { besselSource } from './examples/papers.js'
import { tag } from './test-util.js'

const body = (src: string, observed: string[]) => {
  const f = preprocess(parse({ text: src, name: 'dead' }).functions[0]!)
  // what the checker records on calls (these tests skip it)
  walk(f.body, (s) => {
    if (s.kind === 'callstmt') s.target = s.callee === 'SWAP' ? 'bijection' : 'function'
  })
  return dropDeadUpdates(f, new Set(observed))
    .body.map((s) => printStmt(s, 0))
    .join('\n')
}

describe('dead-update elimination (fused gradient programs without checks)', () => {
  it('drops updates nothing reads afterwards and keeps what a later statement, condition or iteration reads', () => {
    const out = body(
      `fn f(g: f64, x: f64, y: f64, k: i32, a: f64[]) {
      y += x * 2.0
      g += x
      for i in 0..3 { a[i] += x; y += a[i] }
      k += 1
      while (k > 0, k != 1) { g += y * 3.0; k -= 1 }
      x -= 1.0
    }`,
      ['g'],
    )
    expect(out).not.toMatch(/x -= 1/) // x is never read afterwards
    expect(out).toMatch(/y \+= x \* 2/) // read by the loop body later
    expect(out).toMatch(/a\[i\] \+= x/) // read by `y += a[i]`
    expect(out).toMatch(/k \+= 1/) // read by the loop condition
    expect(out).toMatch(/k -= 1/) // loop-carried: the next test of the condition reads it
  })

  it('drops a loop left counting a variable nobody reads afterwards, and keeps one whose count is read', () => {
    const src = (tail: string) => `fn f(g: f64, x: f64, k: i32, n: i32) {
      while (k < 3, k != 0) { k += 1; g += x }
      while (k != 0, k != 3) { x -= 1.0; k -= 1 }
      ${tail}
    }`
    const dropped = body(src(''), ['g'])
    // the second loop only counts k down (x is dead): it goes; the first updates g, so it stays
    expect(dropped).toMatch(/g \+= x/)
    expect(dropped).not.toMatch(/k -= 1/)
    expect(dropped.match(/while/g)).toHaveLength(1)
    // with n reading k after the loop, the countdown is observable and kept
    const kept = body(src('n += k'), ['g', 'n'])
    expect(kept).toMatch(/k -= 1/)
    expect(kept.match(/while/g)).toHaveLength(2)
    // a loop with a call in its body keeps it (the call may have effects)
    const called = body(
      `fn f(g: f64, k: i32) {
      while (k != 0, k != 3) { h(g); k -= 1 }
    }`,
      [],
    )
    expect(called).toMatch(/while/)
  })

  it('drops a whole loop body when it only restores values, and bijections on dead values', () => {
    const out = body(
      `fn f(g: f64, x: f64, y: f64, a: f64[]) {
      g += x * y
      for i in 0..3 { a[i] -= x; SWAP(a[i], y) }
    }`,
      ['g'],
    )
    expect(out).not.toMatch(/a\[i\] -= x|SWAP/)
    expect(out).toMatch(/g \+= x \* y/)
  })
})

describe('loop-private arrays and call specialisation', () => {
  const fns = (src: string) =>
    parse({ text: src, name: 'dead' }).functions.map((f) => {
      const g = preprocess(f)
      walk(g.body, (s) => {
        if (s.kind === 'callstmt') s.target = s.callee === 'SWAP' ? 'bijection' : 'function'
      })
      return g
    })
  const loopOf = (src: string) =>
    fns(src)[0]!.body.find((s) => s.kind === 'for') as Extract<ReturnType<typeof fns>[0]['body'][0], { kind: 'for' }>

  it('finds the arrays each iteration touches only at its own elements i·c + k', () => {
    const priv = privateArrays(
      loopOf(`fn f(a: f64[], b: f64[], c: f64[], d: f64[], t: f64[], x: f64) {
      for i in 0..3 {
        a[i] += x
        b[i] += a[i] * x
        c[i] += b[i + 1]
        t[i * 2] += x
        t[i * 2 + 1] += x
        d[i * 2] += x
        d[i] += x
        x += c[0] + f64(len(a))
      }
    }`),
    )
    // b is read at i + 1 (another iteration's element), c at 0, d with two strides
    expect([...priv].sort()).toEqual(['a', 't'])
    // i·c held in an integer ancilla the body allocates; an ancilla that changes does not count
    const held = privateArrays(
      loopOf(`fn f(t: f64[], u: f64[], x: f64) {
      for i in 0..3 {
        j: i32 <- i * 4
        t[j + 3] += x
        j -> i * 4
        m: i32 <- i * 4
        m += 1
        u[m] += x
        m -= 1
        m -> i * 4
      }
    }`),
    )
    expect([...held]).toEqual(['t'])
  })

  it('counts i·c + d as its own element where an enclosing if bounds d to [0, c) and its branch leaves d alone', () => {
    const priv = privateArrays(
      loopOf(`fn f(t: f64[], u: f64[], v: f64[], w: f64[], x: f64, o: i32, p: i32[]) {
      for i in 0..3 {
        if (0 <= p[i] - o && p[i] - o < 2, 0 <= p[i] - o && p[i] - o < 2) {
          t[i * 2 + (p[i] - o)] += x
          u[i * 2 + (p[i] - o)] += x
        }
        if (0 <= p[i] - o && p[i] - o < 2, 0 <= p[i] - o && p[i] - o < 2) {
          w[i * 2 + (p[i] - o)] += x
          o += 1
          o -= 1
        }
        if (0 <= p[i] - o && p[i] - o < 3, 0 <= p[i] - o && p[i] - o < 3) {
          v[i * 2 + (p[i] - o)] += x
        }
        u[i * 2 + (p[i] - o)] += x
        t[i * 2 + 1] += x
      }
    }`),
    )
    // t: bounded (and at i·2 + 1); u: also read outside the if; v: bounded by 3 > 2; w: the branch
    // changes o, which d reads (p is read at its own p[i])
    expect([...priv].sort()).toEqual(['p', 't'])
  })

  it('an update of a loop-private array is dead when only its own iteration could read it', () => {
    const out = body(
      `fn f(g: f64, q: f64[], x: f64[]) {
      for i in 0..len(q) {
        q[i] += x[i] * x[i]
        g += sqrt(q[i])
        q[i] -= x[i] * x[i]
      }
    }`,
      ['g'],
    )
    expect(out).toMatch(/q\[i\] \+= x\[i\] \* x\[i\]/)
    expect(out).not.toMatch(/q\[i\] -=/)
  })

  it('drops a scalar ancilla nothing reads, with its deallocation, but keeps one a kept call passes', () => {
    const out = body(
      `fn f(g: f64, x: f64) {
      t <- x * 2.0
      g += x
      t -> x * 2.0
    }`,
      ['g'],
    )
    expect(out).not.toMatch(/\bt\b/)
    const [h, f] = fns(`fn h(a: f64, b: f64) { a += 1.0 }
      fn f(g: f64, x: f64) { t <- x * 2.0; h(g, t); t -> x * 2.0 }`)
    const r = dropDeadUpdatesIn([h!, f!], f!, new Set(['g']))
    expect(r.entry.body.map((x) => printStmt(x, 0)).join('\n')).toMatch(/t <- x \* 2/)
  })

  it('specialises callees for what the caller reads afterwards', () => {
    const [h, f] = fns(`fn h(a: f64[], b: f64[], y: f64) { for i in 0..len(a) { a[i] += y; b[i] += y * 2.0 } }
      fn f(g: f64, a: f64[], b: f64[], y: f64) { h(a, b, y); g += a[0] }`)
    const r = dropDeadUpdatesIn([h!, f!], f!, new Set(['g']))
    const spec = r.functions.find((x) => x.name.startsWith('h$live'))!
    expect(r.entry.body.map((s) => printStmt(s, 0)).join('\n')).toContain(spec.name)
    const text = spec.body.map((s) => printStmt(s, 0)).join('\n')
    expect(text).toMatch(/a\[i\] \+= y/)
    expect(text).not.toMatch(/b\[i\]/)
  })
})

describe('fused gradient programs compiled without checks agree with the two sweeps', () => {
  const fast = tag({ backend: 'cpu', checks: false })
  it('Bessel J₂ and its derivative 0.2102436…', () => {
    const b = fast(besselSource)
    expect(compileFused(b.ibesselj!, 0)).not.toBeNull()
    const g1 = grad(b.ibesselj!, { loss: 0, mode: 'reverse' }),
      g2 = grad(b.ibesselj!, { loss: 0, fuse: false })
    const d1 = g1(0, 2, 1.0)[2] as number,
      d2 = g2(0, 2, 1.0)[2] as number
    expect(d1).toBeCloseTo(d2, 13)
    expect(d1).toBeCloseTo(0.21024361588, 9)
    expect(g1.lastLoss).toBeCloseTo(g2.lastLoss, 15)
  })
  it('the graph-embedding loss (k = 3)', () => {
    const m = fast(graphEmbeddingSource)
    const x = Float64Array.from({ length: 30 }, (_, i) => Math.sin(1.3 * i) + 0.2 * i)
    const args = graphEmbeddingArgs(x, 3)
    const g1 = grad(m.embedding_loss!, { loss: 0 }),
      g2 = grad(m.embedding_loss!, { loss: 0, fuse: false })
    for (let rep = 0; rep < 2; rep++) {
      const a = Array.from(g1(...args)[1] as Float64Array),
        b = Array.from(g2(...args)[1] as Float64Array)
      a.forEach((v, i) => expect(v).toBeCloseTo(b[i]!, 12))
      expect(g1.lastLoss).toBeCloseTo(g2.lastLoss, 14)
    }
    expect(Array.from(x)).toEqual(Array.from({ length: 30 }, (_, i) => Math.sin(1.3 * i) + 0.2 * i))
    expect(Array.from(args[2] as Float64Array)).toEqual(new Array(15).fill(0))
  })
})
