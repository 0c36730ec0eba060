/**
 * The interpreter (`evaluate.ts`) on a sweep (`mapAccum`) with no elements: its outputs are empty
 * arrays, one per output of the body, also when the body's result tuple sits under lets (the
 * form partial evaluation leaves), where the body is never evaluated to count them.
 */
import { describe, expect, test } from 'vitest'
import { ArrayValue, evaluate, fromHost, toHost } from './evaluate.js'
import { OpTable } from './ops.js'
import * as T from './term.js'
import { v, type Term } from './term.js'

const ops = new OpTable()

/** `mapAccum (x, b. let p = x·b in ((), (p), (p, x + b))) () (0) A B`, the body under a let. */
const sweep: Term = {
  k: 'mapAccum',
  dir: 'none',
  carry: 'c',
  params: ['x', 'b'],
  body: T.let_('p', T.mul(v('x'), v('b')), T.tuple(T.tuple(), T.tuple(v('p')), T.tuple(v('p'), T.add(v('x'), v('b'))))),
  carryInit: T.tuple(),
  sumInit: T.tuple(T.c(0)),
  arrays: [v('A'), v('B')],
}

const env = (a: number[], b: number[]) =>
  new Map([
    ['A', fromHost(Float64Array.from(a))],
    ['B', fromHost(Float64Array.from(b))],
  ])

describe('a sweep with no elements', () => {
  test('gives one empty array per output, the body under a let', () => {
    const out = evaluate(sweep, env([], []), ops) as unknown[]
    const outputs = out[2] as unknown[]
    expect(outputs).toHaveLength(2)
    for (const o of outputs) {
      expect(o).toBeInstanceOf(ArrayValue)
      expect((o as ArrayValue).items).toHaveLength(0)
    }
    // a reduction over an output of the empty sweep is its initial value
    const total = evaluate(T.let_('G', sweep, T.sum(T.proj(1, T.proj(2, v('G'))))), env([], []), ops)
    expect(total).toBe(0)
  })

  test('and the same sweep over two elements', () => {
    const out = toHost(evaluate(sweep, env([1, 2], [3, 4]), ops)) as unknown[]
    expect(out[1]).toEqual([11])
    expect(out[2]).toEqual([Float64Array.from([3, 8]), Float64Array.from([4, 6])])
  })
})
