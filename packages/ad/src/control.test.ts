import { describe, expect, it } from 'vitest'
import { checkGrad, gradient, grad, jacobian } from './index.js'
import { tag } from './test-util.js'

const backends = ['cpu', 'interpreter'] as const

function expectGradOk(f: Parameters<typeof checkGrad>[0], args: unknown[], loss = 0, atol = 1e-6) {
  const r = checkGrad(f, args, { loss, atol, rtol: 1e-6 })
  expect(r.ok, JSON.stringify(r.worst)).toBe(true)
}

describe.each(backends)('control flow on the %s backend', (backend) => {
  const rev = tag({ backend })

  it('if with pre/post conditions, both branches', () => {
    const m = rev`fn f(y: f64, x: f64, s: f64) {
      if (x > 0.0, ~) { y += x * s * s } else { y -= sin(x) * s }
    }`
    expectGradOk(m.f!, [0, 1.5, 0.7])
    expectGradOk(m.f!, [0, -1.5, 0.7])
    expect(gradient(m.f!, [0, 1.5, 0.7], { loss: 0 })[1]).toBeCloseTo(0.49, 14)
  })

  it('if whose branch changes the condition (post-condition)', () => {
    const m = rev`fn f(y: f64, x: f64, n: i32) {
      if (n > 0, n > 10) { n += 10; y += x * x } else { y += x }
    }`
    expectGradOk(m.f!, [0, 1.5, 3])
    expectGradOk(m.f!, [0, 1.5, -3])
  })

  it('for loops: ascending, inclusive, negative steps', () => {
    const m = rev`fn f(y: f64, x: f64[]) {
      for i in 0..len(x) { y += x[i] * x[i] * f64(i + 1) }
      for i in len(x) - 1..=1 by -1 { x[i] += x[i - 1] * 0.5 }
      for i in 0..len(x) by 2 { y += sin(x[i]) }
      for i in len(x) - 2..=0 by -3 { y += x[i] * x[i + 1] }
    }`
    expectGradOk(m.f!, [0, Float64Array.from([0.3, -1.2, 0.5, 2, 0.1, 0.9, -0.4])])
  })

  it('while loop with post-condition', () => {
    const m = rev`fn f(y: f64, x: f64, n: i32) {
      k: i32 <- 0
      while (k < n, k > 0) {
        k += 1
        y += x * f64(k)
        x += 0.1 * y
      }
      k -> n
    }`
    expectGradOk(m.f!, [0.2, 1.1, 5])
  })

  it('calls pass gradients of dataviews, array elements and negated views', () => {
    const m = rev`
      fn mul(y: f64, a: f64, b: f64) { y += a * b }
      fn f(y: f64, x: f64[], s: f64) {
        for i in 0..len(x) { mul(y, x[i], s) }
        mul(y, -s, x[0])
        mul(x[1], x[0], x[2])
        y += x[1] * 2.0
      }`
    expectGradOk(m.f!, [0, Float64Array.from([0.3, -1.2, 0.5]), 0.7])
  })

  it('a read-only argument passed twice (shared read) gets both contributions', () => {
    const m = rev`
      fn mul(y: f64, a: f64, b: f64) { y += a * b }
      fn dot(r: f64, a: f64[], b: f64[]) { for i in 0..len(a) { r += a[i] * b[i] } }
      fn f(y: f64, x: f64, v: f64[]) { mul(y, x, x); dot(y, v, v) }`
    const [, gx, gv] = gradient(m.f!, [0, 3, Float64Array.from([1, 2])], { loss: 0 })
    expect(gx).toBe(6)
    expect(Array.from(gv as Float64Array)).toEqual([2, 4])
    expectGradOk(m.f!, [0, 3, Float64Array.from([1, 2])])
  })

  it('constant float expressions and integer expressions as arguments', () => {
    const m = rev`
      fn axpy(y: f64, a: f64, x: f64, n: i32) { y += a * x * f64(n) }
      fn f(y: f64, x: f64, n: i32) { axpy(y, 2.5, x, n - 1); axpy(y, x, 0.5, 3) }`
    expect(gradient(m.f!, [0, 2, 4], { loss: 0 })).toEqual([1, 2.5 * 3 + 1.5, null])
  })

  it('a float expression passed to a read-only float parameter carries its gradient into what it reads', () => {
    const m = rev`
      fn mul(y: f64, a: f64) { y += a * a }
      fn f(y: f64, x: f64) { mul(y, x * 2.0) }`
    // y += (2x)² : dy/dx = 8x
    expect(gradient(m.f!, [0, 1.5], { loss: 0, mode: 'reverse' })).toEqual([1, 12])
    expectGradOk(m.f!, [0, 1.5])
  })

  it('uncalls differentiate the inverse', () => {
    const m = rev`
      fn step(y: f64, x: f64) { y += x * x * x }
      fn f(y: f64, x: f64, z: f64) { step(z, x); ~step(y, z) ; y += z * x }`
    expectGradOk(m.f!, [0.1, 0.8, 0.3])
  })

  it('the gradient of an inverse function (m.f.inverse)', () => {
    const m = rev`fn f(y: f64, x: f64) { y += x * x; x += sin(y) }`
    expectGradOk(m.f!.inverse, [0.3, 0.8])
    expectGradOk(m.f!.inverse, [0.3, 0.8], 1)
  })

  it('recursion', () => {
    const m = rev`
      fn power(y: f64, x: f64, n: i32) {
        if (n > 0, ~) {
          t <- 0.0
          power(t, x, n - 1)
          y += t * x
          ~power(t, x, n - 1)
          t -> 0.0
        } else { y += 1.0 }
      }`
    for (const mode of ['reverse', 'forward'] as const) {
      const [, gx] = gradient(m.power!, [0, 1.3, 5], { loss: 0, mode }) as number[]
      expect(gx).toBeCloseTo(5 * 1.3 ** 4, 12)
    }
    expectGradOk(m.power!, [0, 1.3, 5])
  })

  it('routine / ~routine and ancillas initialised from expressions', () => {
    const m = rev`fn f(y: f64, x: f64, w: f64) {
      routine {
        a <- x * w
        b <- 0.0
        b += exp(a) + x
      }
      y += b * b
      ~routine
    }`
    expectGradOk(m.f!, [0, 0.3, -0.7])
  })

  it('array ancillas and stacks', () => {
    const m = rev`fn f(y: f64, x: f64[]) {
      t: f64[] <- zeros(len(x))
      s: stack<f64> <- []
      for i in 0..len(x) { t[i] += x[i] * x[i] }
      for i in 0..len(x) { y += t[i] * x[i] }
      for i in 0..len(x) { push(s, t[i]) }
      a <- 0.0
      pop(s, a)
      y += a * 3.0
      push(s, a)
      a -> 0.0
      for i in len(x) - 1..=0 by -1 { pop(s, t[i]) }
      for i in 0..len(x) { t[i] -= x[i] * x[i] }
      s -> []
      t -> zeros(len(x))
    }`
    expectGradOk(m.f!, [0, Float64Array.from([0.3, -1.2, 0.5])])
  })

  it('@safe statements run in the adjoint too; @unchecked blocks are differentiated', () => {
    let calls = 0
    const m = rev`fn f(y: f64, x: f64) {
      @safe ${() => {
        calls++
      }}()
      @unchecked { y += x * x }
    }`
    expect(Array.from(grad(m.f!, { loss: 0, mode: 'reverse' })(0, 3))).toEqual([1, 6])
    expect(calls).toBe(2)
    // forward mode (grad's choice for this function of one variable) runs f once: once more
    expect(gradient(m.f!, [0, 3], { loss: 0 })).toEqual([1, 6])
    expect(calls).toBe(3)
  })

  it('values return to the inputs after the adjoint; caller arrays untouched', () => {
    const m = rev`fn f(y: f64, x: f64[]) { for i in 0..len(x) { y += x[i] ** 3 }; x[0] += y }`
    const x = Float64Array.from([1, 2])
    const g = grad(m.f!, { loss: 0 })
    const r = g(0, x)
    expect(Array.from(x)).toEqual([1, 2])
    expect(Array.from(r[1] as Float64Array)).toEqual([3, 12])
  })

  it('jacobian of a rotation', () => {
    const m = rev`fn f(a: f64, b: f64, t: f64) { ROT(a, b, t) }`
    const J = jacobian(m.f!, [1, 2, 0.3], { inputs: [0, 1], outputs: [0, 1] })
    const c = Math.cos(0.3),
      s = Math.sin(0.3)
    expect(Array.from(J).map((v) => +v.toFixed(14))).toEqual([c, -s, s, c].map((v) => +v.toFixed(14)))
  })
})
