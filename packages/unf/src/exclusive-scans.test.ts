/**
 * Exclusive scans read by maps (`exclusive-scans.ts`): `shift1R (scanl f z X)` and
 * `shift1L (scanr f z X)` fused into the map's loop (one chain, four blocks, or the blocks of a
 * stored scan), no state stored and no guard per element; values against the interpreter at
 * every length 0–13 (the empty array included), zeros included.
 */
import { describe, expect, test } from 'vitest'
import { generate } from './codegen.js'
import { evaluate, fromHost, toHost } from './evaluate.js'
import { OpTable } from './ops.js'
import * as T from './term.js'
import { c, v, type Term } from './term.js'
import { flat, maxScaledError, rng } from './test-util.js'
import { arrayType } from './types.js'

const R1 = arrayType()
const ops = new OpTable()
const times = (a: Term, b: Term) => T.mul(a, b)
const plus = (a: Term, b: Term) => T.add(a, b)
/** not associative as written: the one-chain fusion */
const affine = (a: Term, b: Term) => T.add(T.mul(a, b), c(0.125))
const last = (a: Term): Term => ({ k: 'last', array: a })

/** The generated function against the interpreter, lengths 0–13; returns the source. */
function agreesAtEveryLength(term: Term): string {
  const g = generate(
    term,
    [
      { name: 'A', type: R1 },
      { name: 'B', type: R1 },
    ],
    ops,
  )
  const r = rng(5)
  for (let n = 0; n <= 13; n++) {
    const a = Float64Array.from({ length: n }, () => 0.6 + r())
    if (n > 5) a[n - 4] = 0
    const b = Float64Array.from({ length: n }, () => r() - 0.5)
    const env = new Map([
      ['A', fromHost(a)],
      ['B', fromHost(b)],
    ])
    const expected = toHost(evaluate(term, env, ops))
    for (let call = 0; call < 2; call++) expect(maxScaledError(flat(g.fn(a, b)), flat(expected))).toBeLessThan(1e-14)
  }
  return g.source
}

const exclusive = (left: boolean, z: number, op: (a: Term, b: Term) => Term, x: Term): Term =>
  left ? T.shift1R(T.scanl(c(z), x, op)) : T.shift1L(T.scanr(c(z), x, op))

describe('exclusive scans fused into maps', () => {
  for (const left of [true, false]) {
    const name = left ? 'shift1R (scanl …)' : 'shift1L (scanr …)'
    test(`${name}: four blocks for + and ·, one chain otherwise; no stored state, no guard`, () => {
      for (const [op, z] of [
        [times, 1],
        [plus, 0.5],
        [affine, 2],
      ] as const) {
        const term = T.map2(exclusive(left, z, op, v('A')), v('B'), (p, q) => T.sub(T.mul(p, q), q))
        const src = agreesAtEveryLength(term)
        expect(src.match(/new Float64Array/g)).toHaveLength(1) // the result only
        expect(src).not.toMatch(/^ {4,}if \(/m) // no branch in a loop
        if (op !== affine) expect(src).toMatch(/let acc\d+ = [01.5]+, acc\d+ = [01.5]+, acc\d+ = [01.5]+;/)
      }
    })
  }

  test('∇prod shape: the suffix products on the blocks of the stored prefix products, their totals reused', () => {
    for (const z of [1, 1.5]) {
      const S = v('S')
      const term = T.let_(
        'S',
        T.scanl(c(z), v('A'), times),
        T.tuple(last(S), T.map2(T.shift1R(S), exclusive(false, 1, times, v('A')), times)),
      )
      const src = agreesAtEveryLength(term)
      expect((src.match(/\bfor \(/g) ?? []).length).toBe(4) // the stored scan's two loops, the map's two
      expect(src).not.toMatch(/let acc\d+ = 1, acc\d+ = 1, acc\d+ = 1;/) // no totals pass
      expect(src).not.toMatch(/^ {4,}if \(/m) // no branch in a loop
    }
  })

  test('over another array: the stored scan’s blocks, the map’s own totals', () => {
    const S = v('S')
    const term = T.let_(
      'S',
      T.scanl(c(0.5), v('A'), plus),
      T.tuple(
        last(S),
        T.map2(T.shift1R(S), exclusive(false, 0.25, plus, v('B')), (p, q) => T.sub(p, q)),
      ),
    )
    expect(agreesAtEveryLength(term)).toMatch(/let acc\d+ = 0, acc\d+ = 0, acc\d+ = 0;/)
  })
})
