/**
 * One test per rule of the reverse transform: every Source UNF primitive (var, constants, each
 * scalar operation, pair, π, proj) and every construct (map, map2, n-ary map, reduce, fold,
 * scanl, scanr, shift1L, shift1R, prefix, conditionals). Each program is checked three ways: the
 * primitive appears in its Source UNF, the continuation-passing term (UNF⁻¹, before partial
 * evaluation) run by the interpreter agrees with the generated code, and the gradient matches
 * central finite differences.
 */
import { describe, expect, test } from 'vitest'
import { compile } from './compile.js'
import { evaluate, fromHost, toHost } from './evaluate.js'
import * as T from './term.js'
import { c, v, type Term } from './term.js'
import { finiteDifferences, flat, maxScaledError } from './test-util.js'
import { arrayType, R, tupleType, type Type } from './types.js'
import { printUnf } from './unf.js'

const R1 = arrayType()
const A = () => Float64Array.of(0.3, -0.8, 1.1, 0.45, -0.2)
const B = () => Float64Array.of(0.9, 0.25, -0.6, 1.3, 0.7)

function rule(name: string, prim: RegExp, params: Array<[string, Type]>, body: Term, args: () => unknown[]) {
  test(name, () => {
    const cp = compile(params, body)
    expect(printUnf(cp.stages.unf)).toMatch(prim)
    const [value, grad] = cp.gradient(...args())
    const env = new Map(params.map(([n], i) => [n, fromHost(args()[i])]))
    const ref = toHost(evaluate(cp.stages.inverse, env, cp.ops)) as [number, unknown[]]
    expect(value).toBeCloseTo(ref[0], 12)
    expect(maxScaledError(flat(grad), flat(ref[1]))).toBeLessThan(1e-12)
    const fd = finiteDifferences((...a) => cp.value(...a) as number, args())
    expect(maxScaledError(flat(grad), fd)).toBeLessThan(1e-6)
  })
}

const xy: Array<[string, Type]> = [
  ['x', R],
  ['y', R],
]
const xyArgs = () => [0.7, 1.9]

describe('rules on scalars', () => {
  rule('var: the cotangent of a variable is added to its slot', /var_/, xy, T.add(v('x'), v('x')), xyArgs)
  rule('constant: no cotangent', /^3_|;\n3_/, xy, T.mul(c(3), v('y')), xyArgs)
  for (const [op, f] of [
    ['+', () => T.add(v('x'), v('y'))],
    ['-', () => T.sub(v('x'), v('y'))],
    ['*', () => T.mul(v('x'), v('y'))],
    ['/', () => T.div(v('x'), v('y'))],
    ['neg', () => T.neg(v('x'))],
    ['exp', () => T.exp(v('x'))],
    ['log', () => T.log(v('y'))],
    ['sin', () => T.op('sin', v('x'))],
    ['cos', () => T.op('cos', v('x'))],
    ['sqrt', () => T.op('sqrt', v('y'))],
    ['tanh', () => T.op('tanh', v('x'))],
    ['square', () => T.op('square', v('x'))],
  ] as const) {
    rule(
      `op ${op}: Jᵀop adds ∂ᵢop · z to each argument`,
      new RegExp(`${op.replace(/[+*]/, '\\$&')}_\\{`),
      xy,
      T.mul(f(), v('x')),
      xyArgs,
    )
  }
  rule(
    'pair and π: tuples are built and taken apart',
    /pair_.*;\n.*π2_/s,
    xy,
    T.let_('p', T.tuple(v('x'), T.mul(v('x'), v('y'))), T.mul(T.proj(0, v('p')), T.proj(1, v('p')))),
    xyArgs,
  )
  rule(
    'proj: let hides its variable (zero cotangent for hidden slots)',
    /proj_/,
    xy,
    T.let_('w', T.mul(v('x'), v('y')), T.let_('u', T.exp(v('w')), T.mul(v('u'), v('w')))),
    xyArgs,
  )
  rule(
    'if (§7.2): the branch taken gives the cotangent',
    /if_/,
    xy,
    T.if_(T.lt(v('x'), v('y')), T.mul(v('x'), v('y')), T.exp(v('x'))),
    xyArgs,
  )
  rule(
    'if, other branch',
    /if_/,
    xy,
    T.if_(T.gt(v('x'), v('y')), T.mul(v('x'), v('y')), T.exp(T.mul(v('x'), v('y')))),
    xyArgs,
  )
})

