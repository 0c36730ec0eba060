/**
 * `prefix A L` (the first |L| elements of A) and its transpose `padTo C A` (C followed by zeros
 * up to |A|): a triangular matrix stored by rows reads the matching prefix of a vector, and its
 * gradient touches the triangle only. Each stage is checked on its own: the type checker, Source
 * UNF, the printed gradient after partial evaluation, the rewrite rules (zeros, negation), the
 * interpreter against the generated code, and gradients against finite differences.
 */
import { describe, expect, test } from 'vitest'
import { compile, compileText, compileVjp } from './compile.js'
import { UnfError } from './errors.js'
import { ArrayValue, evaluate, fromHost, toHost, type Value } from './evaluate.js'
import { gmmObjective } from './models.js'
import { OpTable } from './ops.js'
import { partialEvaluate } from './partial-eval.js'
import { pushNegations } from './push-negation.js'
import * as T from './term.js'
import { canonicalNames, printTerm, v, type Term } from './term.js'
import { finiteDifferences, flat, maxScaledError, rng } from './test-util.js'
import { arrayType, R, type Type } from './types.js'
import { printUnf } from './unf.js'

const R1 = arrayType()
const R2 = arrayType(R1)

/** A host value as the interpreter's value of type t (JS arrays are arrays here, not tuples). */
function typed(x: unknown, t: Type): Value {
  if (t.kind === 'array' && t.elem.kind !== 'R') return new ArrayValue((x as unknown[]).map((e) => typed(e, t.elem)))
  if (t.kind === 'tuple') return (x as unknown[]).map((e, i) => typed(e, t.items[i]!))
  return fromHost(x)
}

/** The gradient of a compiled program against the interpreter (on the UNF⁻¹ term and the optimised one) and finite differences. */
function checkAll(params: Array<[string, Type]>, body: Term, args: unknown[]) {
  const cp = compile(params, body)
  const [value, grad] = cp.gradient(...args)
  const env = new Map(params.map(([n, t], i) => [n, typed(args[i], t)]))
  for (const stage of [cp.stages.inverse, cp.stages.optimized]) {
    const ref = toHost(evaluate(stage, env, cp.ops)) as [number, unknown[]]
    expect(value).toBeCloseTo(ref[0], 12)
    expect(maxScaledError(flat(grad), flat(ref[1]))).toBeLessThan(1e-12)
  }
  const fd = finiteDifferences((...a) => cp.value(...a) as number, args)
  expect(maxScaledError(flat(grad), fd)).toBeLessThan(1e-6)
  return cp
}

/** A triangle stored by rows: row j has j entries. */
const triangle = (d: number, r: () => number) =>
  Array.from({ length: d }, (_, j) => Float64Array.from({ length: j }, r))

