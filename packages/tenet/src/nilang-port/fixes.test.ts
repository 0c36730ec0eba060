/**
 * Issue 20 (the language a NiLang user expects): regression tests of the wrong answers and
 * crashes, and of the instructions added for ported NiLang programs, on every backend that
 * supports the program.
 */
import { describe, expect, it } from 'vitest'
import {
  arrayPrimitive,
  compileAdjoint,
  createRegistry,
  det,
  dot,
  grad,
  gradient,
  hessian,
  jvp,
  logsumexp,
  rev,
  TenetError,
} from '../index.js'
import { wasmBackend } from '@tenet/backend-wasm'
import { template } from '../test-util.js'
import { ALL, NO_WASM, compileOn, cx, expectComplexClose, expectGradientMatchesFd, fdGradient } from './util.js'

const arrays = createRegistry()
  .registerBackend(wasmBackend)
  .registerPrimitive(det)
  .registerPrimitive(dot)
  .registerPrimitive(logsumexp)
const withArrays = (backend: string, source: string) => rev.with({ backend, registry: arrays })(template(source))

/** det of a row-major n×n matrix by Laplace expansion (the reference; not the primitive's LU). */
function laplace(A: ArrayLike<number>, n: number): number {
  if (n === 1) return A[0]!
  let s = 0
  for (let j = 0; j < n; j++) {
    const m: number[] = []
    for (let r = 1; r < n; r++) for (let c = 0; c < n; c++) if (c !== j) m.push(A[r * n + c]!)
    s += (j % 2 === 0 ? 1 : -1) * A[j]! * laplace(m, n - 1)
  }
  return s
}

