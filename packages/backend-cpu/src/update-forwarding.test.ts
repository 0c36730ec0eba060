/**
 * Store-to-load forwarding of updates in the cpu backend (see `sharedSubexpressions` of
 * `@tenet/ir`): within a run of straight-line statements, a later read of an f64 element that an
 * update stored is that stored value, until something writes the array again.
 */
import { describe, expect, it } from 'vitest'
import { createRegistry, parse } from '@tenet/ir'
import { compileModule, interpreterBackend } from '@tenet/reversible'
import { cpuBackend } from './index.js'

const registry = createRegistry().registerBackend(cpuBackend).registerBackend(interpreterBackend)

function body(m: Record<string, unknown>, name: string, inverse = false): string {
  const info = (m[name] as Record<symbol, unknown>)[Symbol.for('tenet.function')] as {
    compiled: { sourceOf(n: string, inv: boolean): string }
  }
  return info.compiled.sourceOf(name, inverse)
}

// the inner loop of a sparse matrix–vector adjoint: ga[q] is accumulated twice, with stores to
// other arrays in between (which V8 must assume may alias ga)
const scatter = `
fn acc(ga: f64[], gy: f64[], y: f64[], a: f64[], rows: i32[], u: f64, w: f64) {
  for q in 0..len(a) {
    y[rows[q]] -= a[q] * u
    ga[q] += gy[rows[q]] * u
    y[rows[q]] += a[q] * w
    ga[q] += gy[rows[q]] * w
    gy[q] += ga[q]
  }
}`

