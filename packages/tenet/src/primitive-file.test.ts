/**
 * One primitive, one file: user primitives written with the same builders as the standard
 * library (`test-primitives/cube.ts`, `test-primitives/REFLECT.ts`) get value, inverse, gradient,
 * forward mode, Hessian and Taylor coefficients on the interpreter, the cpu backend and the wasm
 * backend: the list of files a new primitive touches is its own file. Every
 * derivative is checked against finite differences of a plain-JS formula (or a closed form).
 */
import { describe, expect, it } from 'vitest'
import { wasmBackend } from '@tenet/backend-wasm'
import {
  createRegistry,
  gradient,
  hessian,
  hvp,
  jvp,
  rev,
  taylor,
  unary,
  type PurePrimitiveSpec,
  type TenetModule,
} from './index.js'
import { compile } from './test-util.js'
import { cube } from './test-primitives/cube.js'
import { REFLECT } from './test-primitives/REFLECT.js'

const BACKENDS = ['interpreter', 'cpu', 'wasm'] as const

/** The loss of `reflectSource` in plain JS. */
function reflectLoss(x: number, t: number): number {
  const a0 = x ** 3,
    b0 = x * t,
    c = Math.cos(2 * t),
    s = Math.sin(2 * t)
  const a = c * a0 + s * b0,
    b = s * a0 - c * b0
  return a * b + b ** 3
}
const reflectSource = `
  fn f(loss: f64, x: f64, t: f64) {
    a <- cube(x)
    b <- x * t
    REFLECT(a, b, t)
    loss += a * b + cube(b)
    REFLECT(a, b, t)
    b -> x * t
    a -> cube(x)
  }`

/** Central differences of `f` at `p`: the gradient, and the Hessian from second differences. */
function differences(f: (p: number[]) => number, p: number[]): { g: number[]; H: number[][] } {
  const at = (d: number[]) => f(p.map((v, i) => v + d[i]!))
  const e = (i: number, h: number) => p.map((_, k) => (k === i ? h : 0))
  const sum = (a: number[], b: number[]) => a.map((v, i) => v + b[i]!)
  const h1 = 1e-6,
    h2 = 1e-4
  const g = p.map((_, i) => (at(e(i, h1)) - at(e(i, -h1))) / (2 * h1))
  const H = p.map((_, i) =>
    p.map(
      (_, j) =>
        (at(sum(e(i, h2), e(j, h2))) -
          at(sum(e(i, h2), e(j, -h2))) -
          at(sum(e(i, -h2), e(j, h2))) +
          at(sum(e(i, -h2), e(j, -h2)))) /
        (4 * h2 * h2),
    ),
  )
  return { g, H }
}

const close = (actual: number, expected: number, rel: number) =>
  expect(Math.abs(actual - expected)).toBeLessThanOrEqual(rel * Math.max(1, Math.abs(expected)))

describe.each(BACKENDS)('a user primitive and a user bijection, each in one file (%s)', (backend) => {
  const registry = createRegistry().registerBackend(wasmBackend).registerPrimitive(cube).registerPrimitive(REFLECT)
  const m: TenetModule = compile(reflectSource, rev.with({ registry, backend }))
  const x = 0.7,
    t = 0.3
  const ref = differences(([x, t]) => reflectLoss(x!, t!), [x, t])

  it('value and inverse', () => {
    const out = m.f!(0, x, t) as number[]
    close(out[0]!, reflectLoss(x, t), 1e-14)
    const back = m.f!.inverse(...out) as number[]
    expect(back[0]).toBeCloseTo(0, 14)
    expect(back.slice(1)).toEqual([x, t])
  })

  it('gradient (reverse mode) and jvp (forward mode) against finite differences', () => {
    const g = gradient(m.f!, [0, x, t], { loss: 0 }) as number[]
    close(g[1]!, ref.g[0]!, 1e-7)
    close(g[2]!, ref.g[1]!, 1e-7)
    const v = [0, 1, 0.5]
    const tan = jvp(m.f!, [0, x, t], { v }).tangent as number[]
    close(tan[0]!, ref.g[0]! + 0.5 * ref.g[1]!, 1e-7)
  })

  it('Hessian (forward over reverse, and reverse over forward) and hvp against second differences', () => {
    for (const method of ['forward-over-reverse', 'reverse-over-forward'] as const) {
      const H = hessian(m.f!, [0, x, t], { loss: 0, method })
      for (let i = 0; i < 2; i++) for (let j = 0; j < 2; j++) close(H[2 * i + j]!, ref.H[i]![j]!, 1e-5)
    }
    const hv = hvp(m.f!, [0, x, t], { loss: 0, v: [0, 1, -2] }) as number[]
    close(hv[1]!, ref.H[0]![0]! - 2 * ref.H[0]![1]!, 1e-5)
    close(hv[2]!, ref.H[1]![0]! - 2 * ref.H[1]![1]!, 1e-5)
  })

  it('Taylor coefficients (orders 1–3) along a line, against differences of the plain-JS loss', () => {
    // (x, t)(s) = (x + s, t − 0.4 s): the loss's derivatives in s by central differences
    const g = (s: number) => reflectLoss(x + s, t - 0.4 * s)
    const d = [
      0,
      (g(1e-6) - g(-1e-6)) / 2e-6,
      (g(1e-4) - 2 * g(0) + g(-1e-4)) / 1e-8,
      (g(2e-3) - 2 * g(1e-3) + 2 * g(-1e-3) - g(-2e-3)) / (2 * 1e-9),
    ]
    const r = taylor(m.f!, [0, x, t], { direction: [0, 1, -0.4], order: 3 })
    close(r.coefficients[0]![0] as number, reflectLoss(x, t), 1e-14)
    for (let k = 1; k <= 3; k++) close(r.derivatives[k]![0] as number, d[k]!, 1e-5)
  })
})