describe('prefix: type checker, UNF, reverse rule, partial evaluation', () => {
  test('the gradient of dot(L, prefix(A, L)) prints as padTo L A and prefix A L', () => {
    const cp = compileText('(A: R[], L: R[]) => dot(L, prefix(A, L))')
    expect(printUnf(cp.stages.unf)).toMatch(/prefix_\{R\[\],R\[\],R\[\];prefix A L\}/)
    expect(printTerm(cp.stages.inverse)).toContain('padTo')
    expect(printTerm(canonicalNames(cp.stages.optimized))).toBe(
      '(reduce (a1, x1. a1 + x1) 0 (map2 (x2, y1. x2 * y1) L (prefix A L)), (padTo L A, prefix A L))',
    )
    const [value, [dA, dL]] = cp.gradient(Float64Array.of(1, 2, 3), Float64Array.of(5, 7))
    expect(value).toBe(19)
    expect(Array.from(dA as Float64Array)).toEqual([5, 7, 0])
    expect(Array.from(dL as Float64Array)).toEqual([1, 2])
  })

  test('the text syntax and the builder give the same program', () => {
    const text = compileText('(A: R[], L: R[]) => sum(map2((l, a) => l * tanh(a), L, prefix(A, L)))')
    const built = compile(
      [
        ['A', R1],
        ['L', R1],
      ],
      T.sum(T.map2(v('L'), T.prefix(v('A'), v('L')), (l, a) => T.mul(l, T.op('tanh', a)))),
    )
    const args = [Float64Array.of(0.3, -0.2, 0.9, 0.1), Float64Array.of(1.5, -0.5)]
    expect(text.gradient(...args)).toEqual(built.gradient(...args))
  })

  test('ill-typed programs and target-only padTo are rejected with coded errors', () => {
    const ctx: Array<[string, Type]> = [
      ['x', R],
      ['A', R1],
    ]
    const bad = (body: Term, msg: RegExp) => {
      expect(() => compile(ctx, body)).toThrow(msg)
      expect(() => compile(ctx, body)).toThrow(expect.objectContaining({ code: 'unf/type' }))
    }
    bad(T.sum(T.prefix(v('x'), v('A'))), /expected an array, got R/)
    bad(T.sum(T.prefix(v('A'), v('x'))), /expected an array, got R/)
    bad(T.sum({ k: 'padTo', array: v('A'), len: v('A') }), /target-language construct/)
    expect(() => compileText('(A: R[]) => sum(prefix(A))')).toThrow(/takes 2 arguments/)
  })

  test('a prefix longer than its array is a shape error, in the interpreter and in generated code', () => {
    const cp = compileText('(A: R[], L: R[]) => dot(L, prefix(A, L))')
    const args = [Float64Array.of(1, 2), Float64Array.of(1, 2, 3)]
    const coded = expect.objectContaining({ code: 'unf/shape' })
    expect(() => cp.value(...args)).toThrow(coded)
    expect(() => cp.gradient(...args)).toThrow(coded)
    const env = new Map([
      ['A', fromHost(args[0])],
      ['L', fromHost(args[1])],
    ])
    expect(() => evaluate(cp.program.body, env, cp.ops)).toThrow(coded)
    expect(() => evaluate(cp.program.body, env, cp.ops)).toThrow(UnfError)
  })

  test('rewrite rules: a prefix of zeros, zeros padded, and a negation moved into the padded array', () => {
    const z: Term = { k: 'zero', type: R1, like: v('A') }
    const before: Term = T.tuple(T.prefix(z, v('L')), { k: 'padTo', array: { k: 'zero', type: R1 }, len: v('A') })
    expect(printTerm(before)).toBe('(prefix (0̂[A]) L, padTo 0̂ A)')
    expect(printTerm(partialEvaluate(before))).toBe('(0̂[prefix A L], 0̂[A])')
    const negated: Term = T.map(
      { k: 'padTo', array: T.map(v('C'), (c) => T.mul(c, v('s')), 'c'), len: v('A') },
      (q) => T.neg(q),
      'q',
    )
    expect(printTerm(negated)).toBe('map (q. -q) (padTo (map (c. c * s) C) A)')
    expect(printTerm(pushNegations(negated))).toBe('padTo (map (c. -(c * s)) C) A')
    // the same values in the interpreter, up to the sign of the padding's zeros (−0 before, +0 after)
    const env = new Map([
      ['C', fromHost(Float64Array.of(1, -2))],
      ['A', fromHost(Float64Array.of(0, 0, 0))],
      ['s', 3],
    ])
    const ops = new OpTable()
    const a = toHost(evaluate(negated, env, ops)) as Float64Array
    const b = toHost(evaluate(pushNegations(negated), env, ops)) as Float64Array
    expect(Array.from(b, (q) => q + 0)).toEqual(Array.from(a, (q) => q + 0))
  })
})