describe('store-to-load forwarding of updates (cpu backend)', () => {
  it('reads an element an update stored from the value it stored, and loads it again after another write (printed JS)', () => {
    const m = compileModule(parse({ text: scatter, name: 'fwd' }), { registry, backend: 'cpu', checks: false })
    const code = body(m, 'acc')
    // before: `p0[i] = (p0[i] + …)` twice and `p1[i] + p0[i]`, each loading p0[i] again.
    // after: one load of ga[q]; the second update adds to the value the first computed, whose
    // store is dead (overwritten before anything reads ga[q] from memory): one store, which
    // gy[q] += ga[q] reads from the local too
    expect(code).toMatch(/const (o\d+) = \(p0\[i\d+\] \+ \(c\d+ \* p5\)\);/)
    expect(code).toMatch(
      /const (o\d+) = \(o\d+ \+ \(c\d+ \* p6\)\);\s*p0\[i\d+\] = \1;\s*p1\[i\d+\] = \(p1\[i\d+\] \+ \1\);/,
    )
    expect(code.match(/= p0\[|\(p0\[/g)).toHaveLength(1)
    expect(code.match(/p0\[i\d+\] =/g)).toHaveLength(1)
    // y[rows[q]] is written twice: its second update starts from the value the first computed,
    // and only the second stores; gy[rows[q]] is loaded once (gy is not written until the end)
    expect(code.match(/p1\[c\d+\]/g)).toHaveLength(1)
    expect(code).toMatch(/const (o\d+) = \(p2\[(c\d+)\] - \(c\d+ \* p5\)\);[\s\S]*p2\[\2\] = \(\1 \+/)
    expect(code.match(/p2\[c\d+\] =/g)).toHaveLength(1)
  })

  it('gives bit-identical results to the interpreter, forwards and backwards, with checks on and off', () => {
    for (const checks of [false, true]) {
      const run = (backend: string) => {
        const m = compileModule(parse({ text: scatter, name: 'fwd' }), { registry, backend, checks })
        const vec = (n: number, f: (i: number) => number) => Float64Array.from({ length: n }, (_, i) => f(i))
        // rows repeat (y[rows[q]] twice with q and q + 1), and gy[q] aliases gy[rows[q']] elements
        const ga = vec(6, (i) => i / 7),
          gy = vec(6, (i) => Math.cos(i)),
          y = vec(6, (i) => Math.sin(i) + 1),
          a = vec(6, (i) => 0.5 - i / 11)
        const rows = Int32Array.from([2, 2, 0, 5, 3, 2])
        const f = m.acc as unknown as ((...x: unknown[]) => unknown[]) & { inverse: (...x: unknown[]) => unknown[] }
        f(ga, gy, y, a, rows, 0.3, -1.7)
        const after = [ga, gy, y].map((x) => Array.from(x))
        f.inverse(ga, gy, y, a, rows, 0.3, -1.7)
        return [after, [ga, gy, y].map((x) => Array.from(x))]
      }
      expect(run('cpu')).toEqual(run('interpreter'))
    }
  })

  it('random runs of updates on few elements: the interpreter’s results bit for bit, checks on and off', () => {
    // straight-line runs of updates over two small arrays at a few indices (so that elements
    // repeat, and writes to the same array at other or equal indices come between)
    let state = 12345
    const rand = (n: number) => {
      state = (Math.imul(state, 1103515245) + 12345) >>> 0
      return (state >>> 8) % n
    }
    const index = () => ['i', '(i + 1) % n', 'k[i]', '0', 'k[(i + 2) % n]'][rand(5)]!
    const elem = (arr: string) => `${arr}[${index()}]`
    for (let program = 0; program < 40; program++) {
      const lines: string[] = []
      for (let s = 0; s < 8; s++) {
        const target = rand(2) === 0 ? 'x' : 'y'
        const other = target === 'x' ? 'y' : 'x'
        const op = ['+=', '-=', '+=', '*='][rand(4)]!
        const value =
          op === '*='
            ? '1.5'
            : [`${elem(other)} * 0.5`, `${elem(other)} + c`, `c * ${elem(other)} - ${elem(other)}`][rand(3)]!
        lines.push(`    ${target}[${index()}] ${op} ${value}`)
      }
      const text = `
fn run(x: f64[], y: f64[], k: i32[], c: f64) {
  n: i32 <- len(x)
  for i in 0..n {
${lines.join('\n')}
  }
  n -> len(x)
}`
      for (const checks of [false, true]) {
        const go = (backend: string) => {
          const m = compileModule(parse({ text, name: 'rand' }), { registry, backend, checks })
          const x = Float64Array.from([0.5, -1.25, 2, 0.75]),
            y = Float64Array.from([1, 0.3, -0.6, 1.1])
          const f = m.run as unknown as ((...a: unknown[]) => unknown[]) & { inverse: (...a: unknown[]) => unknown[] }
          const k = Int32Array.from([3, 3, 0, 1])
          f(x, y, k, 0.7)
          const after = [Array.from(x), Array.from(y)]
          f.inverse(x, y, k, 0.7)
          return [after, Array.from(x), Array.from(y)]
        }
        expect(go('cpu'), `${text}\nchecks ${checks}`).toEqual(go('interpreter'))
      }
    }
  })

  it('keeps elements at other constant offsets across an update, and stores an element once where later updates overwrite it unread (printed JS)', () => {
    // the shape of an adjoint's gradient updates: g[3k], g[3k+1], g[3k+2] accumulated in turn
    const text = `
fn acc(g: f64[], x: f64[], n: i32, u: f64, v: f64) {
  for k in 0..n {
    g[3*k] += x[3*k+1] * u
    g[3*k+1] += x[3*k] * u
    g[3*k+2] -= x[3*k] * v
    g[3*k] += x[3*k+2] * v
    g[3*k+1] -= x[3*k+2] * u
    g[3*k+2] += g[3*k] * 0.5
  }
}
fn reads_between(g: f64[], x: f64[], j: i32, u: f64) {
  g[0] += x[0] * u
  u += g[j]
  g[0] += x[1] * u
}`
    const m = compileModule(parse({ text, name: 'offsets' }), { registry, backend: 'cpu', checks: false })
    const code = body(m, 'acc')
    // each of the three elements loaded once and stored once (before: three loads and stores each)
    expect(code.match(/p0\[[^\]]+\] =/g)).toHaveLength(3)
    expect(code.match(/\(p0\[/g)).toHaveLength(3)
    // g[3k + 2] += g[3k] * 0.5 reads g[3k] from the value its last update computed
    expect(code).toMatch(/const (o\d+) = \(o\d+ \+ \(c\d+ \* p4\)\);[\s\S]*\(\1 \* 0\.5\)/)
    // g[j] may be g[0]: the first store of g[0] is kept, and g[0] is loaded again after it
    const between = body(m, 'reads_between')
    expect(between.match(/p0\[0\] =/g)).toHaveLength(2)
  })

  it('random runs of updates at polynomial indices: the interpreter’s results bit for bit, checks on and off', () => {
    // indices a constant apart (provably different), equal, or unknown (k[i]); arrays of 8, i < 4
    let state = 777
    const rand = (n: number) => {
      state = (Math.imul(state, 1103515245) + 12345) >>> 0
      return (state >>> 8) % n
    }
    const index = () => ['i', 'i + 1', 'i + 3', '2 * i', '2 * i + 1', 'k[i]', '0'][rand(7)]!
    const elem = (arr: string) => `${arr}[${index()}]`
    for (let program = 0; program < 30; program++) {
      const lines: string[] = []
      for (let s = 0; s < 10; s++) {
        const target = rand(3) === 0 ? 'y' : 'x'
        const other = rand(2) === 0 ? 'x' : 'y'
        const op = ['+=', '-=', '+=', '*='][rand(4)]!
        const value =
          op === '*='
            ? '1.5'
            : [`${elem(other)} * 0.5`, `${elem(other)} + c`, `c * ${elem(other)} - ${elem(other)}`][rand(3)]!
        // (an update may not read its own target)
        const t = `${target}[${index()}]`
        lines.push(value.includes(`${target}[`) ? `    ${t} ${op} c * 0.25` : `    ${t} ${op} ${value}`)
      }
      const text = `
fn run(x: f64[], y: f64[], k: i32[], c: f64) {
  for i in 0..4 {
${lines.join('\n')}
  }
}`
      for (const checks of [false, true]) {
        const go = (backend: string) => {
          const m = compileModule(parse({ text, name: 'rand' }), { registry, backend, checks })
          const x = Float64Array.from([0.5, -1.25, 2, 0.75, 0.1, -0.3, 1.7, 0.9]),
            y = Float64Array.from([1, 0.3, -0.6, 1.1, 0.2, 0.4, -0.8, 1.3])
          const f = m.run as unknown as ((...a: unknown[]) => unknown[]) & { inverse: (...a: unknown[]) => unknown[] }
          const k = Int32Array.from([3, 5, 0, 1])
          f(x, y, k, 0.7)
          const after = [Array.from(x), Array.from(y)]
          f.inverse(x, y, k, 0.7)
          return [after, Array.from(x), Array.from(y)]
        }
        expect(go('cpu'), `${text}\nchecks ${checks}`).toEqual(go('interpreter'))
      }
    }
  })
})