describe.each(ALL)('host functions and array primitives (%s)', (backend) => {
  it('a host function with an array argument is rejected like the scalar form, with the same error', () => {
    const det2 = (A: Float64Array) => A[0]! * A[3]! - A[1]! * A[2]!
    const arr = rev.with({ backend, registry: arrays })`fn f(out: f64, A: f64[]) { out += ${det2}(A) }`
    const sca = rev.with({ backend, registry: arrays })`fn f(out: f64, x: f64) { out += ${Math.sin}(x) }`
    expect(arr.f!(0, Float64Array.of(1, 2, 3, 4))[0]).toBe(-2) // the forward run is fine
    const errorOf = (fn: () => unknown) => {
      try {
        fn()
        return undefined
      } catch (e) {
        return e as TenetError
      }
    }
    const ea = errorOf(() => gradient(arr.f!, [0, Float64Array.of(1, 2, 3, 4)], { loss: 0 }))
    const es = errorOf(() => gradient(sca.f!, [0, 1], { loss: 0 }))
    expect(ea?.code).toBe('ad/no-derivative')
    expect(es?.code).toBe('ad/no-derivative')
    expect(ea!.message.split(' (at')[0]).toBe(es!.message.split(' (at')[0])
  })

  it('det, dot and logsumexp take arrays: values and gradients (closed forms and finite differences)', () => {
    const m = withArrays(
      backend,
      `
      fn f(out: f64, A: f64[], x: f64[], s: f64) {
        out += det(A) * s + dot(x, x) - logsumexp(x)
      }`,
    )
    const A = Float64Array.of(2, -1, 0.5, 0.3, 1.7, -0.2, 1.1, 0.4, 0.9),
      x = Float64Array.of(0.3, -1.2, 2.1),
      s = 1.5
    const lse = Math.log(Math.exp(0.3) + Math.exp(-1.2) + Math.exp(2.1))
    const [out] = m.f!(0, A, x, s) as number[]
    expect(out).toBeCloseTo(laplace(A, 3) * s + (0.09 + 1.44 + 4.41) - lse, 12)
    const g = gradient(m.f!, [0, A, x, s], { loss: 0 }) as [number, Float64Array, Float64Array, number]
    // ∂/∂x = 2x − softmax(x); ∂/∂s = det(A)
    x.forEach((v, i) => expect(g[2][i]).toBeCloseTo(2 * v - Math.exp(v - lse), 12))
    expect(g[3]).toBeCloseTo(laplace(A, 3), 12)
    const fd = fdGradient(m.f!, [0, A, x, s], 0, [0])
    ;[...g[1], ...g[2], g[3]].forEach((v, k) => expect(Math.abs(v - fd[k]!)).toBeLessThan(1e-7))
  })

  it('the determinant gradient is the cofactor matrix, also for a singular matrix', () => {
    const m = withArrays(backend, 'fn f(out: f64, A: f64[]) { out += det(A) }')
    const A = Float64Array.of(1, 2, 3, 2, 4, 6, 0, 1, 5) // rank 2
    expect(m.f!(0, A)[0]).toBeCloseTo(0, 12)
    const g = gradient(m.f!, [0, A], { loss: 0 })[1] as Float64Array
    const fd = fdGradient(m.f!, [0, A], 0, [0])
    g.forEach((v, k) => expect(Math.abs(v - fd[k]!)).toBeLessThan(1e-7))
    expect(g.some((v) => Math.abs(v) > 1)).toBe(true)
  })

  it('inside a routine, through the fused gradient programs, with checks on and off', () => {
    for (const checks of [true, false]) {
      const m = rev.with({
        backend,
        registry: arrays,
        checks,
      })`fn f(y: f64, A: f64[], x: f64[]) { routine { t <- 0.0; t += det(A) } y += t * t + logsumexp(x); ~routine }`
      const g = grad(m.f!, { loss: 0 })(0, Float64Array.of(1, 2, 3, 4), Float64Array.of(0, 1))
      // 2·det(A)·cofactors, and the softmax of x
      expect(Array.from(g[1] as Float64Array)).toEqual([-16, 12, 8, -4])
      expect(Array.from(g[2] as Float64Array)).toEqual(
        [1 / (1 + Math.E), Math.E / (1 + Math.E)].map((v) => expect.closeTo(v, 15)),
      )
    }
  })

  it('an array primitive is reverse mode only: forward mode names it', () => {
    const m = withArrays(backend, 'fn f(out: f64, x: f64[]) { out += logsumexp(x) }')
    expect(() => jvp(m.f!, [0, Float64Array.of(1, 2)], { v: [0, Float64Array.of(1, 0)] })).toThrow(
      /`logsumexp` takes an array: its derivative is taken in reverse mode only/,
    )
  })
})

describe('array primitives: definitions and static errors', () => {
  it('arrayPrimitive types the arguments; the registry checks argKinds; the checker wants an f64[] by name', () => {
    const norm1 = arrayPrimitive({
      name: 'norm1',
      args: ['array', 'scalar'],
      evaluate: (v, p) => v.reduce((s, x) => s + Math.abs(x) ** p, 0),
      partials: (v, p) => [
        v.map((x) => p * Math.abs(x) ** (p - 1) * Math.sign(x)),
        v.reduce((s, x) => s + (x === 0 ? 0 : Math.abs(x) ** p * Math.log(Math.abs(x))), 0),
      ],
    })
    const r = createRegistry().registerPrimitive(norm1)
    const m = rev.with({ registry: r })`fn f(out: f64, v: f64[], p: f64) { out += norm1(v, p) }`
    const v = Float64Array.of(1.5, -0.5, 2)
    expect(m.f!(0, v, 3)[0]).toBeCloseTo(3.375 + 0.125 + 8, 12)
    expectGradientMatchesFd(m.f!, [0, v, 3], 0)
    expect(() => createRegistry().registerPrimitive({ ...norm1, name: 'bad', argKinds: ['array'] })).toThrow(/argKinds/)
    expect(() => rev.with({ registry: r })`fn f(out: f64, v: f64[]) { out += norm1(v[0], 2.0) }`).toThrow(
      /argument 1 of `norm1` is an array: pass an f64\[\] variable by name/,
    )
    expect(() => rev.with({ registry: r })`fn f(out: f64, v: i32[]) { out += norm1(v, 2.0) }`).toThrow(
      /must be an f64\[\] array, not i32\[\]/,
    )
    const wrong = arrayPrimitive({
      name: 'wrong',
      args: ['array'],
      evaluate: (v) => v[0]!,
      partials: () => [new Float64Array(1)],
    })
    const w = rev.with({
      registry: createRegistry().registerPrimitive(wrong),
    })`fn f(out: f64, v: f64[]) { out += wrong(v) }`
    expect(() => gradient(w.f!, [0, Float64Array.of(1, 2)], { loss: 0 })).toThrow(
      /`partials` of `wrong` must return, for array argument 1, an array of 2/,
    )
  })
})

