import { describe, expect, it } from 'vitest'
import { createRegistry, gradient, rev, RegistryError } from './index.js'

/** Bessel functions of the first kind by their power series (accurate for |x| < 10). */
function besselJ(n: 0 | 1, x: number): number {
  let term = n === 0 ? 1 : x / 2,
    sum = term
  for (let k = 1; k < 60; k++) {
    term *= -(x * x) / 4 / (k * (k + n))
    sum += term
  }
  return sum
}

describe('registries: the simplest user form', () => {
  it('registers cube into createRegistry() and uses it through rev.with({ registry })', () => {
    const registry = createRegistry() // from 'tenet': starts with the standard library
    registry.registerPrimitive({
      specificationVersion: 'v1',
      name: 'cube',
      kind: 'pure',
      arity: 1,
      evaluate: (x) => x ** 3,
      partials: (x) => [3 * x ** 2],
    })
    const m = rev.with({ registry })`fn f(y: f64, x: f64) { y += cube(x) }`
    expect(m.f!(0, 2)).toEqual([8, 2])
    expect(m.f!.inverse(8, 2)).toEqual([0, 2])
    expect(gradient(m.f!, [0, 2], { loss: 0 })[1]).toBe(12)
    // the default registry is untouched
    expect(() => rev`fn f(y: f64, x: f64) { y += cube(x) }`).toThrow(/unknown function `cube`/)
    // duplicates are rejected unless override: true
    expect(() =>
      registry.registerPrimitive({
        specificationVersion: 'v1',
        name: 'cube',
        kind: 'pure',
        arity: 1,
        evaluate: (x) => x,
      }),
    ).toThrow(RegistryError)
  })

  it('createRegistry() includes the number systems of @tenet/numbers', () => {
    expect(createRegistry().names('number')).toEqual(
      expect.arrayContaining(['f64', 'f32', 'i32', 'bool', 'complex', 'fixed', 'ulog', 'tropical']),
    )
  })

  for (const backend of ['cpu', 'interpreter'] as const) {
    it(`${backend}: a user primitive besselj0 with partials (−J₁), forwards, backwards and its gradient`, () => {
      const registry = createRegistry()
      registry.registerPrimitive({
        specificationVersion: 'v1',
        name: 'besselj0',
        kind: 'pure',
        arity: 1,
        description: 'Bessel function of the first kind, order 0',
        evaluate: (x) => besselJ(0, x),
        partials: (x) => [-besselJ(1, x)],
      })
      const m = rev.with({ registry, backend })`
        fn f(y: f64, x: f64) {
          routine { t <- 0.0; t += besselj0(x) }
          y += t * t
          ~routine
        }`
      for (const x of [0.5, 1.7, 2.404825557695773, 4.2]) {
        const [y] = m.f!(0.25, x) as number[]
        expect(y).toBeCloseTo(0.25 + besselJ(0, x) ** 2, 14)
        expect(m.f!.inverse(y, x)[0]).toBeCloseTo(0.25, 15)
        expect(gradient(m.f!, [0, x], { loss: 0 })[1]).toBeCloseTo(-2 * besselJ(0, x) * besselJ(1, x), 12)
      }
    })

    it(`${backend}: sincos(s, c, x) and its inverse; gradient through it`, () => {
      const m = rev.with({ backend })`fn f(s: f64, c: f64, x: f64) { sincos(s, c, x) }
        fn g(y: f64, x: f64) {
          routine { s <- 0.0; c <- 0.0; sincos(s, c, x) }
          y += s * c
          ~routine
        }`
      const [s, c] = m.f!(1, 2, 0.3) as number[]
      expect(s).toBe(1 + Math.sin(0.3))
      expect(c).toBe(2 + Math.cos(0.3))
      expect(m.f!.inverse(s, c, 0.3)).toEqual([
        1 + Math.sin(0.3) - Math.sin(0.3),
        2 + Math.cos(0.3) - Math.cos(0.3),
        0.3,
      ])
      expect(gradient(m.g!, [0, 0.3], { loss: 0 })[1]).toBeCloseTo(Math.cos(0.6), 14)
    })

    it(`${backend}: AD of complex code is AD of its f64 lowering (gradient per part)`, () => {
      const m = rev.with({ backend })`fn clog(y: complex, x: complex) {
        routine { n <- 0.0; n += abs(x) }
        y.re += log(n)
        y.im += angle(x)
        ~routine
      }`
      // lowered parameters: y$re, y$im, x$re, x$im; the loss is y.re = log|x|
      const g = gradient(m.clog!, [0, 0, 3, 4], { loss: 0 })
      expect(g[2]).toBeCloseTo(3 / 25, 14)
      expect(g[3]).toBeCloseTo(4 / 25, 14)
    })
  }
})
