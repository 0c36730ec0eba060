import { describe, expect, it } from 'vitest'
import { grad as dualGrad, hostFunction, jacobian as dualJacobian, type Dual, type Real } from '@tenet/dual'
import { finiteDifference } from '@tenet/testing'
import { dualCall, grad, hessian, jacobian } from './index.js'
import { tag, testRegistry } from './test-util.js'

const rev = tag()

describe('a dual-API host function inside a Tenet program is differentiated through the dual engine', () => {
  const softplusProduct = hostFunction(
    (d, a: Real, b: Real) => d.log(d.offset(d.exp(d.mul(a, b)), 1)),
    'softplusProduct',
  )
  const m = rev`
    fn f(y: f64, a: f64, b: f64, x: f64[]) {
      for i in 0..len(x) { y += ${softplusProduct}(x[i], a) * b }
      y += ${softplusProduct}(a, b)
    }`
  const plain = ([a, b, ...x]: number[]) =>
    x.reduce((s, xi) => s + Math.log1p(Math.exp(xi * a!)) * b!, 0) + Math.log1p(Math.exp(a! * b!))
  it('scalar arguments, in a loop, beside Tenet arithmetic: against finite differences', () => {
    const x = Float64Array.of(0.3, -1.2, 0.8)
    const g = grad(m.f!, { loss: 0 })
    const [, ga, gb, gx] = g(0, 0.7, -0.4, x) as [number, number, number, Float64Array]
    const fd = finiteDifference(plain, [0.7, -0.4, ...x])
    expect(ga).toBeCloseTo(fd[0]!, 7)
    expect(gb).toBeCloseTo(fd[1]!, 7)
    Array.from(gx).forEach((v, i) => expect(v).toBeCloseTo(fd[2 + i]!, 7))
  })
  it('the forward call evaluates the dual function', () => {
    const [y] = m.f!(0, 0.7, -0.4, Float64Array.of(0.3)) as number[]
    expect(y).toBeCloseTo(plain([0.7, -0.4, 0.3]), 13)
  })
  it.each(['cpu', 'interpreter'])(
    'array arguments (mixed with scalars): through the dual engine, against finite differences (%s)',
    (backend) => {
      // h(x, a) = a · Σ tanh(xᵢ)²: an array and a scalar argument
      const h = hostFunction((d, x: Real[], a: Real) => d.mul(a, d.sum(x.map((v) => d.square(d.tanh(v))))), 'h')
      const m2 = tag({ backend })`
      fn f(y: f64, x: f64[], a: f64, b: f64) {
        y += ${h}(x, a) * b
        y -= b * ${h}(x, b)
      }`
      const fPlain = ([a, b, ...x]: number[]) => {
        const s = x.reduce((t, v) => t + Math.tanh(v) ** 2, 0)
        return a! * s * b! - b! * b! * s
      }
      const x = Float64Array.of(0.4, -0.7, 1.1)
      const [, gx, ga, gb] = grad(m2.f!, { loss: 0 })(0, x, 0.9, -0.6) as [number, Float64Array, number, number]
      const fd = finiteDifference(fPlain, [0.9, -0.6, ...x])
      expect(ga).toBeCloseTo(fd[0]!, 7)
      expect(gb).toBeCloseTo(fd[1]!, 7)
      Array.from(gx).forEach((v, i) => expect(v).toBeCloseTo(fd[2 + i]!, 7))
    },
  )
  it('second order through a host function with array arguments is a clear error, not a wrong Hessian', () => {
    const h = hostFunction((d, x: Real[]) => d.mul(x[0]!, d.square(x[1]!)), 'h2')
    const m2 = rev`fn f(y: f64, x: f64[]) { y += ${h}(x) }`
    const x = Float64Array.of(0.5, 2)
    const [, gx] = grad(m2.f!, { loss: 0 })(0, x) as [number, Float64Array]
    expect(Array.from(gx)).toEqual([4, 2])
    const caught = (() => {
      try {
        hessian(m2.f!, [0, x], { loss: 0 })
      } catch (e) {
        return e
      }
    })()
    expect((caught as { code?: string }).code).toBe('ad/host-array')
  })
  it('a plain JS host function reading an array: a static error now, never a silent zero gradient', () => {
    const h = (x: Float64Array) => x[0]! * x[1]!
    const plainHost = rev`fn f(y: f64, x: f64[]) { y += ${h}(x) }`
    expect(() => grad(plainHost.f!, { loss: 0 })(0, Float64Array.of(2, 3))).toThrow(/no derivative/)
  })
  it('a plain JS host function (no dual definition) is still a static error with a hint', () => {
    const m2 = rev`fn f(y: f64, a: f64) { y += ${(a: number) => a * a}(a) }`
    expect(() => grad(m2.f!, { loss: 0 })(0, 3)).toThrow(/hostFunction/)
  })
})

