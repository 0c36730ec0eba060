import { describe, expect, test } from 'vitest'
import { compile } from './compile.js'
import { evaluate, fromHost, toHost } from './evaluate.js'
import { OpTable } from './ops.js'
import { reverseStages } from './pipeline.js'
import { printTargetUnf } from './reverse.js'
import { c, canonicalNames, dot, lets, mul, printTerm, prod, sum, v } from './term.js'
import { arrayType, R } from './types.js'
import { printUnf } from './unf.js'

const ops = new OpTable()
const R1 = arrayType()

describe('Example 1.1: let w1 = x1 * x2 in let w2 = w1 * x1 in w2', () => {
  const body = lets(
    [
      ['w1', mul(v('x1'), v('x2'))],
      ['w2', mul(v('w1'), v('x1'))],
    ],
    v('w2'),
  )
  const ctx = ['x1', 'x2', 'x3'].map((name) => ({ name, type: R }))
  const st = reverseStages(body, ctx, c(1), ops)

  test('UNF sequentialises the term into unary primitives over the context (Fig. 9)', () => {
    expect(printUnf(st.unf).split(';\n')).toEqual([
      'var_{R,R,R;1}',
      'var_{R,R,R,R;2}',
      '*_{R,R,R;2}',
      'proj_{R,R,R;R,R;R}',
      'var_{R,R,R,R;4}',
      'var_{R,R,R,R,R;1}',
      '*_{R,R,R,R;2}',
      'proj_{R,R,R,R;R,R;R}',
      'var_{R,R,R,R,R;5}',
      'proj_{R,R,R,R;R;R}',
      'proj_{R,R,R;R;R}',
    ])
    expect(printTargetUnf(st.target).split(';\n')[2]).toBe('F(*_{R,R,R;2}, Jᵀ*_{R,R,R;2})')
  })

  test('UNF⁻¹ gives the continuation-passing term, with one lambda per step', () => {
    const printed = printTerm(canonicalNames(st.inverse))
    expect(printed.split('\n')[0]).toBe('let Y1 = fun (y1, y2, y3) -> (y1, y2, y3) in')
    expect((printed.match(/fun \(/g) ?? []).length).toBe(st.unf.prims.length + 1)
  })

  test('partial evaluation reduces it to the SSA-like result of the paper', () => {
    expect(printTerm(canonicalNames(st.optimized))).toBe(
      [
        'let w1 = x1 * x2 in',
        'let w2 = w1 * x1 in',
        'let y1 = x2 * x1 in',
        'let y2 = x1 * x1 in',
        'let y3 = w1 + y1 in',
        '(w2, (y3, y2, 0))',
      ].join('\n'),
    )
  })

  test("every stage computes the same value and gradient (the paper's: (w1 + x2·x1, x1·x1, 0))", () => {
    const [x1, x2, x3] = [1.5, -0.7, 2]
    const env = new Map([
      ['x1', x1],
      ['x2', x2],
      ['x3', x3],
    ])
    const expected = [x1 * x2 * x1, [x1 * x2 + x2 * x1, x1 * x1, 0]]
    expect(toHost(evaluate(st.inverse, env, ops))).toEqual(expected)
    expect(toHost(evaluate(st.optimized, env, ops))).toEqual(expected)
    expect(
      compile(
        ctx.map((s) => [s.name, s.type]),
        body,
      ).gradient(x1, x2, x3),
    ).toEqual(expected)
  })
})

describe('Example 1.2: the gradients of sum, dot and prod come out as derived by hand', () => {
  const grad = (params: Array<[string, ReturnType<typeof arrayType>]>, body: Parameters<typeof compile>[1]) =>
    printTerm(canonicalNames(compile(params, body).stages.optimized))
  test('∇sum A = map (x → 1) A', () => {
    expect(grad([['A', R1]], sum(v('A')))).toBe('(reduce (a1, x1. a1 + x1) 0 A, (map (a2. 1) A))')
  })
  test('∇_A dot(A, B) = B (and ∇_B = A)', () => {
    expect(
      grad(
        [
          ['A', R1],
          ['B', R1],
        ],
        dot(v('A'), v('B')),
      ),
    ).toBe('(reduce (a1, x1. a1 + x1) 0 (map2 (x2, y1. x2 * y1) A B), (B, A))')
  })
  // The paper prints the suffix products as scanr (*) 1 (shift1L A), which is undefined on an
  // empty A; shift1L (scanr (*) 1 A) is the same array for |A| ≥ 1 and empty for |A| = 0
  test('∇prod A = map2 (*) (shift1R (scanl (*) 1 A)) (shift1L (scanr (*) 1 A))', () => {
    expect(grad([['A', R1]], prod(v('A')))).toBe(
      '(reduce (a1, x1. a1 * x1) 1 A, (map2 (p1, q1. p1 * q1) (shift1R (scanl (a2, x2. a2 * x2) 1 A)) (shift1L (scanr (u1, w1. u1 * w1) 1 A))))',
    )
    const A = Float64Array.of(2, 0, 3, -1)
    const [, [g]] = compile([['A', R1]], prod(v('A'))).gradient(A)
    expect(Array.from(g as Float64Array, (x) => x + 0)).toEqual([0, -6, 0, 0])
    expect(
      (
        toHost(
          evaluate(
            reverseStages(prod(v('A')), [{ name: 'A', type: R1 }], c(1), ops).inverse,
            new Map([['A', fromHost(A)]]),
            ops,
          ),
        ) as [number, [Float64Array]]
      )[1][0].map((x) => x + 0),
    ).toEqual(Float64Array.of(0, -6, 0, 0))
  })
  test('∇prod and ∇sum of an empty array: value 1 (0), gradient empty, at every stage and in generated code', () => {
    const empty = new Map([['A', fromHost(new Float64Array(0))]])
    for (const [body, unit] of [
      [prod(v('A')), 1],
      [sum(v('A')), 0],
    ] as const) {
      const st = reverseStages(body, [{ name: 'A', type: R1 }], c(1), ops)
      for (const stage of [st.inverse, st.optimized]) {
        const [value, [g]] = toHost(evaluate(stage, empty, ops)) as [number, [Float64Array]]
        expect(value).toBe(unit)
        expect(g.length).toBe(0)
      }
      for (const reuseResults of [false, true]) {
        const [value, [g]] = compile([['A', R1]], body, { reuseResults }).gradient(new Float64Array(0))
        expect(value).toBe(unit)
        expect((g as Float64Array).length).toBe(0)
      }
    }
  })
})
