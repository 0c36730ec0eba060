/**
 * Random source programs with arrays, conditionals, folds and scans: gradients against central
 * finite differences, generated code against the interpreter, and the cheap-gradient bound of
 * Theorem 5.4, cost(∇e) ≤ 4·3ᵖ·cost(e), with costs counted by the Fig. 11 cost model, not by
 * time: on the partially evaluated gradient (the paper's result), and on the very term the code
 * generator translates (after loop-invariant code motion and the reduce/scan sharing).
 */
import { describe, expect, test } from 'vitest'
import { compile } from './compile.js'
import { hoistInvariants } from './hoist.js'
import { pushNegations } from './push-negation.js'
import { shareScans } from './share-scans.js'
import { evaluate, fromHost, toHost, totalCost, type Cost } from './evaluate.js'
import { nao } from './nao.js'
import * as T from './term.js'
import { c, v, type Term } from './term.js'
import { finiteDifferences, flat, maxScaledError, rng } from './test-util.js'
import { arrayType, R, type Type } from './types.js'

interface Scope {
  scalars: string[]
  arrays: string[]
}

function generator(r: () => number) {
  const pick = <X>(xs: X[]): X => xs[Math.floor(r() * xs.length)]!
  let names = 0
  const fresh = (b: string) => `${b}${++names}`
  const scalar = (d: number, s: Scope): Term => {
    if (d <= 0) return r() < 0.8 ? v(pick(s.scalars)) : c(Math.round((0.5 + r()) * 10) / 10)
    const k = pick([
      'add',
      'sub',
      'mul',
      'div',
      'op1',
      'let',
      'if',
      'sum',
      'dot',
      'prod',
      'fold',
      'scan',
      'shift',
      'mul',
      'prefix',
    ])
    const sub = () => scalar(d - 1, s)
    switch (k) {
      case 'add':
        return T.add(sub(), sub())
      case 'sub':
        return T.sub(sub(), sub())
      case 'mul':
        return T.mul(sub(), sub())
      case 'div':
        return T.div(sub(), T.add(c(1.5), T.op('square', sub())))
      case 'op1':
        return T.op(pick(['sin', 'cos', 'tanh', 'square']), sub())
      case 'let': {
        const n = fresh('z')
        return T.let_(n, sub(), scalar(d - 1, { ...s, scalars: [...s.scalars, n] }))
      }
      case 'if':
        return T.if_(T.lt(sub(), sub()), sub(), sub())
      case 'sum':
        return T.sum(array(d - 1, s))
      case 'dot':
        return T.dot(array(d - 1, s), array(d - 1, s))
      case 'prod':
        return T.prod(T.map(array(d - 1, s), (e) => T.add(c(1), T.mul(c(0.3), T.op('sin', e)))))
      case 'fold': {
        const acc = fresh('acc'),
          e = fresh('e')
        const inner = { ...s, scalars: [...s.scalars, acc, e] }
        return {
          k: 'fold',
          acc,
          elem: e,
          body: T.op('tanh', scalar(Math.min(d - 1, 2), inner)),
          init: sub(),
          array: array(d - 1, s),
        }
      }
      case 'scan': {
        const acc = fresh('acc'),
          e = fresh('e')
        const inner = { ...s, scalars: [...s.scalars, acc, e] }
        return T.sum({
          k: r() < 0.5 ? 'scanl' : 'scanr',
          acc,
          elem: e,
          body: T.op('tanh', scalar(Math.min(d - 1, 2), inner)),
          init: sub(),
          array: array(d - 1, s),
        })
      }
      case 'shift':
        return T.dot(T.shift1L(array(d - 1, s)), T.shift1R(array(d - 1, s)))
      case 'prefix':
        // a prefix as long as a shorter array, read against that array
        return T.dot(T.prefix(array(d - 1, s), T.shift1R(array(d - 1, s))), T.shift1L(array(d - 1, s)))
      default:
        throw new Error(k)
    }
  }
  const array = (d: number, s: Scope): Term => {
    if (d <= 0 || r() < 0.3) return v(pick(s.arrays))
    if (r() < 0.5) {
      const e = fresh('e')
      return {
        k: 'map',
        params: [e],
        body: scalar(d - 1, { ...s, scalars: [...s.scalars, e] }),
        arrays: [array(d - 1, s)],
      }
    }
    const [e1, e2] = [fresh('e'), fresh('e')]
    return {
      k: 'map',
      params: [e1, e2],
      body: scalar(d - 1, { ...s, scalars: [...s.scalars, e1, e2] }),
      arrays: [array(d - 1, s), array(d - 1, s)],
    }
  }
  return { scalar }
}

