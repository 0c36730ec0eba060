import { describe, expect, it } from 'vitest'
import type { Expr } from './ast.js'
import { printExpr } from './printer.js'
import { binary, bijection, pure, selfInverse, unary } from './primitive.js'
import { standardPrimitives } from './stdlib/index.js'
import type { PartialFunction, PurePrimitiveSpec } from './plugin.js'

const v = (name: string): Expr => ({ kind: 'var', name })

describe('primitive builders', () => {
  it('partials as text become expressions over the arguments and numeric partials', () => {
    const p = binary({
      name: 'hyp',
      params: ['a', 'b'],
      evaluate: Math.hypot,
      partials: ['a / sqrt(a * a + b * b)', 'b / sqrt(a * a + b * b)'],
    })
    expect(p.arity).toBe(2)
    const [da, db] = p.partialExprs!([
      v('u'),
      { kind: 'binary', op: '*', left: v('w'), right: { kind: 'num', value: 2, isFloat: true } },
    ]) as Expr[]
    expect(printExpr(da!)).toBe('u / sqrt(u * u + w * 2.0 * (w * 2.0))')
    expect(printExpr(db!)).toBe('w * 2.0 / sqrt(u * u + w * 2.0 * (w * 2.0))')
    expect(p.partials!(3, 4)).toEqual([0.6, 0.8])
  })

  it('each instantiation is a fresh tree (the checker annotates nodes in place)', () => {
    const p = unary({ name: 'sq', evaluate: (x) => x * x, partials: ['2.0 * x'] })
    const arg = v('y')
    const e1 = p.partialExprs!([arg])[0] as Expr,
      e2 = p.partialExprs!([arg])[0] as Expr
    expect(e1).not.toBe(e2)
    expect((e1 as { right: Expr }).right).not.toBe(arg)
  })

  it('a piecewise partial is a function with its own partials', () => {
    const p = unary({
      name: 'relu',
      evaluate: (x) => Math.max(x, 0),
      partials: [{ piecewise: (x) => (x > 0 ? 1 : 0), partials: ['0.0'] }],
    })
    const f = p.partialExprs!([v('x')])[0] as PartialFunction
    expect(f.evaluate(2)).toBe(1)
    expect(printExpr(f.partialExprs!([v('z')])[0]!)).toBe('0.0')
    expect(p.partials!(-1)).toEqual([0])
  })

  it('a JS function as partials gives numbers only (no partialExprs)', () => {
    const p = unary({ name: 'cube', evaluate: (x) => x ** 3, partials: (x) => [3 * x * x] })
    expect(p.partialExprs).toBeUndefined()
    expect(p.partials!(2)).toEqual([12])
  })

  it('partials calling a function numbers do not know: expressions only', () => {
    const p = unary({ name: 'g', evaluate: (x) => x, partials: ['mine(x)'] })
    expect(p.partialExprs).toBeDefined()
    expect(p.partials).toBeUndefined()
  })

  it('errors name the primitive', () => {
    expect(() => unary({ name: 'bad', evaluate: (x) => x, partials: ['3.0 * * x'] })).toThrow(
      /partial 1 of primitive `bad`/,
    )
    expect(() => unary({ name: 'bad', evaluate: (x) => x, partials: ['3.0 * z'] })).toThrow(
      /partial 1 of primitive `bad` \("3.0 \* z"\) reads `z`, which is not one of its parameters \(x\)/,
    )
    expect(() => pure({ name: 'bad', params: ['x', 'y'], evaluate: (x) => x, partials: ['1.0'] })).toThrow(
      /`bad` has 2 parameters but 1 partial/,
    )
    expect(() =>
      bijection({ name: 'B', params: ['a'], roles: ['inout'], apply: (a) => [a], inverse: 'self', tangent: 't_a +=' }),
    ).toThrow(/tangent rule of primitive `B`/)
    expect(() =>
      selfInverse({ name: 'B', params: ['a', 't'], roles: ['inout', 'in'], apply: (a) => [a], selfAdjoint: true }),
    ).toThrow(/every argument must be `inout`/)
    try {
      unary({ name: 'bad', evaluate: (x) => x, partials: ['('] })
    } catch (e) {
      expect(e).toMatchObject({ code: 'registry/spec' })
    }
  })

  it('Taylor rules as text: ode over the parameters and the result, an expression, a bijection map', () => {
    const e = unary({ name: 'e2', evaluate: (x) => Math.exp(2 * x), taylor: { ode: ['2.0 * y'] } })
    expect(e.taylor?.kind).toBe('ode')
    if (e.taylor?.kind !== 'ode') throw new Error('unreachable')
    expect(e.taylor.derivatives([v('a')], v('r')).map(printExpr)).toEqual(['2.0 * r'])
    const a2 = binary({
      name: 'ang',
      params: ['y', 'x'],
      evaluate: Math.atan2,
      taylor: { ode: ['x / (x * x + y * y)', '-(y / (x * x + y * y))'], result: 'z' },
    })
    if (a2.taylor?.kind !== 'ode') throw new Error('no ode rule')
    expect(a2.taylor.derivatives([v('p'), v('q')], v('r')).map(printExpr)).toEqual([
      'q / (q * q + p * p)',
      '-(p / (q * q + p * p))',
    ])
    const pw = binary({ name: 'pw', params: ['x', 'p'], evaluate: Math.pow, taylor: { expression: 'x ** p' } })
    if (pw.taylor?.kind !== 'expression') throw new Error('no expression rule')
    expect(printExpr(pw.taylor.expression([v('a'), v('b')]))).toBe('a ** b')
    const sh = bijection({
      name: 'SH',
      params: ['a', 'c'],
      roles: ['inout', 'in'],
      apply: (a, c) => [a + c],
      inverse: 'self',
      taylor: { map: ['a + c * c'], linear: true },
    })
    expect(sh.taylor?.linear).toBe(true)
    expect(sh.taylor?.map([v('u'), v('w')]).map(printExpr)).toEqual(['u + w * w'])
  })

  it('Taylor rule errors name the primitive', () => {
    const f = (x: number) => x
    expect(() => unary({ name: 'q', evaluate: f, taylor: { ode: ['z'] } })).toThrow(
      /Taylor rule 1 of primitive `q` \("z"\) reads `z`, which is not one of its parameters \(x, y\)/,
    )
    expect(() => binary({ name: 'q2', params: ['y', 'x'], evaluate: f, taylor: { ode: ['1.0', '1.0'] } })).toThrow(
      /primitive `q2` names its result `y`, which is a parameter/,
    )
    expect(() => unary({ name: 'q3', evaluate: f, taylor: { ode: ['y', 'y'] } })).toThrow(
      /needs one `ode` entry per parameter \(1\), got 2/,
    )
    expect(() => unary({ name: 'q4', evaluate: f, taylor: { expression: 'x +' } })).toThrow(
      /in the Taylor expression of primitive `q4`/,
    )
    expect(() =>
      bijection({
        name: 'B',
        params: ['a', 'b'],
        roles: ['inout', 'inout'],
        apply: (a, b) => [b, a],
        inverse: 'self',
        taylor: { map: ['b'] },
      }),
    ).toThrow(/bijection `B` needs one `map` entry per inout parameter \(2\), got 1/)
  })

  it('the standard pure primitives: numeric partials agree with the expressions evaluated by hand', () => {
    // spot checks at a point (the AD test suites check every primitive against finite differences)
    const find = (n: string) => standardPrimitives.find((p) => p.name === n) as PurePrimitiveSpec
    expect(find('sin').partials!(0.3)).toEqual([Math.cos(0.3)])
    expect(find('tan').partials!(0.3)).toEqual([1 + Math.tan(0.3) * Math.tan(0.3)])
    expect(find('atan2').partials!(1, 2)).toEqual([2 / 5, -1 / 5])
    expect(find('pow').partials!(2, 3)).toEqual([12, 8 * Math.log(2)])
    expect(find('abs').partials!(-2)).toEqual([-1])
    expect(find('min').partials!(1, 2)).toEqual([1, 0])
  })
})
