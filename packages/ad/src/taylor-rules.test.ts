/**
 * Taylor rules come from the primitives' specs: every standard pure primitive (read from the
 * registry, so a new one is covered by this test) and every standard bijection with a rule,
 * against independent references — nested forward mode (orders 1–3, from the tangent rules) and
 * central differences of the primitive's JS `evaluate` (orders 1–3) — plus user primitives
 * registered with a `taylor` rule, with partials only (the derived rule), and without either.
 */
import { describe, expect, it } from 'vitest'
import { bijection, createRegistry, parse, standardPrimitives, TenetStaticError, unary, type Registry } from '@tenet/ir'
import { compileModule, interpreterBackend } from '@tenet/reversible'
import { cpuBackend } from '@tenet/backend-cpu'
import { compileTaylor, nestedTangentDerivative, taylor } from './taylor-mode.js'

const registry = () => createRegistry().registerBackend(cpuBackend).registerBackend(interpreterBackend)
const compileWith = (text: string, reg: Registry, backend = 'cpu') =>
  compileModule(parse({ text, name: 'test' }), { registry: reg, backend, checks: true })

const factorial = (n: number): number => (n <= 1 ? 1 : n * factorial(n - 1))

/** The k-th derivative of g at 0 by central differences (k ≤ 3). */
function centralDerivative(g: (t: number) => number, k: number, h: number): number {
  if (k === 1) return (g(h) - g(-h)) / (2 * h)
  if (k === 2) return (g(h) - 2 * g(0) + g(-h)) / (h * h)
  return (g(2 * h) - 2 * g(h) + 2 * g(-h) - g(-2 * h)) / (2 * h ** 3)
}

const relErr = (a: number, b: number) => Math.abs(a - b) / Math.max(1, Math.abs(b))

describe('every standard primitive’s Taylor coefficients, from its own rule', () => {
  const pures = standardPrimitives.filter((p) => p.kind === 'pure' && !p.argKinds?.some((k) => k === 'array')) as Array<
    Extract<(typeof standardPrimitives)[number], { kind: 'pure' }>
  >
  const point = [0.4, 0.7],
    direction = [1, -0.6]

  it('covers the registry (each pure primitive has a rule or expression partials)', () => {
    expect(pures.length).toBeGreaterThanOrEqual(20)
    for (const p of pures) expect(p.taylor !== undefined || p.partialExprs !== undefined, p.name).toBe(true)
  })

  for (const p of pures) {
    it(`${p.name}: order 5 against nested forward mode (1–3) and differences of evaluate (1–3)`, () => {
      const params = Array.from({ length: p.arity }, (_, i) => `x${i}`)
      const m = compileWith(
        `fn f(y: f64, ${params.map((x) => `${x}: f64`).join(', ')}) { y += ${p.name}(${params.join(', ')}) }`,
        registry(),
      )
      const args = [0.25, ...point.slice(0, p.arity)]
      const dir = [0, ...direction.slice(0, p.arity)]
      const r = taylor(m.f!, args, { direction: dir, order: 5 })
      const g = (t: number) => p.evaluate(...point.slice(0, p.arity).map((x, i) => x + t * direction[i]!))
      expect(relErr(r.coefficients[0]![0] as number, 0.25 + g(0)), 'value').toBeLessThan(1e-15)
      for (let k = 1; k <= 3; k++) {
        const dk = r.derivatives[k]![0] as number
        const nested = nestedTangentDerivative(m.f!, args, { direction: dir, order: k })[0] as number
        expect(relErr(dk, nested), `d^${k} against nested forward mode`).toBeLessThan(1e-11)
        expect(
          relErr(dk, centralDerivative(g, k, k === 1 ? 1e-6 : k === 2 ? 1e-4 : 1e-3)),
          `d^${k} differences`,
        ).toBeLessThan(2e-5)
        expect(r.coefficients[k]![0]).toBeCloseTo(dk / factorial(k), 14)
      }
      // orders 4 and 5 are formed too (finite at this point)
      for (const k of [4, 5]) expect(Number.isFinite(r.coefficients[k]![0] as number), `coefficient ${k}`).toBe(true)
    })
  }

  it('the bijections with a rule: INC/DEC, AddConst/SubConst, ROT/IROT (fixed and varying angle), INV, sincos, orders 1–3', () => {
    const bodies = [
      'INC(y)\n  AddConst(y, x * u)\n  SubConst(x, sin(u))\n  DEC(u)',
      'ROT(y, x, 0.3)\n  IROT(x, u, y * y)\n  ~IROT(y, u, x)',
      'INV(x)\n  sincos(y, u, x * x)\n  ~sincos(u, x, y)',
    ]
    for (const body of bodies) {
      const m = compileWith(`fn f(y: f64, x: f64, u: f64) {\n  ${body}\n}`, registry())
      const args = [0.1, 0.6, 0.35],
        dir = [0.2, 1, -0.7]
      const r = taylor(m.f!, args, { direction: dir, order: 3 })
      for (let k = 1; k <= 3; k++) {
        const nested = nestedTangentDerivative(m.f!, args, { direction: dir, order: k })
        for (let i = 0; i < 3; i++)
          expect(relErr(r.derivatives[k]![i] as number, nested[i] as number), `${body}: d^${k} of ${i}`).toBeLessThan(
            1e-10,
          )
      }
    }
  })
})

