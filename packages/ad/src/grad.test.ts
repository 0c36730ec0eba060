import { setFlagsFromString } from 'node:v8'
import { describe, expect, it } from 'vitest'
import { grad, gradient, hessian, hvp, jacobian, checkGrad } from './index.js'
import { rev, tag } from './test-util.js'

describe('the public API', () => {
  const m = rev`
    fn norm(res: f64, y: f64, x: f64[]) { for i in 0..len(x) { y += x[i] ** 2 }; res += sqrt(y) }
    fn quad(l: f64, a: f64, b: f64, x: f64[]) {
      l += a * a * b + sin(a) * b * b
      for i in 0..len(x) { l += a * x[i] * x[i] + b * x[i] }
    }`

  it('gradient of the norm at [1, 2, 3] is x/‖x‖', () => {
    const x = Float64Array.from([1, 2, 3])
    const g = gradient(m.norm!, [0, 0, x], { loss: 0 })
    const n = Math.sqrt(14)
    expect(g[0]).toBe(1)
    expect(g[1]).toBeCloseTo(1 / (2 * n), 15)
    Array.from(g[2] as Float64Array).forEach((v, i) => expect(v).toBeCloseTo(x[i]! / n, 15))
    expect(Array.from(x)).toEqual([1, 2, 3])
  })

  it('grad is compiled once; each call returns fresh results (run reuses the buffers); gradient returns copies', () => {
    const g = grad(m.norm!, { loss: 0 })
    const r1 = g(0, 0, Float64Array.from([3, 4]))
    const a1 = Array.from(r1[2] as Float64Array)
    expect(g.lastLoss).toBe(5)
    const r2 = g(0, 0, Float64Array.from([0, 2]))
    expect(r2).not.toBe(r1)
    expect(Array.from(r1[2] as Float64Array)).toEqual(a1)
    expect(Array.from(r2[2] as Float64Array)).toEqual([0, 1])
    g.run(0, 0, Float64Array.from([3, 4]))
    const b = g.buffers[2]
    g.run(0, 0, Float64Array.from([0, 2]))
    expect(g.buffers[2]).toBe(b)
    expect(g.adjoint.ir.params.map((p) => p.name)).toEqual(['res', 'y', 'x', 'g_res', 'g_y', 'g_x', 'g$sink'])
    const c1 = gradient(m.norm!, [0, 0, Float64Array.from([3, 4])], { loss: 0 })
    const c2 = gradient(m.norm!, [0, 0, Float64Array.from([3, 4])], { loss: 0 })
    expect(c1[2]).not.toBe(c2[2])
  })

  it('every gradient function keeps fast properties, so a hot g.run(…) / g.scalars[i] needs no generic lookup', () => {
    // a getter made per gradient function gave the second and later ones dictionary properties
    // (V8), which cost the Bessel gradient about 10 ns per call; V8's own predicate checks it
    setFlagsFromString('--allow-natives-syntax')
    const fast = new Function('o', 'return %HasFastProperties(o)') as (o: unknown) => boolean
    const gs = [grad(m.norm!, { loss: 0 }), grad(m.quad!, { loss: 0 }), grad(m.norm!, { loss: 0, fuse: false })]
    for (const g of gs) expect(fast(g)).toBe(true)
    gs[0]!.run(0, 0, Float64Array.from([3, 4]))
    gs[1]!.run(0, 1, 2, Float64Array.from([1]))
    gs[2]!.run(0, 0, Float64Array.from([6, 8]))
    expect(gs.map((g) => g.lastLoss)).toEqual([5, 1 * 1 * 2 + Math.sin(1) * 4 + 1 + 2, 10])
  })

  it('the loss must be a float scalar argument', () => {
    expect(() => grad(m.norm!, { loss: 2 })).toThrow(/float scalar/)
    expect(() => grad(m.norm!, { loss: 7 })).toThrow(/index of an argument/)
  })

  it('hessian is symmetric and matches the analytic one', () => {
    const [a, b] = [0.7, -1.1]
    const x = Float64Array.from([0.5, -2])
    const H = hessian(m.quad!, [0, a, b, x], { loss: 0, wrt: [1, 2, 3] })
    const n = 4
    const want = [
      [2 * b - Math.sin(a) * b * b, 2 * a + 2 * Math.cos(a) * b, 2 * x[0]!, 2 * x[1]!],
      [2 * a + 2 * Math.cos(a) * b, 2 * Math.sin(a), 1, 1],
      [2 * x[0]!, 1, 2 * a, 0],
      [2 * x[1]!, 1, 0, 2 * a],
    ]
    for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) expect(H[i * n + j]).toBeCloseTo(want[i]![j]!, 8)
    const v = [null, 0.3, -0.2, Float64Array.from([1, 0.5])]
    const hv = hvp(m.quad!, [0, a, b, x], { loss: 0, v })
    const flatV = [0.3, -0.2, 1, 0.5]
    const want2 = want.map((row) => row.reduce((s, h, j) => s + h * flatV[j]!, 0))
    expect(hv[0]).toBeCloseTo(0, 12)
    expect(hv[1]).toBeCloseTo(want2[0]!, 8)
    expect(hv[2]).toBeCloseTo(want2[1]!, 8)
    expect((hv[3] as Float64Array)[0]).toBeCloseTo(want2[2]!, 8)
    expect((hv[3] as Float64Array)[1]).toBeCloseTo(want2[3]!, 8)
  })

  it('jacobian defaults: all float inputs, written float outputs', () => {
    const J = jacobian(m.norm!, [0, 0, Float64Array.from([3, 4])])
    // outputs: res, y (written); inputs: res, y, x0, x1
    expect(J.length).toBe(2 * 4)
    expect(Array.from(J.slice(0, 4)).map((v) => +v.toFixed(12))).toEqual([1, 0.1, 0.6, 0.8])
    expect(Array.from(J.slice(4))).toEqual([0, 1, 6, 8])
  })

  it('checkGrad reports the worst entry and catches a wrong derivative', () => {
    const ok = checkGrad(m.quad!, [0, 0.7, -1.1, Float64Array.from([0.5, -2])], { loss: 0 })
    expect(ok.ok).toBe(true)
    expect(ok.maxError).toBeLessThan(1e-6)
    expect(ok.worst).not.toBeNull()
  })

  it('the interpreter backend gives the same gradients as the cpu backend', () => {
    const mi = tag({
      backend: 'interpreter',
    })`fn norm(res: f64, y: f64, x: f64[]) { for i in 0..len(x) { y += x[i] ** 2 }; res += sqrt(y) }`
    const a = gradient(m.norm!, [0, 0, Float64Array.from([1, 2, 3])], { loss: 0 })
    const b = gradient(mi.norm!, [0, 0, Float64Array.from([1, 2, 3])], { loss: 0 })
    expect(b).toEqual(a)
  })
})