describe('a Tenet function as one primitive of the dual engine (its pullback is the Tenet adjoint)', () => {
  const m = rev`
    fn kernel(y: f64, x: f64[], a: f64) {
      for i in 0..len(x) { y += sin(x[i]) * a }
    }`
  const kernel = dualCall(m.kernel!, { wrt: [0, 1, 2], outputs: [0, 1] })
  // loss(x, a) = (y_out)² + Σ x_out (x is unchanged by the kernel) + a·y_out, with y_in = 0.5 + a
  const loss = (d: Dual, x: Real[], a: Real) => {
    const [y, xo] = kernel(d, d.offset(a, 0.5), x, a) as [Real, Real[]]
    return d.add(d.add(d.square(y), d.sum(xo)), d.mul(a, y))
  }
  const plain = ([a, ...x]: number[]) => {
    const y = 0.5 + a! + x.reduce((s, v) => s + Math.sin(v) * a!, 0)
    return y * y + x.reduce((s, v) => s + v, 0) + a! * y
  }
  it('gradient through the Tenet call against finite differences', () => {
    const x = Float64Array.of(0.2, -0.9, 1.3, 0.4)
    const [gx, ga] = dualGrad(loss)(x, 0.6) as [Float64Array, number]
    const fd = finiteDifference(plain, [0.6, ...x])
    expect(ga).toBeCloseTo(fd[0]!, 6)
    Array.from(gx).forEach((v, i) => expect(v).toBeCloseTo(fd[1 + i]!, 6))
  })
  it('errors: a plain number where a differentiated handle is expected', () => {
    expect(() =>
      dualGrad((d, x: Real[], a: Real) => kernel(d, 0 as Real, x, a)[0] as Real)(Float64Array.of(1), 1),
    ).toThrow(/d.constant/)
  })
})

describe('a primitive registered once differentiates in both engines', () => {
  const registry = testRegistry()
  registry.registerPrimitive({
    specificationVersion: 'v1',
    name: 'softclip',
    kind: 'pure',
    arity: 1,
    evaluate: (x) => Math.tanh(x) * 2,
    partials: (x) => [2 * (1 - Math.tanh(x) ** 2)],
  })
  const m = tag({ registry })`fn f(y: f64, x: f64) { y += softclip(x) * x }`
  it('the same gradient from the reversible adjoint and from the dual engine', () => {
    for (const x of [-1.3, 0.2, 0.9]) {
      const [, gTenet] = grad(m.f!, { loss: 0 })(0, x) as number[]
      const gDual = dualGrad((d, v: Real) => d.mul(d.apply('softclip', v), v), { registry })(x) as number
      expect(gDual).toBeCloseTo(gTenet!, 13)
      expect(gDual).toBeCloseTo(finiteDifference(([v]) => 2 * Math.tanh(v!) * v!, [x])[0]!, 7)
    }
  })
})

describe('Jacobians: the dual engine’s repeated sweeps against @tenet/ad on the same functions', () => {
  // each function written twice: Tenet (outputs are the written arguments) and dual API
  const cases: Array<{
    name: string
    m: ReturnType<typeof rev>
    fn: string
    args: () => unknown[]
    inputs: number[]
    outputs: number[]
    dual: (d: Dual, x: Real[]) => Real[]
    flatIn: (args: unknown[]) => number[]
  }> = [
    {
      name: 'polar to Cartesian with a loop of rotations',
      m: rev`fn f(u: f64, v: f64, r: f64, t: f64) {
        u += r * cos(t); v += r * sin(t)
        for k in 0..3 { u += 0.1 * v * f64(k) }
      }`,
      fn: 'f',
      args: () => [0, 0, 1.5, 0.7],
      inputs: [2, 3],
      outputs: [0, 1],
      dual: (d, [r, t]) => {
        let u = d.mul(r!, d.cos(t!))
        const v = d.mul(r!, d.sin(t!))
        for (let k = 0; k < 3; k++) u = d.add(u, d.scale(v, 0.1 * k))
        return [u, v]
      },
      flatIn: (a) => [a[2] as number, a[3] as number],
    },
    {
      name: 'an array map with a branch on the values',
      m: rev`fn f(y: f64[], x: f64[], a: f64) {
        for i in 0..len(x) {
          if (x[i] > 0.0, ~) { y[i] += exp(a * x[i]) } else { y[i] += x[i] * x[i] * a }
        }
      }`,
      fn: 'f',
      args: () => [new Float64Array(4), Float64Array.of(0.5, -0.3, 1.1, -2), 0.4],
      inputs: [1, 2],
      outputs: [0],
      dual: (d, v) => {
        const a = v[4]!
        return v.slice(0, 4).map((xi) => (d.value(xi) > 0 ? d.exp(d.mul(a, xi)) : d.mul(d.square(xi), a)))
      },
      flatIn: (a) => [...(a[1] as Float64Array), a[2] as number],
    },
  ]
  it.each(cases)('$name', (c) => {
    const J = jacobian(c.m[c.fn]!, c.args(), { inputs: c.inputs, outputs: c.outputs })
    const x = c.flatIn(c.args())
    const ours = dualJacobian(c.dual)(x).jacobian as number[][]
    const cols = x.length
    expect(J.length).toBe(ours.length * cols)
    ours.forEach((row, i) => row.forEach((v, j) => expect(v).toBeCloseTo(J[i * cols + j]!, 12)))
  })
})