describe.each(NO_WASM)('AD over a push onto a stack parameter (%s)', (backend) => {
  it("NiLang's `mean` that pushes its accumulator: the loss reads the pushed value", () => {
    const m = compileOn(
      backend,
      `
      fn mean(out: f64, x: f64[], st: stack<f64>) {
        anc <- 0.0
        for i in 0..len(x) { anc += x[i] }
        out += anc / len(x)
        push(st, anc)
        anc -> 0.0
      }`,
    )
    const x = Float64Array.of(1, 2, 3, 4)
    expect(m.mean!(0, x, [])).toEqual([2.5, x, [10]])
    const g = gradient(m.mean!, [0, x, []], { loss: 0 })
    expect(Array.from(g[1] as Float64Array)).toEqual([0.25, 0.25, 0.25, 0.25])
    // a stack that already holds values, and a pop of the pushed value inside the function
    const p = compileOn(
      backend,
      `
      fn f(out: f64, x: f64, st: stack<f64>) {
        y <- 0.0
        y += x * x
        push(st, y)
        y -> 0.0
        z <- 0.0
        pop(st, z)
        out += z * 3.0
        push(st, z)
        z -> 0.0
      }`,
    )
    expect(gradient(p.f!, [0, 1.5, [7]], { loss: 0 })[1]).toBeCloseTo(9, 14)
  })
})

describe.each(ALL)('deallocating a float array ancilla uses the scalar tolerance (%s)', (backend) => {
  it("NiLang's QR residue (5.6e-17) passes; 1e-6 fails; i32 arrays stay exact", () => {
    for (const T of ['f64', 'f32']) {
      const src = (r: string) =>
        `fn f(x: ${T}) { a: ${T}[] <- zeros(2); a[1] += x * ${T}(0.1); a[1] -= x * ${T}(0.1) + ${T}(${r}); a -> zeros(2) }`
      expect(compileOn(backend, src('5.6e-17')).f!(3)).toEqual([3])
      expect(() => compileOn(backend, src('1e-6')).f!(3)).toThrow(/cannot deallocate `a`/)
      // the scalar rule, for comparison
      expect(
        compileOn(
          backend,
          `fn f(x: ${T}) { a: ${T} <- 0.0; a += x * ${T}(0.1); a -= x * ${T}(0.1) + ${T}(5.6e-17); a -> 0.0 }`,
        ).f!(3),
      ).toEqual([3])
    }
    expect(() => compileOn(backend, 'fn f(k: i32) { a: i32[] <- zeros(2); a[0] += k; a -> zeros(2) }').f!(1)).toThrow(
      /cannot deallocate `a`/,
    )
  })
})