describe('user primitives in Taylor mode', () => {
  it('a primitive with a `taylor` rule, one with partials as text only (the derived rule), and sin as a user `ode` agree with closed forms at order 8', () => {
    const reg = registry()
      .registerPrimitive(
        unary({
          name: 'expm1x',
          evaluate: (x) => Math.expm1(2 * x),
          // y = e^{2x} − 1: y′ = 2(y + 1)·x′
          taylor: { ode: ['2.0 * (y + 1.0)'] },
        }),
      )
      .registerPrimitive(unary({ name: 'cube', evaluate: (x) => x ** 3, partials: ['3.0 * x * x'] }))
      .registerPrimitive(
        unary({ name: 'mysin', evaluate: Math.sin, partials: ['cos(x)'], taylor: { ode: ['cos(x)'] } }),
      )
    const m = compileWith('fn f(a: f64, b: f64, c: f64, x: f64) { a += expm1x(x); b += cube(x); c += mysin(x) }', reg)
    const x = 0.3,
      v = 0.8
    const r = taylor(m.f!, [0, 0, 0, x], { direction: [0, 0, 0, v], order: 8 })
    for (let j = 1; j <= 8; j++) {
      const e = (Math.exp(2 * x) * (2 * v) ** j) / factorial(j)
      const cube = j === 1 ? 3 * x * x * v : j === 2 ? 3 * x * v * v : j === 3 ? v ** 3 : 0
      const s = (Math.sin(x + (j * Math.PI) / 2) * v ** j) / factorial(j)
      expect(relErr(r.coefficients[j]![0] as number, e), `expm1x ${j}`).toBeLessThan(1e-13)
      expect(Math.abs((r.coefficients[j]![1] as number) - cube), `cube ${j}`).toBeLessThan(1e-15)
      expect(Math.abs((r.coefficients[j]![2] as number) - s), `mysin ${j}`).toBeLessThan(1e-15)
    }
  })

  it('a user bijection with a `taylor.map` (a shear by a varying amount), against differences of the closed form; its Taylor function inverts', () => {
    const reg = registry()
      .registerPrimitive(
        bijection({
          name: 'SHEAR',
          params: ['a', 'b', 's'],
          roles: ['inout', 'inout', 'in'],
          apply: (a, b, s) => [a + s * b * b, b * Math.exp(s)],
          inverse: 'UNSHEAR',
          taylor: { map: ['a + s * b * b', 'b * exp(s)'] },
        }),
      )
      .registerPrimitive(
        bijection({
          name: 'UNSHEAR',
          params: ['a', 'b', 's'],
          roles: ['inout', 'inout', 'in'],
          apply: (a, b, s) => [a - s * b * b * Math.exp(-2 * s), b * Math.exp(-s)],
          inverse: 'SHEAR',
          taylor: { map: ['a - s * (b * exp(-s)) * (b * exp(-s))', 'b * exp(-s)'] },
        }),
      )
    const m = compileWith('fn f(a: f64, b: f64, s: f64) { SHEAR(a, b, s * s) }', reg)
    const a = 0.3,
      b = 0.7,
      s = 0.4,
      va = 0.5,
      vb = -1,
      vs = 0.9
    const r = taylor(m.f!, [a, b, s], { direction: [va, vb, vs], order: 3 })
    // closed form along the line: a(t) + s(t)²·b(t)², b(t)·e^{s(t)²}
    const A = (t: number) => a + va * t + (s + vs * t) ** 2 * (b + vb * t) ** 2
    const B = (t: number) => (b + vb * t) * Math.exp((s + vs * t) ** 2)
    for (let k = 1; k <= 3; k++) {
      const h = k === 1 ? 1e-6 : k === 2 ? 1e-4 : 1e-3
      expect(relErr(r.derivatives[k]![0] as number, centralDerivative(A, k, h)), `a d^${k}`).toBeLessThan(2e-5)
      expect(relErr(r.derivatives[k]![1] as number, centralDerivative(B, k, h)), `b d^${k}`).toBeLessThan(2e-5)
    }
    // the Taylor function is reversible: its inverse frees the old coefficients with UNSHEAR's rule
    const ct = compileTaylor(m.f!, 3)
    const argv = [a, b, s, va, 0, 0, vb, 0, 0, vs, 0, 0]
    const back = ct.taylor.inverse(...ct.taylor(...argv))
    back.forEach((v, i) => expect(Math.abs((v as number) - argv[i]!), `argument ${i}`).toBeLessThan(1e-13))
  })

  it('errors name the primitive: no rule and no expression partials; a bijection without a map', () => {
    const reg = registry()
      .registerPrimitive({
        specificationVersion: 'v1',
        name: 'cube',
        kind: 'pure',
        arity: 1,
        evaluate: (x) => x ** 3,
        partials: (x) => [3 * x * x],
      })
      .registerPrimitive(
        bijection({
          name: 'TWIST',
          params: ['a', 'b'],
          roles: ['inout', 'inout'],
          apply: (a, b) => [a + b * b, b],
          inverse: 'self',
        }),
      )
    const thrown = (text: string) => {
      try {
        compileTaylor(compileWith(text, reg).f!, 2)
      } catch (e) {
        return e as TenetStaticError
      }
      throw new Error('no error')
    }
    const e1 = thrown('fn f(y: f64, x: f64) { y += cube(x) }')
    expect(TenetStaticError.isInstance(e1)).toBe(true)
    expect(e1.code).toBe('ad/taylor-rule')
    expect(e1.message).toMatch(/^primitive `cube` has no Taylor rule; write its partials as Tenet expression text/)
    reg.registerPrimitive(unary({ name: 'loop', evaluate: (x) => x, taylor: { expression: 'loop(x) * 1.0' } }))
    expect(thrown('fn f(y: f64, x: f64) { y += loop(x) }').message).toMatch(
      /the Taylor expression of primitive `loop` calls `loop` again/,
    )
    const e2 = thrown('fn f(y: f64, x: f64) { TWIST(y, x) }')
    expect(e2.code).toBe('ad/taylor-rule')
    expect(e2.message).toMatch(/^bijection `TWIST` has no Taylor rule; give it `taylor: \{ map: \[…\] \}`/)
  })
})
