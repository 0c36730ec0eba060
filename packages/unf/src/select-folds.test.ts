/**
 * Select folds (`select-folds.ts`): which folds are recognised as a maximum or minimum, the
 * code (four partial results, no branch on the previous element), and values against the
 * interpreter at lengths 0–13 with NaN, ±0, ±∞ among the elements and in the initial value.
 */
import { describe, expect, test } from 'vitest'
import { generate } from './codegen.js'
import { evaluate, fromHost, toHost } from './evaluate.js'
import { OpTable } from './ops.js'
import { selectFold } from './select-folds.js'
import * as T from './term.js'
import { c, v, type Term } from './term.js'
import { rng } from './test-util.js'
import { arrayType } from './types.js'

const R1 = arrayType()
const ops = new OpTable()
const cmp = (o: string, p: Term, q: Term) => T.op(o, p, q)

/** `fold (a, x. if cond(a, x) then pick(a, x) else keep(a, x)) z A` */
const fold = (z: number, body: (a: Term, x: Term) => Term) => T.fold(c(z), v('A'), body)

describe('select folds', () => {
  const recognised: Array<[string, (a: Term, x: Term) => Term, string]> = [
    ['x > a', (a, x) => T.if_(cmp('>', x, a), x, a), '>'],
    ['a < x', (a, x) => T.if_(cmp('<', a, x), x, a), '>'],
    ['x >= a', (a, x) => T.if_(cmp('>=', x, a), x, a), '>='],
    ['x < a', (a, x) => T.if_(cmp('<', x, a), x, a), '<'],
    ['a > x', (a, x) => T.if_(cmp('>', a, x), x, a), '<'],
    ['a >= x', (a, x) => T.if_(cmp('>=', a, x), x, a), '<='],
  ]
  test('recognised: the element taken when the comparison holds, the accumulator kept otherwise', () => {
    for (const [, body, want] of recognised) expect(selectFold(fold(0, body))?.cmp).toBe(want)
    for (const body of [
      (a: Term, x: Term) => T.if_(cmp('>', x, a), a, x), // keeps the element otherwise: NaN would not be skipped
      (a: Term, x: Term) => T.if_(cmp('>', x, c(0)), x, a), // a comparison with something else
      (a: Term, x: Term) => T.if_(cmp('==', x, a), x, a),
      (a: Term, x: Term) => T.if_(cmp('>', x, a), T.add(x, c(0)), a),
      (a: Term, x: Term) => T.add(a, x),
    ])
      expect(selectFold(fold(0, body))).toBeUndefined()
  })

  test('four partial results, no branch statement; values = the interpreter with NaN, ±0, ±∞, any z', () => {
    const r = rng(21)
    const special = [Number.NaN, 0, -0, Infinity, -Infinity, 1e308, -1e308]
    let compared = 0
    for (const [name, body] of recognised) {
      for (const z of [-Infinity, Infinity, 0.25, Number.NaN]) {
        const term = fold(z, body)
        const g = generate(term, [{ name: 'A', type: R1 }], ops)
        expect(g.source, name).toMatch(/let acc\d+ = [^,]+, acc\d+ = [^,]+, acc\d+ = [^,]+, acc\d+ = [^;]+;/)
        expect(g.source).not.toMatch(/^ {4,}if \(/m)
        for (let n = 0; n <= 13; n++) {
          const a = Float64Array.from({ length: n }, () => (r() < 0.25 ? special[Math.floor(r() * 7)]! : r() - 0.5))
          const want = toHost(evaluate(term, new Map([['A', fromHost(a)]]), ops)) as number
          const got = g.fn(a) as number
          // the same value; a zero's sign may differ (ties keep the first of a group)
          expect(Number.isNaN(got) ? 'NaN' : got + 0).toEqual(Number.isNaN(want) ? 'NaN' : want + 0)
          compared++
        }
      }
    }
    expect(compared).toBe(6 * 4 * 14)
  })

  test('logsumexp: its maximum is a select fold (value and gradient code)', () => {
    const src = generate(T.logsumexp(v('A')), [{ name: 'A', type: R1 }], ops).source
    expect(src).toMatch(/acc\d+ = (e\d+) > (acc\d+) \? \1 : \2;/)
  })
})
