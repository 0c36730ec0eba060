import { describe, expect, it } from 'vitest'
import { createRegistry, parse, TenetStaticError } from '@tenet/ir'
import { compileModule, interpreterBackend } from '@tenet/reversible'
import { cpuBackend } from '@tenet/backend-cpu'
import { wasmBackend } from '@tenet/backend-wasm'
import { registerNumbers } from '@tenet/numbers'
import { lvSource } from '@tenet/testing'
import { checkGrad, compileAdjoint, gradient, hessian, hvp, jacobian, jvp } from './index.js'
import { expectClose } from './test-util.js'

/**
 * A float expression passed to a parameter the callee only reads (`lv(b0, b1, x + h/2*a0, …)`):
 * the reverse sweep passes the callee a temporary gradient for it and then carries that gradient
 * through the expression into the locations it reads.
 */
const registry = () =>
  createRegistry().registerBackend(cpuBackend).registerBackend(wasmBackend).registerBackend(interpreterBackend)
const compile = (text: string, backend: string, checks: boolean) =>
  compileModule(parse({ text, name: 'test' }), { registry: registry(), backend, checks })

function expectGradOk(f: Parameters<typeof checkGrad>[0], args: unknown[], loss = 0) {
  const r = checkGrad(f, args, { loss, atol: 1e-6, rtol: 1e-6 })
  expect(r.ok, JSON.stringify(r.worst)).toBe(true)
}

/**
 * RK4 written the natural way: each stage's argument is an expression of the state and the last
 * stage (this test's variant of the bench kernel's `rk4_loss`, which computes the stages' arguments
 * into locals).
 */
const rk4Natural = `
${lvSource}
fn rk4_loss(loss: f64, x0: f64[], p: f64[], h: f64, steps: i32) {
  routine {
    xs: f64[] <- zeros(2 * steps + 2)
    xs[0] += x0[0]
    xs[1] += x0[1]
    for t in 0..steps {
      routine {
        a0, a1, b0, b1, c0, c1, e0, e1 <- 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0
        lv(a0, a1, xs[2 * t], xs[2 * t + 1], p)
        lv(b0, b1, xs[2 * t] + h / 2.0 * a0, xs[2 * t + 1] + h / 2.0 * a1, p)
        lv(c0, c1, xs[2 * t] + h / 2.0 * b0, xs[2 * t + 1] + h / 2.0 * b1, p)
        lv(e0, e1, xs[2 * t] + h * c0, xs[2 * t + 1] + h * c1, p)
      }
      xs[2 * t + 2] += xs[2 * t] + h / 6.0 * (a0 + 2.0 * b0 + 2.0 * c0 + e0)
      xs[2 * t + 3] += xs[2 * t + 1] + h / 6.0 * (a1 + 2.0 * b1 + 2.0 * c1 + e1)
      ~routine
    }
  }
  loss += xs[2 * steps] * xs[2 * steps + 1]
  ~routine
}`

/** The same integrator in plain TS, for finite differences independent of Tenet. */
function rk4Plain(x0: Float64Array, p: Float64Array, h: number, steps: number): number {
  let x = x0[0]!,
    y = x0[1]!
  const f = (u: number, v: number): [number, number] => [p[0]! * u - p[1]! * u * v, p[3]! * u * v - p[2]! * v]
  for (let t = 0; t < steps; t++) {
    const [a0, a1] = f(x, y)
    const [b0, b1] = f(x + (h / 2) * a0, y + (h / 2) * a1)
    const [c0, c1] = f(x + (h / 2) * b0, y + (h / 2) * b1)
    const [e0, e1] = f(x + h * c0, y + h * c1)
    ;[x, y] = [x + (h / 6) * (a0 + 2 * b0 + 2 * c0 + e0), y + (h / 6) * (a1 + 2 * b1 + 2 * c1 + e1)]
  }
  return x * y
}

function centralDifferences(f: (v: Float64Array) => number, v: Float64Array): Float64Array {
  const g = new Float64Array(v.length)
  for (let i = 0; i < v.length; i++) {
    const e = 1e-6 * Math.max(1, Math.abs(v[i]!))
    const w = Float64Array.from(v)
    w[i] = v[i]! + e
    const fp = f(w)
    w[i] = v[i]! - e
    g[i] = (fp - f(w)) / (2 * e)
  }
  return g
}

