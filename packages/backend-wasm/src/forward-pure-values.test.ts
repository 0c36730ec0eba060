/**
 * Pass `forward-pure-values` (see @tenet/ir's passes) on compiled programs: cpu and wasm, checks
 * on (where the pass does not run) and off (where it does), give the reference interpreter's
 * doubles bit for bit, forwards and backwards, on random pairs of loops of the shape of a fused
 * gradient (a loop that computes `f(q[e])` after building `q[e]`, a later loop that computes it
 * again), with the writes in between, in either loop or at other indices that must keep the
 * second loop computing its own values.
 */
import { describe, expect, it } from 'vitest'
import { check, createRegistry, parse, printFunction } from '@tenet/ir'
import { forwardPureValues } from '@tenet/ir/backend'
import { compileModule, preprocess } from '@tenet/reversible'
import { Random } from '@tenet/testing'
import { forwardAndBack, passChanges, passRegistry } from './test-util.js'

/** The length of q, d, g and h (x has 3 more); n ≤ L. */
const L = 5

/** A random pair of loops `f(q, d, g, h, x, n)` (see the module comment). */
function loopPair(seed: number): string {
  const r = new Random(seed)
  const prim = () => r.pick(['sqrt', 'exp', 'tanh', 'atan', 'log', 'sqrt', 'cos'])
  const p1 = prim()
  const p2 = r.chance(0.9) ? p1 : prim()
  const range = () => r.pick(['0..n', '0..n', 'n - 1..=0 by -1', '0..len(d)', '0..n by 2'])
  const r1 = range()
  const r2 = r.chance(0.85) ? r1 : range()
  const first = [
    ...(r.chance(0.7) ? ['for j in 0..3 { q[e] += x[e + j] ** 2 }'] : ['q[e] += 0.5']),
    r.pick([`d[e] += ${p1}(q[e])`, `d[e] += x[e] * ${p1}(q[e])`, `d[e] -= ${p1}(q[e]) / (1.0 + x[e] ** 2)`]),
    ...(r.chance(0.15) ? ['q[e] += 0.25'] : []),
    ...(r.chance(0.1) ? ['q[0] += 0.125'] : []),
  ]
  const between = r.pick(['', '', 'h[0] += 1.5', 'd[0] += 1.0', 'q[1] += 0.5'])
  const use = r.pick([`g[e] += h[e] * (0.5 / ${p2}(q[e]))`, `g[e] -= ${p2}(q[e])`, `g[e] += ${p2}(q[e]) * ${p2}(q[e])`])
  const second = r.pick([[use], [use], [use, 'q[e] += 0.75'], ['h[e] += 1.0', use], [use, use.replace('g[e]', 'h[e]')]])
  const reverse = r.chance(0.5) && !r2.includes('by') ? 'reverse ' : ''
  return `fn f(q: f64[], d: f64[], g: f64[], h: f64[], x: f64[], n: i32) {
  for e in ${r1} {
    ${first.join('\n    ')}
  }
  ${between}
  for e in ${reverse}${r2} {
    ${second.join('\n    ')}
  }
}`
}

/** Whether the pass changes `f` of the source. */
const changed = (source: string): boolean => passChanges(source, forwardPureValues)

/** f forwards, then its inverse on the result, as one string of exact numbers. */
function runs(source: string, backend: string, checks: boolean, n: number): string {
  const m = compileModule(parse({ text: source, name: 'pair' }), { registry: passRegistry(), backend, checks })
  const args = [
    Float64Array.from({ length: L }, (_, i) => 0.5 + i * 0.375),
    Float64Array.from({ length: L }, (_, i) => Math.sin(i + 1)),
    Float64Array.from({ length: L }, (_, i) => Math.cos(3 * i + 1)),
    Float64Array.from({ length: L }, (_, i) => 0.25 + Math.sin(2 * i + 0.5) ** 2),
    Float64Array.from({ length: L + 3 }, (_, i) => Math.cos(i + 0.3)),
    n,
  ]
  return forwardAndBack(m, args)
}

describe('forward-pure-values on compiled programs', () => {
  it('random loop pairs: cpu and wasm, checks on and off, give the interpreter’s doubles forwards and backwards', () => {
    const failures: string[] = []
    let forwarded = 0,
      kept = 0
    for (let seed = 0; seed < 24; seed++) {
      const source = loopPair(seed)
      if (changed(source)) forwarded++
      else kept++
      for (const n of [0, 1, 4]) {
        const want = runs(source, 'interpreter', true, n)
        for (const backend of ['cpu', 'wasm'])
          for (const checks of [true, false]) {
            const got = runs(source, backend, checks, n)
            if (got !== want) failures.push(`seed ${seed}, n = ${n}, ${backend} checks ${checks}:\n${source}`)
          }
      }
    }
    expect(failures.slice(0, 3).join('\n\n')).toBe('')
    // both kinds occur: pairs the pass rewrites and pairs it must leave alone
    expect(forwarded).toBeGreaterThanOrEqual(8)
    expect(kept).toBeGreaterThanOrEqual(6)
  })
  it('a zero ancilla the first loop fills stands for the table: cpu and wasm give the interpreter’s doubles', () => {
    const source = `fn f(q: f64[], g: f64[], h: f64[], x: f64[], out: f64[]) {
  d: f64[] <- zeros(len(q))
  for e in 0..len(q) { for j in 0..3 { q[e] += x[e + j] ** 2 }; d[e] += sqrt(q[e]) }
  for e in reverse 0..len(q) { g[e] += h[e] * (0.5 / sqrt(q[e])) }
  for e in 0..len(q) { SWAP(d[e], out[e]) }
  d -> zeros(len(q))
}`
    const m = parse({ text: source, name: 'p' })
    const reg = createRegistry()
    const p = check(m.functions.map(preprocess), m.hosts, reg)
    const printed = printFunction(forwardPureValues(p.functions.get('f')!, reg, new Set(), p.writes))
    expect(printed).toContain('g[e] += h[e] * (0.5 / d[e])')
    expect(printed).not.toContain('$fwd')
    const run = (backend: string, checks: boolean) => {
      const m = compileModule(parse({ text: source, name: 'z' }), { registry: passRegistry(), backend, checks })
      const args = [
        Float64Array.from({ length: L }, (_, i) => 0.5 + i * 0.375),
        Float64Array.from({ length: L }, (_, i) => Math.cos(3 * i + 1)),
        Float64Array.from({ length: L }, (_, i) => 0.25 + Math.sin(2 * i + 0.5) ** 2),
        Float64Array.from({ length: L + 3 }, (_, i) => Math.cos(i + 0.3)),
        new Float64Array(L),
      ]
      return forwardAndBack(m, args)
    }
    const want = run('interpreter', true)
    for (const backend of ['cpu', 'wasm']) for (const checks of [true, false]) expect(run(backend, checks)).toBe(want)
  })
})