describe('the gradient driver copies only the arrays f writes', () => {
  const m = rev`
    fn scale(l: f64, w: f64[], x: f64[], idx: i32[], k: i32[]) {
      for i in 0..len(idx) { w[i] += x[idx[i]] * 2.0 }
      for i in 0..len(idx) { l += w[i] * x[idx[i]] }
      for i in 0..len(k) { k[i] += 1 }
    }`

  it('uses read-only arrays as passed, copies written ones, and leaves every argument as passed', async () => {
    const { compileAdjoint } = await import('./compile.js')
    const { sharedArrays } = await import('./arguments.js')
    expect(sharedArrays(compileAdjoint(m.scale!))).toEqual([false, false, true, true, false])
    const x = Float64Array.from([0.5, -1.5, 2]),
      w = Float64Array.from([1, 1]),
      idx = Int32Array.from([2, 0]),
      k = Int32Array.from([7])
    const g = grad(m.scale!, { loss: 0 })
    for (let rep = 0; rep < 3; rep++) {
      const out = g(0, w, x, idx, k)
      // l = Σ (w_i + 2 x_j) x_j  →  ∂l/∂w_i = x_j, ∂l/∂x_j = w_i + 4 x_j
      expect(Array.from(out[1] as Float64Array)).toEqual([2, 0.5])
      expect(Array.from(out[2] as Float64Array)).toEqual([1 + 4 * 0.5, 0, 1 + 4 * 2])
      expect(Array.from(w)).toEqual([1, 1])
      expect(Array.from(x)).toEqual([0.5, -1.5, 2])
      expect(Array.from(k)).toEqual([7])
    }
    expect(checkGrad(m.scale!, [0, w, x, idx, k], { loss: 0, atol: 1e-6 }).ok).toBe(true)
  })
})

describe('grad(f)(...) returns fresh results (issue 20)', () => {
  it('a second call does not change the first result, on cpu and wasm; run stays the allocation-free form', async () => {
    const { wasmBackend } = await import('@tenet/backend-wasm')
    const { createRegistry } = await import('@tenet/ir')
    const { registerNumbers } = await import('@tenet/numbers')
    const { cpuBackend } = await import('@tenet/backend-cpu')
    const { compileModule } = await import('@tenet/reversible')
    const { parse } = await import('@tenet/ir')
    const registry = registerNumbers(createRegistry()).registerBackend(cpuBackend).registerBackend(wasmBackend)
    for (const backend of ['cpu', 'wasm']) {
      const m = compileModule(
        parse({ text: 'fn f(y: f64, x: f64[]) { for i in 0..len(x) { y += x[i] * x[i] } }', name: 't' }),
        { registry, backend },
      )
      const g = grad(m.f!, { loss: 0 })
      const a = g(0, Float64Array.of(1, 2))
      const b = g(0, Float64Array.of(3, 4))
      expect(Array.from(a[1] as Float64Array), backend).toEqual([2, 4])
      expect(Array.from(b[1] as Float64Array), backend).toEqual([6, 8])
      expect(a[1]).not.toBe(b[1])
      g.run(0, Float64Array.of(5, 6))
      expect(Array.from(g.buffers[1]!), backend).toEqual([10, 12])
      expect(Array.from(a[1] as Float64Array), backend).toEqual([2, 4])
    }
  })
})
