/**
 * Negations moved into sweeps (`push-negation.ts`): the printed rewrite, what it leaves alone,
 * values against the interpreter before the rewrite, and the generated gradient (sums added
 * straight into the enclosing accumulator) against finite differences.
 */
import { describe, expect, test } from 'vitest'
import { compile, compileText } from './compile.js'
import { ArrayValue, evaluate, fromHost, toHost, totalCost, type Cost } from './evaluate.js'
import { hoistInvariants } from './hoist.js'
import { nao } from './nao.js'
import { OpTable } from './ops.js'
import { shareScans } from './share-scans.js'
import { pushNegations } from './push-negation.js'
import * as T from './term.js'
import { printTerm, v, type Term } from './term.js'
import { finiteDifferences, flat, maxScaledError, rng } from './test-util.js'
import { arrayType } from './types.js'

const R1 = arrayType()
const ops = new OpTable()
const neg = (a: Term): Term => ({ k: 'map', params: ['z'], body: T.op('neg', v('z')), arrays: [a] })
const plus = (a: Term, b: Term): Term => ({ k: 'add', a, b })
const part = (of: number, i: number, name = 'G'): Term => T.proj(i, T.proj(of, v(name)))

/**
 * `let G = mapAccum (x, b. ((), (map (y. y·x) B), (x·b))) () (0̂[B]) A B in r`: a sum over A of
 * x·B and an output x·b per element (A and B of one length).
 */
const sweep = (r: Term): Term =>
  T.let_(
    'G',
    {
      k: 'mapAccum',
      dir: 'none',
      carry: 'c',
      params: ['x', 'b'],
      body: T.tuple(T.tuple(), T.tuple(T.map(v('B'), (y) => T.mul(y, v('x')), 'y')), T.tuple(T.mul(v('x'), v('b')))),
      carryInit: T.tuple(),
      sumInit: T.tuple({ k: 'zero', type: R1, like: v('B') }),
      arrays: [v('A'), v('B')],
    },
    r,
  )

const env = () => {
  const r = rng(3)
  return new Map([
    ['A', fromHost(Float64Array.from({ length: 5 }, () => r() - 0.5))],
    ['B', fromHost(Float64Array.from({ length: 5 }, () => r() - 0.5))],
  ])
}