describe.each(['cpu', 'wasm', 'interpreter'] as const)('expression arguments on %s', (backend) => {
  for (const checks of [true, false]) {
    it(`RK4 with stage arguments written as expressions (checks ${checks ? 'on' : 'off'}) against finite differences of plain TS`, () => {
      const m = compile(rk4Natural, backend, checks)
      const x0 = Float64Array.from([1.2, 0.8]),
        p = Float64Array.from([1.1, 0.4, 0.9, 0.3]),
        h = 0.05,
        steps = 40
      const g = gradient(m.rk4_loss!, [0, x0, p, h, steps], { loss: 0, mode: 'reverse' })
      expectClose(
        g[1] as Float64Array,
        centralDifferences((v) => rk4Plain(v, p, h, steps), x0),
        1e-6,
        'x0',
      )
      expectClose(
        g[2] as Float64Array,
        centralDifferences((v) => rk4Plain(x0, v, h, steps), p),
        1e-6,
        'p',
      )
      const gh = centralDifferences((v) => rk4Plain(x0, p, v[0]!, steps), Float64Array.of(h))[0]!
      expect(Math.abs((g[3] as number) - gh)).toBeLessThan(1e-6 * (1 + Math.abs(gh)))
      // forward mode (the tangents of the expressions) agrees with reverse mode along a direction
      const v = Float64Array.from([0.3, -0.5, 0.7, 0.2])
      const { tangent } = jvp(m.rk4_loss!, [0, x0, p, h, steps], { v: [0, null, v, 0, null] })
      const gp = g[2] as Float64Array
      const dot = gp.reduce((acc, gi, i) => acc + gi * v[i]!, 0)
      expect(Math.abs((tangent[0] as number) - dot)).toBeLessThan(1e-12 * (1 + Math.abs(dot)))
      // the arguments come back unchanged
      expect(Array.from(x0)).toEqual([1.2, 0.8])
    })

    it(`scalars, array elements, uncalls, shared reads and constant expressions (checks ${checks ? 'on' : 'off'})`, () => {
      const m = compile(
        `
        fn mul(y: f64, a: f64, b: f64) { y += a * b }
        fn cube(y: f64, x: f64) { y += x * x * x }
        fn f(y: f64, x: f64, v: f64[], s: f64) {
          mul(y, x * 2.0 + sin(x), v[0] - v[1] * s)
          for i in 0..len(v) { mul(y, v[i] * v[i], exp(s * f64(i))) }
          mul(y, x, x * x)
          cube(v[2], x - s)
          ~cube(y, v[0] / (1.0 + s * s))
          mul(y, 1.5, 2.0 * 0.25)
          y += v[2] * x
        }`,
        backend,
        checks,
      )
      const args = [0.25, 0.7, Float64Array.from([0.3, -1.2, 0.5]), 0.4]
      expectGradOk(m.f!, args)
      // by hand: d/dx of (2x + sin x)(v0 − v1 s) is (2 + cos x)(v0 − v1 s)
      const only = compile(
        'fn mul(y: f64, a: f64, b: f64) { y += a * b }\nfn f(y: f64, x: f64, v: f64[], s: f64) { mul(y, x * 2.0 + sin(x), v[0] - v[1] * s) }',
        backend,
        checks,
      )
      const [, gx, gv, gs] = gradient(only.f!, args, { loss: 0, mode: 'reverse' }) as [
        number,
        number,
        Float64Array,
        number,
      ]
      const [x, v, s] = [0.7, [0.3, -1.2, 0.5], 0.4]
      expect(gx).toBeCloseTo((2 + Math.cos(x)) * (v[0]! - v[1]! * s), 14)
      expect(Array.from(gv)).toEqual([2 * x + Math.sin(x), -(2 * x + Math.sin(x)) * s, 0])
      expect(gs).toBeCloseTo(-(2 * x + Math.sin(x)) * v[1]!, 14)
    })
  }
})