describe.each(ALL)('new instructions (%s)', (backend) => {
  it('gaussian_log = log(1 + eˣ), stable at both ends, with the logistic derivative and a second derivative', () => {
    const m = compileOn(backend, 'fn f(y: f64, x: f64) { y += gaussian_log(x) }')
    for (const x of [-3, -0.5, 0, 0.7, 4]) {
      expect(m.f!(0, x)[0]).toBeCloseTo(Math.log(1 + Math.exp(x)), 14)
      expect(gradient(m.f!, [0, x], { loss: 0 })[1]).toBeCloseTo(1 / (1 + Math.exp(-x)), 14)
      expectGradientMatchesFd(m.f!, [0, x], 0)
    }
    expect(m.f!(0, 800)[0]).toBe(800) // no overflow
    expect(m.f!(0, -800)[0]).toBe(0)
    expect(m.f!(0, -40)[0]).toBeCloseTo(Math.exp(-40), 30) // no cancellation
    // the second derivative σ(x)(1 − σ(x)), through the partial expression
    const H = hessian(m.f!, [0, 0.3], { loss: 0 }) // over x only: 1×1
    const s = 1 / (1 + Math.exp(-0.3))
    expect(H[0]).toBeCloseTo(s * (1 - s), 12)
  })

  it('sign, and abs/min/max/sign on i32 (results of the argument type)', () => {
    const f = compileOn(backend, 'fn f(y: f64, x: f64) { y += sign(x) * 2.0 + x }')
    expect([-3, 0, 2].map((x) => f.f!(0, x)[0])).toEqual([-5, 0, 4])
    expect(gradient(f.f!, [0, -3], { loss: 0 })[1]).toBe(1) // sign contributes nothing
    const m = compileOn(
      backend,
      'fn f(y: i32, a: i32, b: i32) { y += max(a, b) * 100 + min(a, 3) * 10 + abs(a) + sign(b) * 1000 }',
    )
    expect(m.f!(0, -4, 2)).toEqual([2 * 100 - 40 + 4 + 1000, -4, 2])
    expect(m.f!.inverse(1164, -4, 2)).toEqual([0, -4, 2])
    expect(() => compileOn(backend, 'fn f(y: i32, a: i32, b: f64) { y += max(a, b) }')).toThrow(
      /arguments of `max` must have one type, not i32 and f64/,
    )
  })

  it('INC and DEC on f64 are differentiable (derivative 1), in reverse and forward mode', () => {
    const m = compileOn(backend, 'fn f(y: f64, x: f64) { INC(x); y += x * x; DEC(y); DEC(x) }')
    expect(m.f!(0, 2)).toEqual([8, 2])
    expect(gradient(m.f!, [0, 2], { loss: 0 })).toEqual([1, 6])
    expect(jvp(m.f!, [0, 2], { v: [0, 1] }).tangent).toEqual([6, 1])
    expectGradientMatchesFd(m.f!, [0, 2], 0)
  })

  it('a ulog field read inside a differentiated expression: x.log has derivative 1/x', () => {
    if (backend === 'wasm')
      return expect(() => compileOn(backend, 'fn f(y: f64, x: ulog) { y += x.log * 2.0 }')).toThrow(TenetError)
    const m = compileOn(backend, 'fn f(y: f64, x: ulog) { y += x.log * 2.0 + f64(x) }')
    expect(m.f!(0, 3)[0]).toBeCloseTo(2 * Math.log(3) + 3, 10)
    expect(gradient(m.f!, [0, 3], { loss: 0 })[1]).toBeCloseTo(2 / 3 + 1, 10)
    expect(gradient(m.f!, [0, -2], { loss: 0 })[1]).toBeCloseTo(2 / -2 + 1, 10)
  })

  it('the adjoint of a generated adjoint: no clash of the sink names, and the right second derivatives', () => {
    const m = compileOn(backend, 'fn f(y: f64, x: f64) { y += x * x * x }')
    const a = compileAdjoint(m.f!).adjoint
    // A(y, x, ḡy, ḡx, sink) = (y − x³, x, ḡy, ḡx + 3x²·ḡy, sink); its result ḡx differentiated
    expect(a(0, 2, 1, 0, 0)).toEqual([-8, 2, 1, 12, 0])
    expect(gradient(a, [8, 2, 1, 0, 0], { loss: 3 })).toEqual([0, 12, 12, 1, 0])
  })
})