describe('prefix in generated code', () => {
  const r = rng(11)
  test('a triangular matrix–vector product: the gradient reads x by index and adds into its prefix (no views, no padding)', () => {
    const params: Array<[string, Type]> = [
      ['L', R2],
      ['x', R1],
    ]
    const body = T.sum(T.map(v('L'), (row) => T.op('square', T.dot(row, T.prefix(v('x'), row)))))
    for (const d of [0, 1, 2, 5, 9]) {
      const x = Float64Array.from({ length: d }, () => r() - 0.5)
      // (d = 0: a sum over no row, every stage included: the reduce rule is defined on empty arrays)
      const cp = checkAll(params, body, [triangle(d, () => r() - 0.5), x])
      expect(cp.source.gradient).not.toMatch(/subarray|new Float64Array\(n\d+\);\s*pad/)
      expect(cp.source.gradient).toMatch(/if \(n\d+ > z\d+\.length\) shapeErr/)
    }
  })

  test('a prefix of a map: the map is evaluated in the reading loop, for the prefix only', () => {
    const params: Array<[string, Type]> = [
      ['A', R1],
      ['L', R1],
    ]
    const body = T.sum(
      T.map2(
        v('L'),
        T.prefix(
          T.map(v('A'), (a) => T.exp(a)),
          v('L'),
        ),
        (l, e) => T.mul(l, e),
      ),
    )
    const cp = checkAll(params, body, [Float64Array.of(0.1, -0.4, 0.3, 0.8, -1), Float64Array.of(2, 3, -1)])
    expect(cp.source.value).not.toMatch(/new Float64Array/)
    expect(() => cp.value(Float64Array.of(0.1), Float64Array.of(2, 3))).toThrow(
      expect.objectContaining({ code: 'unf/shape' }),
    )
  })

  test('a prefix and a padTo returned as values: arrays of reals and arrays of arrays, against the interpreter', () => {
    for (const [type, make] of [
      [R1, (n: number) => Float64Array.from({ length: n }, () => r())],
      [R2, (n: number) => Array.from({ length: n }, () => Float64Array.from({ length: 2 }, () => r()))],
    ] as const) {
      const vjp = compileVjp(
        [
          ['M', type],
          ['L', R1],
        ],
        T.prefix(v('M'), v('L')),
      )
      expect(printTerm(canonicalNames(vjp.stages.optimized))).toBe('(prefix M L, (padTo seed1 M, 0̂[L]))')
      const args = [make(4), Float64Array.of(7, 8), make(2)]
      const got = vjp.fn(...args)
      const seedName = [...T.freeVars(vjp.stages.optimized)].find((n) => n.startsWith('seed'))!
      const env = new Map(
        [
          ['M', type],
          ['L', R1],
          [seedName, type],
        ].map(([name, t], i) => [name as string, typed(args[i], t as Type)] as const),
      )
      const ref = toHost(evaluate(vjp.stages.optimized, env, new OpTable()))
      expect(flat(got)).toEqual(flat(ref))
      expect(flat(got[1][0])).toEqual([...flat(args[2]), ...flat(args[2]).map(() => 0)])
    }
  })

  test('the triangular GMM equals the dense one (value, and the gradient on the triangle) and matches finite differences', () => {
    const d = 4,
      k = 3,
      n = 5
    const vec = (m: number) => Float64Array.from({ length: m }, () => r() - 0.5)
    const dense = Array.from({ length: k }, () =>
      Array.from({ length: d }, (_, row) => Float64Array.from({ length: d }, (_, col) => (col < row ? r() - 0.5 : 0))),
    )
    const tri = dense.map((q) => q.map((row, j) => row.slice(0, j)))
    const head = [vec(k), Array.from({ length: k }, () => vec(d)), Array.from({ length: k }, () => vec(d))]
    const tail = [Array.from({ length: n }, () => vec(d)), 1.3, 2, n, 0.25]
    const D = gmmObjective(),
      Tr = gmmObjective({ triangular: true })
    const cd = compile(D.params, D.body),
      ct = checkAll(Tr.params, Tr.body, [...head, tri, ...tail])
    const [vd, gd] = cd.gradient(...head, dense, ...tail)
    const [vt, gt] = ct.gradient(...head, tri, ...tail)
    expect(Math.abs(vt - vd)).toBeLessThan(1e-12 * Math.abs(vd))
    const close = (a: number[], b: number[]) => a.forEach((x, i) => expect(Math.abs(x - b[i]!)).toBeLessThan(1e-12))
    close(flat(gt.slice(0, 3)), flat(gd.slice(0, 3)))
    const onTriangle = (gd[3] as Float64Array[][]).map((q) => q.map((row, j) => row.slice(0, j)))
    close(flat(gt[3]), flat(onTriangle))
    close(flat(gt.slice(4)), flat(gd.slice(4)))
  })
})