describe.each(BACKENDS)('hessian and jvp through sincos (%s)', (backend) => {
  const registry = createRegistry().registerBackend(wasmBackend)
  const m = compile(
    `
    fn g(loss: f64, x: f64) {
      u <- x * x
      s <- 0.0
      c <- 0.0
      sincos(s, c, u)
      loss += s * c + s
      sincos_inverse(s, c, u)
      c -> 0.0
      s -> 0.0
      u -> x * x
    }`,
    rev.with({ registry, backend }),
  )
  // L = sin u cos u + sin u, u = x²
  const x = 0.9,
    u = x * x
  const dL = 2 * x * (Math.cos(2 * u) + Math.cos(u))
  const d2L = 2 * (Math.cos(2 * u) + Math.cos(u)) - 4 * u * (2 * Math.sin(2 * u) + Math.sin(u))

  it('matches the closed form', () => {
    close((jvp(m.g!, [0, x], { v: [0, 1] }).tangent as number[])[0]!, dL, 1e-13)
    close(hessian(m.g!, [0, x], { loss: 0 })[0]!, d2L, 1e-12)
    close(hessian(m.g!, [0, x], { loss: 0, method: 'reverse-over-forward' })[0]!, d2L, 1e-12)
  })
})

describe.each(BACKENDS)('user primitives registered as the README shows (%s)', (backend) => {
  it('partials as expression text: gradient, jvp and Hessian', () => {
    // the README's `unary` example
    const registry = createRegistry().registerBackend(wasmBackend)
    registry.registerPrimitive(
      unary({
        name: 'cube',
        description: 'x³',
        evaluate: (x) => x ** 3, // the forward formula (interpreter, and cpu fallback)
        partials: ['3.0 * x * x'], // ∂f/∂x as Tenet text: gradients, forward mode, Hessians
        emit: { cpu: (x) => `(${x} * ${x} * ${x})` }, // optional: inline JS for the cpu backend
      }),
    )
    const m = compile('fn f(y: f64, x: f64) { y += cube(x) * x }', rev.with({ registry, backend }))
    // y = x⁴
    expect((gradient(m.f!, [0, 2], { loss: 0 }) as number[])[1]).toBe(32)
    expect((jvp(m.f!, [0, 2], { v: [0, 1] }).tangent as number[])[0]).toBe(32)
    expect(hessian(m.f!, [0, 2], { loss: 0 })[0]).toBe(48)
  })

  it('numeric partials only: a gradient, and a Hessian error that names the primitive', () => {
    const registry = createRegistry().registerBackend(wasmBackend)
    const numeric: PurePrimitiveSpec = {
      specificationVersion: 'v1',
      name: 'cube',
      kind: 'pure',
      arity: 1,
      evaluate: (x) => x ** 3,
      partials: (x) => [3 * x ** 2],
    }
    registry.registerPrimitive(numeric)
    const m = compile('fn f(y: f64, x: f64) { y += cube(x) }', rev.with({ registry, backend }))
    expect((gradient(m.f!, [0, 2], { loss: 0 }) as number[])[1]).toBe(12)
    expect((jvp(m.f!, [0, 2], { v: [0, 1] }).tangent as number[])[0]).toBe(12)
    for (const method of ['forward-over-reverse', 'reverse-over-forward'] as const) {
      let error: unknown
      try {
        hessian(m.f!, [0, 2], { loss: 0, method })
      } catch (e) {
        error = e
      }
      expect(error, method).toMatchObject({ code: 'ad/no-derivative' })
      expect((error as Error).message).toContain('`cube`')
      expect((error as Error).message).not.toContain('__tenet_d_')
    }
  })
})