const params: Array<[string, Type]> = [
  ['x', R],
  ['y', R],
  ['A', arrayType()],
  ['B', arrayType()],
]
const scope: Scope = { scalars: ['x', 'y'], arrays: ['A', 'B'] }

describe('random programs', () => {
  const ratios: Array<{ p: number; ratio: number; generated: number }> = []
  test('gradients match finite differences; code matches the interpreter; cost(∇e) ≤ 4·3ᵖ·cost(e)', () => {
    const r = rng(2024)
    const { scalar } = generator(r)
    let programs = 0
    let negationsPushed = 0
    for (let seed = 0; programs < 40; seed++) {
      const body = scalar(4, scope)
      const cp = compile(params, body)
      const args = [
        r() - 0.5,
        r() - 0.5,
        Float64Array.from({ length: 6 }, () => r() * 2 - 1),
        Float64Array.from({ length: 6 }, () => r() * 2 - 1),
      ]
      const [value, grad] = cp.gradient(...args)
      const env = new Map(params.map(([n], i) => [n, fromHost(args[i])]))
      const costE: Cost = { moves: 0, adds: 0, mults: 0, nlops: 0 }
      const costG: Cost = { moves: 0, adds: 0, mults: 0, nlops: 0 }
      const ref = evaluate(body, env, cp.ops, costE) as number
      const interpreted = toHost(evaluate(cp.stages.optimized, env, cp.ops, costG)) as [number, unknown[]]
      expect(value).toBeCloseTo(ref, 10)
      expect(maxScaledError(flat(grad), flat(interpreted[1]))).toBeLessThan(1e-12)
      const fd = finiteDifferences((...a) => cp.value(...a) as number, args, 1e-6)
      const err = maxScaledError(flat(grad), fd)
      // a conditional's kink within h of the point makes the difference quotient meaningless: rare, and reported
      if (err > 1e-5) {
        const fd2 = finiteDifferences((...a) => cp.value(...a) as number, args, 1e-8)
        expect(maxScaledError(flat(grad), fd2), T.printTerm(body)).toBeLessThan(1e-4)
      }
      const p = nao(body)
      const ratio = totalCost(costG) / totalCost(costE)
      expect(ratio, T.printTerm(body)).toBeLessThanOrEqual(4 * 3 ** p)
      // the term the code generator translates: same values, and a cost no higher
      const costC: Cost = { moves: 0, adds: 0, mults: 0, nlops: 0 }
      const generated = toHost(evaluate(shareScans(hoistInvariants(cp.stages.optimized)), env, cp.ops, costC)) as [
        number,
        unknown[],
      ]
      expect(maxScaledError(flat(generated[1]), flat(interpreted[1]))).toBeLessThan(1e-12)
      expect(totalCost(costC)).toBeLessThanOrEqual(totalCost(costG))
      // with negations pushed into sweeps too (what `generate` translates): same values, and the
      // bound still holds (a negation per contribution may count more than one per sum)
      const costN: Cost = { moves: 0, adds: 0, mults: 0, nlops: 0 }
      const pushed = pushNegations(cp.stages.optimized)
      const withNeg = toHost(evaluate(shareScans(hoistInvariants(pushed)), env, cp.ops, costN)) as [number, unknown[]]
      expect(maxScaledError(flat(withNeg[1]), flat(interpreted[1]))).toBeLessThan(1e-12)
      expect(totalCost(costN) / totalCost(costE)).toBeLessThanOrEqual(4 * 3 ** p)
      if (T.printTerm(pushed) !== T.printTerm(cp.stages.optimized)) negationsPushed++
      ratios.push({ p, ratio, generated: totalCost(costC) / totalCost(costE) })
      programs++
    }
    console.log(`negations pushed into sweeps in ${negationsPushed} of ${programs} programs`)
    const q = (xs: number[], f: number) => xs[Math.min(xs.length - 1, Math.floor(f * xs.length))]!.toFixed(2)
    for (const key of ['ratio', 'generated'] as const) {
      const byP = new Map<number, number[]>()
      for (const r of ratios) byP.set(r.p, [...(byP.get(r.p) ?? []), r[key]])
      for (const [p, xs] of [...byP].sort((a, b) => a[0] - b[0])) {
        xs.sort((a, b) => a - b)
        console.log(
          `${key === 'ratio' ? 'partially evaluated' : 'as generated'}: p=${p} (bound ${4 * 3 ** p}): ${xs.length} programs, cost ratio min ${q(xs, 0)} median ${q(xs, 0.5)} p90 ${q(xs, 0.9)} max ${q(xs, 1)}`,
        )
      }
    }
  }, 240_000) // ~10 s alone; the whole suite on 2 loaded cores stretches it several-fold
})