describe('negations pushed into sweeps', () => {
  test('a negated sum of a sum and an output of a sweep: the sweep negates both, the sum reads them bare', () => {
    const t = sweep(neg(plus(part(1, 0), part(2, 0))))
    const p = pushNegations(t)
    expect(printTerm(p)).toMatch(
      /^let G = mapAccumnone \(x, b\. \(\(\), \(map \(y\. -\(y \* x\)\) B\), \(-\(x \* b\)\)\)\) \(\) \(0̂\[B\]\) A B in\nπ1 \(π2 G\) \+̂ π1 \(π3 G\)$/,
    )
    expect(toHost(evaluate(p, env(), ops))).toEqual(toHost(evaluate(t, env(), ops)))
  })

  test('a part also read bare, or read twice, is left alone', () => {
    const twice = sweep(plus(neg(part(1, 0)), part(1, 0)))
    expect(printTerm(pushNegations(twice))).toBe(printTerm(twice))
    const bare = sweep(T.tuple(neg(part(2, 0)), v('G')))
    expect(printTerm(pushNegations(bare))).toBe(printTerm(bare))
    // a sum that does not start from zero stays too
    const fromB = sweep(neg(part(1, 0)))
    ;((fromB as { value: { sumInit: Term } }).value as { sumInit: Term }).sumInit = T.tuple(v('B'))
    expect(printTerm(pushNegations(fromB))).toBe(printTerm(fromB))
  })

  test('negation distributes over +̂ and fuses with a map', () => {
    const t = neg(
      plus(
        T.map(v('A'), (a) => T.mul(a, a), 'a'),
        v('B'),
      ),
    )
    expect(printTerm(pushNegations(t))).toMatch(/^map \(a\. -\(a \* a\)\) A \+̂ map \(z#\d+\. -z#\d+\) B$/)
    expect(toHost(evaluate(pushNegations(t), env(), ops))).toEqual(toHost(evaluate(t, env(), ops)))
  })

  test('the cotangent of μ in x − μ is added into its accumulator in the sweep (no zero array), and matches finite differences', () => {
    const text =
      '(X: R[][], mu: R[], L: R[][]) => sum(map((x) => let xc = map2((a, m) => a - m, x, mu) in sum(map((row) => square(dot(row, xc)), L)), X))'
    const c = compileText(text, { wrt: ['mu', 'L'] })
    // before: a zero array per element of X, summed over L's rows, then negated into μ's cotangent
    expect(c.source.gradient).not.toMatch(/new Float64Array\(o\d+\.length\)/)
    expect(c.source.gradient).toMatch(/z\d+\[q\d+\] \+= t\d+;/)
    const r = rng(11)
    const X = Array.from({ length: 3 }, () => Float64Array.from({ length: 4 }, () => r() - 0.5))
    const mu = Float64Array.from({ length: 4 }, () => r() - 0.5)
    const L = Array.from({ length: 5 }, () => Float64Array.from({ length: 4 }, () => r() - 0.5))
    const args = [X, mu, L]
    const [, grads] = c.gradient(...args)
    const full = compile(
      c.program.params.map((p) => [p.name, p.type]),
      c.program.body,
    )
    const fd = finiteDifferences((...a: unknown[]) => full.value(...a) as number, args)
    expect(maxScaledError(flat(grads.slice(1)), fd.slice(12))).toBeLessThan(1e-6)
  })

  test('every size (no point, no row, one element): gradients against finite differences; Theorem 5.4 on the rewritten term', () => {
    const text =
      '(X: R[][], mu: R[], L: R[][]) => sum(map((x) => let xc = map2((a, m) => a - m, x, mu) in sum(map((row) => square(dot(row, xc) + sum(xc)), L)), X))'
    const c = compileText(text, { wrt: ['mu', 'L'] })
    const full = compile(
      c.program.params.map((p) => [p.name, p.type]),
      c.program.body,
    )
    const pushed = pushNegations(c.stages.optimized)
    expect(printTerm(pushed)).not.toBe(printTerm(c.stages.optimized))
    const r = rng(5)
    const vec = (d: number) => Float64Array.from({ length: d }, () => r() - 0.5)
    for (const [n, rows, d] of [
      [0, 2, 3],
      [2, 0, 3],
      [1, 1, 1],
      [3, 2, 2],
      [2, 4, 5],
    ] as const) {
      const X = Array.from({ length: n }, () => vec(d)),
        mu = vec(d),
        L = Array.from({ length: rows }, () => vec(d))
      const args = [X, mu, L]
      const [value, grads] = c.gradient(...args)
      expect(value).toBeCloseTo(full.value(...args) as number, 12)
      const fd = finiteDifferences((...a: unknown[]) => full.value(...a) as number, args)
      expect(maxScaledError(flat(grads.slice(1)), fd.slice(n * d))).toBeLessThan(1e-6)
      // the cost bound, counted on the term as generated (negations pushed, hoisted, shared), and
      // the interpreter's gradient against the compiled one, empty sweeps (n or rows 0) included
      const env = new Map([
        ['X', new ArrayValue(X.map((x) => fromHost(x)))],
        ['mu', fromHost(mu)],
        ['L', new ArrayValue(L.map((x) => fromHost(x)))],
      ])
      const costE: Cost = { moves: 0, adds: 0, mults: 0, nlops: 0 },
        costN: Cost = { moves: 0, adds: 0, mults: 0, nlops: 0 }
      evaluate(c.program.body, env, ops, costE)
      const g = toHost(evaluate(shareScans(hoistInvariants(pushed)), env, ops, costN)) as [number, unknown[]]
      expect(maxScaledError(flat(g[1]), flat(grads))).toBeLessThan(1e-12)
      if (totalCost(costE) > 0)
        expect(totalCost(costN) / totalCost(costE)).toBeLessThanOrEqual(4 * 3 ** nao(c.program.body))
    }
  })
})
