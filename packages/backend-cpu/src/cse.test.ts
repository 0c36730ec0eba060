import { describe, expect, it } from 'vitest'
import { createRegistry, parse } from '@tenet/ir'
import { compileModule, interpreterBackend } from '@tenet/reversible'
import { cpuBackend } from './index.js'

const registry = createRegistry().registerBackend(cpuBackend).registerBackend(interpreterBackend)

// `x[a] - x[b]` occurs three times in a run of updates; `q[e]` is read, then written, then read
const source = `
fn kernel(q: f64[], g: f64[], x: f64[], a: i32, b: i32, e: i32, s: f64) {
  q[e] += (x[a] - x[b]) ** 2
  g[a] += s * (2.0 * (x[a] - x[b]))
  g[b] -= s * (2.0 * (x[a] - x[b]))
  s += q[e] * 3.0
  q[e] += 1.0
  s += q[e] * 3.0
  x[a] += 0.5
  g[e] += x[a] - x[b]
  g[a] += 2.0 * (x[a] - x[b])
}`

function body(m: Record<string, unknown>, name: string, inverse = false): string {
  const info = (m[name] as Record<symbol, unknown>)[Symbol.for('tenet.function')] as {
    compiled: { sourceOf(n: string, inv: boolean): string }
  }
  return info.compiled.sourceOf(name, inverse)
}