describe('expression arguments in the other derivative drivers', () => {
  const src = `
    fn mul(y: f64, a: f64, b: f64) { y += a * b }
    fn f(out: f64[], x: f64, z: f64, v: f64[]) {
      mul(out[0], x * z + v[0], sin(z - v[1]))
      mul(out[1], exp(x * 0.5), v[0] * v[1] + z)
      ROT(out[0], out[1], x * z)
    }
    fn g(y: f64, x: f64, z: f64, v: f64[]) {
      mul(y, x * z + v[0], sin(z - v[1]))
      mul(y, exp(x * 0.5) * z, v[0] * v[1] + z)
    }`
  const args = () => [Float64Array.from([0.1, -0.3]), 0.6, -0.8, Float64Array.from([0.9, 0.35])]

  it('vector-mode reverse Jacobians (w gradients per expression) equal forward ones', () => {
    const m = compile(src, 'cpu', true)
    const Jf = jacobian(m.f!, args(), { mode: 'forward', width: 2 })
    for (const width of [1, 2, 3])
      expectClose(jacobian(m.f!, args(), { mode: 'reverse', width }), Jf, 1e-12, `w=${width}`)
  })

  it('gradients, Hessians and Hessian-vector products through expression arguments agree with finite differences of plain TS', () => {
    // g in plain TS, over the flattened inputs x, z, v0, v1
    const plain = ([x, z, v0, v1]: number[]) =>
      (x! * z! + v0!) * Math.sin(z! - v1!) + Math.exp(x! * 0.5) * z! * (v0! * v1! + z!)
    const at = [0.6, -0.8, 0.9, 0.35]
    const n = at.length
    const shift = (u: number[], k: number, d: number) => u.map((w, i) => (i === k ? w + d : w))
    for (const backend of ['cpu', 'wasm']) {
      for (const checks of [true, false]) {
        const m = compile(src, backend, checks)
        const a = [0.2, at[0], at[1], Float64Array.from(at.slice(2))]
        const g = gradient(m.g!, a, { loss: 0, mode: 'reverse' })
        const gflat = [g[1] as number, g[2] as number, ...(g[3] as Float64Array)]
        for (let k = 0; k < n; k++) {
          const fd = (plain(shift(at, k, 1e-6)) - plain(shift(at, k, -1e-6))) / 2e-6
          expect(Math.abs(gflat[k]! - fd), `${backend} g[${k}]`).toBeLessThan(1e-7 * (1 + Math.abs(fd)))
        }
        const H = hessian(m.g!, a, { loss: 0 })
        expect(H.length).toBe(n * n)
        const e = 1e-4
        for (let j = 0; j < n; j++)
          for (let k = 0; k < n; k++) {
            const u = (dj: number, dk: number) => plain(shift(shift(at, j, dj), k, dk))
            const fd = (u(e, e) - u(e, -e) - u(-e, e) + u(-e, -e)) / (4 * e * e)
            expect(Math.abs(H[j * n + k]! - fd), `${backend} H[${j},${k}]`).toBeLessThan(1e-6 * (1 + Math.abs(fd)))
          }
        const dir = [0.3, -0.7, 0.2, 1.1]
        const Hv = hvp(m.g!, a, { loss: 0, v: [0, dir[0], dir[1], Float64Array.from(dir.slice(2))] })
        const flatHv = [Hv[1] as number, Hv[2] as number, ...(Hv[3] as Float64Array)]
        for (let j = 0; j < n; j++) {
          let want = 0
          for (let k = 0; k < n; k++) want += H[j * n + k]! * dir[k]!
          expect(Math.abs(flatHv[j]! - want), `${backend} Hv[${j}]`).toBeLessThan(1e-9 * (1 + Math.abs(want)))
        }
      }
    }
  })

  it('f32 (cpu, wasm) and fixed-point (cpu) expressions: the gradient computed by hand', () => {
    const reg = registerNumbers(createRegistry()).registerBackend(cpuBackend).registerBackend(wasmBackend)
    const f32 = `fn mul(y: f32, a: f32, b: f32) { y += a * b }
      fn f(y: f32, x: f32, v: f32[]) { mul(y, x * x + v[0], v[1] - x) }`
    for (const backend of ['cpu', 'wasm']) {
      const m = compileModule(parse({ text: f32, name: 'test' }), { registry: reg, backend, checks: true })
      // y += (x² + v0)(v1 − x): ∂x = 2x(v1 − x) − (x² + v0), ∂v0 = v1 − x, ∂v1 = x² + v0 (exact in f32 here)
      const [, gx, gv] = gradient(m.f!, [0, 1.5, Float32Array.of(0.5, 2)], { loss: 0, mode: 'reverse' })
      expect(gx, backend).toBe(-1.25)
      expect(Array.from(gv as Float32Array), backend).toEqual([0.5, 2.75])
    }
    const fixed = compileModule(
      parse({
        text: `fn mul(y: fixed, a: fixed, b: fixed) { y += a * b }
          fn g(y: fixed, x: fixed, z: fixed) { mul(y, x + z, x - z) }`,
        name: 'test',
      }),
      { registry: reg, backend: 'cpu', checks: true },
    )
    // y += (x + z)(x − z) = x² − z²
    expect(gradient(fixed.g!, [0, 1.5, 0.25], { loss: 0, mode: 'reverse' })).toEqual([1, 3, -0.5])
  })

  it('an expression reading another element of the array the call writes', () => {
    const text = `fn inc(y: f64, a: f64) { y += a * a }
      fn f(loss: f64, v: f64[], i: i32, j: i32) { inc(v[i], v[j] * 2.0); loss += v[0] * v[1] }`
    for (const backend of ['cpu', 'wasm', 'interpreter'])
      for (const checks of [true, false]) {
        const m = compile(text, backend, checks)
        // loss = (v0 + 4 v1²) v1: ∂v0 = v1, ∂v1 = v0 + 12 v1²
        const [, gv] = gradient(m.f!, [0, Float64Array.of(0.3, 0.7), 0, 1], { loss: 0, mode: 'reverse' })
        expectClose(gv as Float64Array, [0.7, 0.3 + 12 * 0.49], 1e-14, `${backend} ${checks}`)
        expectGradOk(m.f!, [0, Float64Array.of(0.3, 0.7), 0, 1])
        // the same element: the forward run's check names the call (with checks on)
        if (checks)
          expect(() => gradient(m.f!, [0, Float64Array.of(0.3, 0.7), 0, 0], { loss: 0 }), backend).toThrow(
            /same element[\s\S]*at 2:/,
          )
      }
  })

  it('recursion through an expression argument', () => {
    // y = Σₖ sin(xₖ) + x_n², x₀ = x, xₖ₊₁ = xₖ/2 + 0.1
    const text = `fn rec(y: f64, x: f64, n: i32) {
        if (n > 0, ~) { y += sin(x); rec(y, x * 0.5 + 0.1, n - 1) } else { y += x * x }
      }`
    const plain = (x: number) => {
      let y = 0
      for (let k = 0; k < 6; k++) {
        y += Math.sin(x)
        x = x * 0.5 + 0.1
      }
      return y + x * x
    }
    const fd = (plain(0.9 + 1e-6) - plain(0.9 - 1e-6)) / 2e-6
    for (const backend of ['cpu', 'wasm', 'interpreter'])
      for (const checks of [true, false]) {
        const m = compile(text, backend, checks)
        const [, gx] = gradient(m.rec!, [0, 0.9, 6], { loss: 0, mode: 'reverse' }) as number[]
        expect(Math.abs(gx! - fd), `${backend} ${checks}`).toBeLessThan(1e-8)
      }
  })

  it('the adjoint equals that of the same call with the expression in an ancilla: gradients and sink', () => {
    const natural = `fn sq(y: f64, a: f64) { y += a * a * a }
      fn f(y: f64, x: f64, z: f64) { sq(y, x * z + 1.0); sq(y, 0.5 * 3.0) }`
    const ancilla = `fn sq(y: f64, a: f64) { y += a * a * a }
      fn f(y: f64, x: f64, z: f64) {
        t <- 0.0; t += x * z + 1.0; sq(y, t); t -= x * z + 1.0; t -> 0.0
        u <- 0.0; u += 0.5 * 3.0; sq(y, u); u -= 0.5 * 3.0; u -> 0.0
      }`
    for (const backend of ['cpu', 'wasm'])
      for (const checks of [true, false]) {
        const [a, b] = [natural, ancilla].map((text) => {
          const f = compile(text, backend, checks).f!
          const out = f(0.25, 0.7, -1.3) as number[]
          // values at f's outputs, g_y = 1, g_x = g_z = 0, sink 0
          return compileAdjoint(f).adjoint(out[0], out[1], out[2], 1, 0, 0, 0) as number[]
        })
        expect(a, `${backend} ${checks}`).toEqual(b)
        // the sink holds ∂y/∂a at both arguments: 3(xz + 1)² + 3·1.5²
        expect(a![6]).toBeCloseTo(3 * (0.7 * -1.3 + 1) ** 2 + 3 * 1.5 ** 2, 14)
      }
  })

  it('a constant parameter read by an expression argument gets no gradient; the others do', () => {
    const m = compile(src, 'cpu', true)
    const a = [0.2, 0.6, -0.8, Float64Array.from([0.9, 0.35])]
    const all = gradient(m.g!, a, { loss: 0 })
    const held = gradient(m.g!, a, { loss: 0, constants: [3] })
    expect(held[1]).toBe(all[1])
    expect(held[2]).toBe(all[2])
    expect(held[3]).toBeNull()
  })

  it('an expression passed where the callee writes, or that reads what the call writes, is still a static error', () => {
    const bad = [
      'fn inc(y: f64, a: f64) { y += a }\nfn f(y: f64, x: f64) { inc(x * 2.0, y) }',
      'fn inc(y: f64, a: f64) { y += a }\nfn f(y: f64, x: f64) { inc(y, y * 2.0) }',
    ]
    for (const text of bad) {
      let err: unknown
      try {
        const m = compile(text, 'cpu', true)
        compileAdjoint(m.f!)
      } catch (e) {
        err = e
      }
      expect(TenetStaticError.isInstance(err), String(err)).toBe(true)
      expect(String(err)).toMatch(/at 2:/)
    }
  })
})