const AB: Array<[string, Type]> = [
  ['A', R1],
  ['B', R1],
  ['s', R],
]
const abArgs = () => [A(), B(), 0.8]
describe('rules on arrays', () => {
  rule(
    'map with a free variable (context cotangent summed over elements)',
    /map_/,
    AB,
    T.sum(T.map(v('A'), (a) => T.op('sin', T.mul(a, v('s'))))),
    abArgs,
  )
  rule('map2', /map2_/, AB, T.sum(T.map2(v('A'), v('B'), (a, b) => T.mul(T.exp(a), b))), abArgs)
  rule(
    'n-ary map',
    /map3_/,
    AB,
    T.sum(T.mapN([v('A'), v('B'), v('A')], (a, b, a2) => T.mul(T.mul(a, b), T.op('tanh', a2)))),
    abArgs,
  )
  rule(
    'map returning arrays (nested), free array in the body',
    /map_/,
    AB,
    T.sum(
      T.map(
        T.map(v('A'), (a) => T.map(v('B'), (b) => T.mul(a, b))),
        (row) => T.dot(row, v('B')),
      ),
    ),
    abArgs,
  )
  rule(
    "reduce (the paper's rule: scanl, scanr, shifts)",
    /reduce_/,
    AB,
    T.prod(T.map(v('A'), (a) => T.add(a, v('s')))),
    abArgs,
  )
  rule(
    'fold with free variables (§7.1)',
    /fold_/,
    AB,
    T.fold(v('s'), v('A'), (acc, a) => T.add(T.mul(acc, v('s')), T.op('sin', T.mul(a, acc)))),
    abArgs,
  )
  rule(
    'fold with a tuple accumulator',
    /fold_/,
    AB,
    T.proj(
      1,
      T.fold(T.tuple(c(1), c(0)), v('A'), (acc, a) =>
        T.tuple(T.mul(T.proj(0, acc), a), T.add(T.proj(1, acc), T.mul(T.proj(0, acc), v('s')))),
      ),
    ),
    abArgs,
  )
  rule(
    'scanl',
    /scanl_/,
    AB,
    T.dot(
      T.scanl(v('s'), v('A'), (acc, a) => T.mul(T.add(acc, a), c(0.9))),
      T.map(
        T.scanl(c(0), v('B'), (acc, b) => T.add(acc, b)),
        (q) => T.op('cos', q),
      ),
    ),
    abArgs,
  )
  rule(
    'scanr',
    /scanr_/,
    AB,
    T.sum(
      T.map(
        T.scanr(v('s'), v('A'), (acc, a) => T.op('tanh', T.add(T.mul(acc, a), c(0.1)))),
        (q) => T.mul(q, q),
      ),
    ),
    abArgs,
  )
  rule('shift1L', /shift1L_/, AB, T.dot(T.shift1L(v('A')), T.shift1R(v('B'))), abArgs)
  rule('shift1R', /shift1R_/, AB, T.sum(T.map(T.shift1R(v('A')), (a) => T.exp(a))), abArgs)
  rule(
    'prefix: the cotangent padded with zeros (padTo), none for the length-giving array',
    /prefix_/,
    AB,
    T.sum(T.map2(T.prefix(v('A'), T.shift1L(v('B'))), T.shift1L(v('B')), (a, b) => T.op('sin', T.mul(a, b)))),
    abArgs,
  )
  rule(
    'conditionals inside a map (ReLU-like)',
    /map2_/,
    AB,
    T.sum(T.map2(v('A'), v('B'), (a, b) => T.if_(T.gt(a, c(0)), T.mul(a, b), T.mul(c(0.01), a)))),
    abArgs,
  )
  rule(
    'tuples of arrays',
    /pair_/,
    AB,
    T.let_(
      'p',
      T.tuple(
        v('A'),
        T.map(v('B'), (b) => T.mul(b, v('s'))),
      ),
      T.dot(T.proj(0, v('p')), T.proj(1, v('p'))),
    ),
    abArgs,
  )
})

test('the type checker rejects ill-typed programs with coded errors', () => {
  expect(() => compile([['A', R1]], T.add(v('A'), c(1)))).toThrow(/argument 1 of `\+` must be R/)
  expect(() =>
    compile(
      [['A', R1]],
      T.reduce(v('s'), v('A'), (a, x) => T.add(a, x)),
    ),
  ).toThrow(/unknown variable `s`/)
  expect(() =>
    compile(
      [
        ['A', R1],
        ['s', R],
      ],
      T.reduce(c(0), v('A'), (a, x) => T.add(T.mul(a, v('s')), x)),
    ),
  ).toThrow(/must be closed .* use fold/)
  expect(() => compile([['x', R]], T.op('nope', v('x')))).toThrow(/unknown operation `nope`/)
  expect(() => compile([['x', R]], T.tuple(v('x'), v('x')))).toThrow(/real-valued/)
  expect(() => compile([['A', R1]], T.sum(v('A'))).gradient([1, 2])).toThrow(/Float64Array/)
  void tupleType
})

test('run-time shape errors are UnfErrors with a code', () => {
  const cp = compile(
    [
      ['A', R1],
      ['B', R1],
    ],
    T.dot(v('A'), v('B')),
  )
  expect(() => cp.gradient(Float64Array.of(1, 2), Float64Array.of(1))).toThrow(
    expect.objectContaining({ code: 'unf/shape' }),
  )
})