describe('common subexpressions of straight-line updates (cpu backend)', () => {
  it('computes a repeated expression once, and again after a write to what it reads', () => {
    const m = compileModule(parse({ text: source, name: 'cse' }), { registry, backend: 'cpu', checks: false })
    const code = body(m, 'kernel')
    // x[a] - x[b] is bound once before x[a] changes and once more after (x[a] then being the
    // value `x[a] += 0.5` stored, which that update computed from the x[a] loaded before)
    expect(code.match(/const c\d+ = \((?:p2\[p3\]|c\d+|o\d+) - p2\[p4\]\);/g)).toHaveLength(2)
    expect(code).toMatch(/const (o\d+) = \(c\d+ \+ 0\.5\);\s*p2\[p3\] = \1;\s*const c\d+ = \(\1 - p2\[p4\]\);/)
    // q[e] * 3 is read again after `q[e] += 1.0`: computed twice, never shared, each time from
    // the value the update before stored (store-to-load forwarding), never loaded again; q[e]
    // is loaded once and stored once (the first update's store is overwritten unread: dead)
    expect(code.match(/\(o\d+ \* 3\)/g)).toHaveLength(2)
    expect(code.match(/p0\[p5\]/g)).toHaveLength(2)
    expect(code).toMatch(/Math\.pow\(c\d+, 2\)|\(c\d+ \* c\d+\)/)
  })

  it('gives bit-identical results to the interpreter, forwards and backwards, with checks on and off', () => {
    for (const checks of [false, true]) {
      const run = (backend: string) => {
        const m = compileModule(parse({ text: source, name: 'cse' }), { registry, backend, checks })
        const q = new Float64Array([0.25, -1, 2]),
          g = new Float64Array([1, 2, 3]),
          x = new Float64Array([0.3, -0.7, 1.9])
        const fwd = (m.kernel as (...a: unknown[]) => unknown[])(q, g, x, 0, 2, 1, 0.125)
        const after = [Array.from(q), Array.from(g), Array.from(x), fwd[6]]
        const back = (m.kernel as unknown as { inverse: (...a: unknown[]) => unknown[] }).inverse(...fwd)
        return [after, Array.from(q), Array.from(g), Array.from(x), back[6]]
      }
      expect(run('cpu')).toEqual(run('interpreter'))
    }
  })

  it("reads an element a rotation just stored from the value it stored, and each argument's element once", () => {
    const rot = `
fn rot(x: f64[], g: f64[], t: f64, i: i32) {
  ROT(x[i], x[i + 1], t)
  g[i] += x[i] * g[i + 1] - x[i + 1] * 2.0
  ROT(g[i], g[i + 1], t)
  SWAP(x[2 * i], x[i])
  g[0] += x[i]
}`
    const m = compileModule(parse({ text: rot, name: 'rot' }), { registry, backend: 'cpu', checks: false })
    const code = body(m, 'rot')
    // x[i] and x[i + 1] (provably different) are not loaded again after the first ROT stores them
    const stored = [...code.matchAll(/const (o\d+) = [^;]*;\n *p0\[(p3|c\d+)\] = \1;/g)].map((m) => m[1])
    expect(stored).toHaveLength(2)
    // (p1[i + 1], read again by the second ROT, is kept across the update of p1[i]: a local)
    expect(code).toMatch(new RegExp(`\\(\\(${stored[0]} \\* (p1\\[|c\\d+\\))`))
    expect(code).toContain(`(${stored[1]} * 2)`)
    expect(code).toMatch(new RegExp(`const t\\d+ = ${stored[0]};`))
    // after SWAP(x[2i], x[i]) (elements not provably different) x[i] is loaded again
    expect(code).toMatch(/\(p1\[0\] \+ p0\[p3\]\)/)
    for (const checks of [false, true]) {
      const run = (backend: string) => {
        const f = compileModule(parse({ text: rot, name: 'rot' }), { registry, backend, checks }).rot as (
          ...a: unknown[]
        ) => unknown[]
        const x = new Float64Array([0.3, -0.7, 1.9, 0.5]),
          g = new Float64Array([1.5, 2, -3, 0.25])
        f(x, g, 0.7, 1)
        return [Array.from(x), Array.from(g)]
      }
      expect(run('cpu')).toEqual(run('interpreter'))
    }
  })

  // a run goes on through scalar ancillas and @unchecked blocks; a loop keeps several distinct
  // accumulated elements and the invariant elements it only reads in locals
  const more = `
fn shared(g: f64[], x: f64[], a: i32, b: i32, s: f64) {
  @unchecked {
    t <- s * (x[a] - x[b])
    g[a] += t + s * (x[a] - x[b])
    t -> s * (x[a] - x[b])
  }
  g[b] -= s * (x[a] - x[b])
}
fn acc(t: f64[], x: f64[], e: i32) {
  for j in 0..len(x) {
    t[e * 2] += x[j] * x[e]
    t[e * 2 + 1] += x[j] * 2.0
  }
}`

  it('shares through ancillas and @unchecked blocks, and promotes several elements of a loop', () => {
    const m = compileModule(parse({ text: more, name: 'cse' }), { registry, backend: 'cpu', checks: false })
    const code = body(m, 'shared')
    expect(code.match(/\(p1\[p2\] - p1\[p3\]\)/g)).toHaveLength(1)
    const loop = body(m, 'acc')
    // t[e·2] and t[e·2 + 1] are loaded before the loop and stored after it; x[e] is an invariant
    // that pass `hoist-invariants` reads once before the loop (when the loop runs at all)
    expect(loop.match(/let r\d+ = p[01]\[/g)).toHaveLength(2)
    expect(loop).toMatch(/if \(c\d+\) \{\n\s+v\d+ = \(v\d+ \+ p1\[p2\]\);/)
    expect(loop.match(/p0\[x\d+\] = r\d+;/g)).toHaveLength(2)
    const run = (backend: string, checks: boolean) => {
      const mm = compileModule(parse({ text: more, name: 'cse' }), { registry, backend, checks })
      const g = new Float64Array([1, 2, 3]),
        x = new Float64Array([0.3, -0.7, 1.9]),
        t = new Float64Array(6)
      ;(mm.shared as (...a: unknown[]) => unknown)(g, x, 0, 2, 0.125)
      ;(mm.acc as (...a: unknown[]) => unknown)(t, x, 1)
      return [Array.from(g), Array.from(t)]
    }
    expect(run('cpu', false)).toEqual(run('interpreter', true))
    expect(run('cpu', true)).toEqual(run('interpreter', true))
  })

  // a loop with branches (a tangent's unit-seeded directions): q[e] is accumulated on every
  // iteration, t only under conditions, and u[e + 1] is read only where the condition holds (its
  // index is out of range for the last e)
  const branches = `
fn edges(q: f64[], t: f64[], u: f64[], x: f64[], pairs: i32[], k: i32, o: i32) {
  for e in 0..len(q) {
    a: i32 <- pairs[2 * e] * k
    b: i32 <- pairs[2 * e + 1] * k
    for j in 0..k {
      q[e] += (x[a + j] - x[b + j]) ** 2
      if (0 <= a + j - o && a + j - o < 2, ~) { t[e * 2 + (a + j - o)] += 2.0 * (x[a + j] - x[b + j]) }
      if (e + 1 < len(q), ~) { q[e] += u[e + 1] * x[b + j] }
    }
    b -> pairs[2 * e + 1] * k
    a -> pairs[2 * e] * k
  }
}`

  it('keeps an element in a local through a loop with branches when every iteration accesses it', () => {
    const m = compileModule(parse({ text: branches, name: 'cse' }), { registry, backend: 'cpu', checks: false })
    const code = body(m, 'edges')
    // q[e] (accessed on every iteration) lives in a local; t and u[e + 1] (only under a condition) do not
    expect(code.match(/let r\d+ = p0\[/g)).toHaveLength(1)
    expect(code).toMatch(/p0\[x\d+\] = r\d+;/)
    expect(code).not.toMatch(/let r\d+ = p[12]\[/)
    const run = (backend: string, checks: boolean) => {
      const mm = compileModule(parse({ text: branches, name: 'cse' }), { registry, backend, checks })
      const q = new Float64Array(3),
        t = new Float64Array(6),
        u = new Float64Array([0.5, -1.5, 2.25])
      const x = Float64Array.from({ length: 8 }, (_, i) => Math.sin(i + 0.3))
      ;(mm.edges as (...a: unknown[]) => unknown)(q, t, u, x, Int32Array.from([0, 1, 1, 3, 2, 0]), 2, 1)
      return [Array.from(q), Array.from(t)]
    }
    const want = run('interpreter', true)
    expect(run('cpu', false)).toEqual(want)
    expect(run('cpu', true)).toEqual(want)
    expect(run('interpreter', false)).toEqual(want)
  })

  // the adjoint of ROT: the gradient of the angle and the inverse rotation of the gradients read
  // cos(t) and sin(t), as do the rotations after them; t changes half-way, the elements of th never
  const rotations = `
fn rot(g: f64, a: f64, b: f64, ga: f64, gb: f64, t: f64) {
  g += gb * (cos(t) * a - sin(t) * b) - ga * (sin(t) * a + cos(t) * b)
  IROT(ga, gb, t)
  ROT(a, b, t)
  g += cos(t) * 0.5
  t += 1.0
  ROT(a, b, t)
  g -= sin(t)
}
fn rots(x: f64[], th: f64[], k: i32) {
  ROT(x[0], x[1], th[k])
  x[2] += cos(th[k]) * x[0]
  IROT(x[1], x[2], th[k])
  SWAP(x[0], x[1])
  ROT(x[0], x[1], th[k + 1])
}`

  it("shares the pure calls of a bijection's lowering with the updates around it (ROT's cos and sin)", () => {
    const m = compileModule(parse({ text: rotations, name: 'rot' }), { registry, backend: 'cpu', checks: false })
    // one cos and one sin of t before t changes, one of each after it
    for (const inverse of [false, true]) {
      const code = body(m, 'rot', inverse)
      expect(code.match(/Math\.cos/g), code).toHaveLength(2)
      expect(code.match(/Math\.sin/g), code).toHaveLength(2)
    }
    const code = body(m, 'rots')
    expect(code.match(/Math\.cos/g), code).toHaveLength(2)
    expect(code.match(/Math\.sin/g), code).toHaveLength(2)
    const run = (backend: string, checks: boolean) => {
      const mm = compileModule(parse({ text: rotations, name: 'rot' }), { registry, backend, checks })
      const rot = mm.rot as unknown as ((...a: unknown[]) => unknown[]) & { inverse: (...a: unknown[]) => unknown[] }
      const after = rot(0.25, 1.5, -0.5, 0.75, 2.0, 0.3)
      const back = rot.inverse(...after)
      const x = new Float64Array([0.3, -1.1, 0.8]),
        th = new Float64Array([0.4, -2.2])
      const rots = mm.rots as ((...a: unknown[]) => void) & { inverse: (...a: unknown[]) => void }
      rots(x, th, 0)
      const y = Array.from(x)
      rots.inverse(x, th, 0)
      return [after, back, y, Array.from(x)]
    }
    const want = run('interpreter', true)
    expect(run('cpu', false)).toEqual(want)
    expect(run('cpu', true)).toEqual(want)
  })
})