describe.each(ALL)('complex instructions (%s)', (backend) => {
  const z = cx.of(0.7, -0.4),
    w = cx.of(0.3, 0.2)
  it('identity, sin, cos, tanh, sqrt and ** against a plain-TS reference', () => {
    const m = compileOn(
      backend,
      `
      fn f(a: complex, b: complex, c: complex, d: complex, e: complex, g: complex, h: complex, k: complex, x: complex, w: complex) {
        a += identity(x)
        b += sin(x)
        c += cos(x)
        d += tanh(x)
        e += sqrt(x)
        g += x ** w
        h += x ** 1.5
        k += x ** 3
      }`,
    )
    const zero = cx.of(0)
    const r = m.f!(zero, zero, zero, zero, zero, zero, zero, zero, z, w) as unknown[]
    expectComplexClose(r[0], z)
    expectComplexClose(r[1], cx.sin(z))
    expectComplexClose(r[2], cx.cos(z))
    expectComplexClose(r[3], cx.tanh(z))
    expectComplexClose(r[4], cx.sqrt(z))
    expectComplexClose(r[5], cx.pow(z, w))
    expectComplexClose(r[6], cx.pow(z, cx.of(1.5)))
    expectComplexClose(r[7], cx.mul(z, cx.mul(z, z)), 0) // small integer powers are exact products
    // principal branches: √−4 = 2i, (−1)^0.5 = i
    const s = compileOn(backend, 'fn f(e: complex, h: complex, x: complex) { e += sqrt(x); h += x ** 0.5 }')
    const q = s.f!(zero, zero, cx.of(-4)) as unknown[]
    expectComplexClose(q[0], cx.of(0, 2))
    expectComplexClose(q[1], cx.of(0, 2), 1e-15)
    // and every one is reversible
    const back = m.f!.inverse(...r) as unknown[]
    for (let i = 0; i < 8; i++) expectComplexClose(back[i], zero, 1e-15)
  })

  it('their gradients match finite differences', () => {
    for (const e of [
      'identity(x)',
      'sin(x)',
      'cos(x)',
      'tanh(x)',
      'sqrt(x)',
      'x ** w',
      'x ** 1.5',
      'x ** 2',
      'w ** x',
    ]) {
      const m = compileOn(
        backend,
        `
        fn f(l: f64, x: complex, w: complex) {
          y: complex <- complex(0.0, 0.0)
          y += ${e}
          l += 0.8 * y.re - 1.3 * y.im
          y -= ${e}
          y -> complex(0.0, 0.0)
        }`,
      )
      expectGradientMatchesFd(m.f!, [0, z, w], 0)
    }
  })
})

describe.each(NO_WASM)('stacks of complex (%s)', (backend) => {
  it('push and pop move both parts; a JS array of { re, im } at the host boundary; inverse', () => {
    const m = compileOn(
      backend,
      `
      fn f(x: complex, y: complex, st: stack<complex>) {
        push(st, x)
        t: stack<complex> <- []
        push(t, y)
        pop(t, x)
        t -> []
      }`,
    )
    const r = m.f!(cx.of(1, 2), cx.of(3, -4), [cx.of(5, 6)])
    expect(r).toEqual([cx.of(3, -4), cx.of(0, 0), [cx.of(5, 6), cx.of(1, 2)]])
    expect(m.f!.inverse(...r)).toEqual([cx.of(1, 2), cx.of(3, -4), [cx.of(5, 6)]])
    expect(() => compileOn(backend, 'fn f(x: f64, st: stack<complex>) { push(st, x) }')).toThrow(
      /is a stack of complex, but a real value is moved/,
    )
    expect(() => m.f!(cx.of(0), cx.of(0), [{ re: 1 }])).toThrow(/must hold \{ re: number, im: number \} values/)
  })
})
