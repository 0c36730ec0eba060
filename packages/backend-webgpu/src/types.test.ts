/**
 * Types, primitives, checks and the API around a mapped kernel: f32 within an ulp of the cpu
 * backend per operation, i32/bool/fixed bit for bit, f64 rejected, user primitives with and
 * without a WGSL lowering, run-time checks, resident buffers, Jacobians, role errors.
 */
import { describe, expect, it } from 'vitest'
import { InvertibilityError, type TenetError, parse } from '@tenet/ir'
import { compileModule } from '@tenet/reversible'
import { fixed, fixedPoint } from '@tenet/numbers'
import { gpuMap, webgpuBackend } from './index.js'
import { adjointOf, cpu, testGpu, testRegistry } from './test-util.js'

const gpu = await testGpu()

/** Distance in units in the last place between two f32 values. */
function ulps(a: number, b: number): number {
  const x = new Int32Array(new Float32Array([a, b]).buffer)
  const ord = (v: number) => (v < 0 ? -2147483648 - v : v)
  return Math.abs(ord(x[0]!) - ord(x[1]!))
}

function uniform(n: number, seed: number, lo: number, hi: number): Float32Array {
  let s = seed >>> 0
  return Float32Array.from({ length: n }, () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0
    return lo + ((s >>> 8) / 2 ** 24) * (hi - lo)
  })
}

describe('static errors (no device needed)', () => {
  it('rejects f64 with an error that says WGSL has no f64', () => {
    const r = testRegistry()
    r.registerBackend(webgpuBackend)
    const m = () =>
      compileModule(parse({ text: 'fn f(y: f64, x: f64) { y += x }', name: 't' }), { registry: r, backend: 'webgpu' })
    expect(m).toThrowError(/WGSL has no 64-bit floats/)
    try {
      m()
    } catch (e) {
      expect((e as TenetError).code).toBe('webgpu/f64')
    }
  })

  it('the backend plugin is available where navigator.gpu is', () => {
    expect(webgpuBackend.isAvailable!()).toBe(
      typeof (globalThis as { navigator?: { gpu?: unknown } }).navigator?.gpu === 'object',
    )
  })

  it('the backend plugin shows the WGSL and points at gpuMap when called', () => {
    const r = testRegistry()
    r.registerBackend(webgpuBackend)
    const m = compileModule(parse({ text: 'fn f(y: f32, x: f32) { y += x * x }', name: 't' }), {
      registry: r,
      backend: 'webgpu',
    })
    const info = (m.f as unknown as Record<symbol, { compiled: { sourceOf(n: string, i: boolean): string } }>)[
      Symbol.for('tenet.function')
    ]!
    expect(info.compiled.sourceOf('f', false)).toMatch(/@compute @workgroup_size\(64\)/)
    expect(() => m.f!(0, 1)).toThrowError(/gpuMap/)
  })

  it('a missing WGSL lowering names the primitive and the backend', () => {
    const r = testRegistry()
    r.registerBackend(webgpuBackend)
    r.registerPrimitive({
      specificationVersion: 'v1',
      name: 'cube',
      kind: 'pure',
      arity: 1,
      evaluate: (x) => x * x * x,
      emit: { cpu: (x) => `((${x}) ** 3)` },
    })
    expect(() =>
      compileModule(parse({ text: 'fn f(y: f32, x: f32) { y += cube(x) }', name: 't' }), {
        registry: r,
        backend: 'webgpu',
      }),
    ).toThrowError(/no WGSL lowering for primitive `cube` on backend `webgpu` \(it has: cpu/)
  })

  it('rejects recursion and fixed-point formats wider than an i32 holds', () => {
    const r = testRegistry()
    r.registerBackend(webgpuBackend)
    expect(() =>
      compileModule(parse({ text: 'fn f(y: i32) { if (y > 0, ~) { y -= 1; f(y); y += 1 } }', name: 't' }), {
        registry: r,
        backend: 'webgpu',
      }),
    ).toThrowError(/WGSL has no recursion/)
    r.registerNumberSystem(fixed)
    expect(() =>
      compileModule(parse({ text: 'fn f(y: fixed, x: fixed) { y += x }', name: 't' }), {
        registry: r,
        backend: 'webgpu',
      }),
    ).toThrowError(/integerBits \+ fractionBits ≤ 30; `fixed` has 13 \+ 40/)
  })
})

describe.skipIf(!gpu)('types on webgpu', () => {
  it('f32 + − × ÷ and sqrt: within one ulp of the cpu backend per operation', async () => {
    const m = cpu('fn f(y: f32, a: f32, b: f32) { y += a * b - a / b + sqrt(abs(a)) }')
    const n = 4096
    const a = uniform(n, 3, -100, 100),
      b = uniform(n, 4, 0.5, 50)
    const y = uniform(n, 5, -1, 1)
    const want = Float32Array.from(y, (v, i) => m.f!(v, a[i], b[i])[0] as number)
    const k = await gpuMap(m.f!, { batch: n, perItem: ['a', 'b'], gpu })
    await k(y, a, b)
    let worst = 0
    for (let i = 0; i < n; i++) worst = Math.max(worst, ulps(y[i]!, want[i]!))
    console.log(
      `[backend-webgpu] f32 y += a * b - a / b + sqrt(abs(a)) on ${gpu!.adapter}: at most ${worst} ulp from the cpu backend over ${n} items`,
    )
    // six rounded operations (×, ÷, −, sqrt, +, and the update's +): at most one ulp each
    expect(worst).toBeLessThanOrEqual(6)
  })

  it('f32 transcendentals: within one ulp of the cpu backend by default, the device built-ins with precise: false', async () => {
    const m = cpu('fn f(s: f32, e: f32, l: f32, x: f32) { s += sin(x); e += exp(x); l += log(x + 5.0) }')
    const n = 4096
    const x = uniform(n, 6, -3, 3)
    const run = async (precise: boolean) => {
      const k = await gpuMap(m.f!, { batch: n, perItem: ['x'], gpu, precise })
      const s = new Float32Array(n),
        e = new Float32Array(n),
        l = new Float32Array(n)
      await k(s, e, l, x)
      const worst = { sin: 0, sinAbs: 0, exp: 0, log: 0, logAbs: 0 }
      for (let i = 0; i < n; i++) {
        const [ws, we, wl] = m.f!(0, 0, 0, x[i]) as number[]
        worst.sin = Math.max(worst.sin, ulps(s[i]!, ws!))
        worst.sinAbs = Math.max(worst.sinAbs, Math.abs(s[i]! - ws!))
        worst.exp = Math.max(worst.exp, ulps(e[i]!, we!))
        worst.log = Math.max(worst.log, ulps(l[i]!, wl!))
        worst.logAbs = Math.max(worst.logAbs, Math.abs(l[i]! - wl!))
      }
      return worst
    }
    const precise = await run(true)
    const device = await run(false)
    console.log(
      `[backend-webgpu] f32 transcendentals on ${gpu!.adapter} against the cpu backend's correctly rounded f32: precise sin ${precise.sin}, exp ${precise.exp}, log ${precise.log} ulp; device built-ins (precise: false) sin ${device.sin} ulp (abs ${device.sinAbs.toExponential(2)}), exp ${device.exp} ulp, log ${device.log} ulp (abs ${device.logAbs.toExponential(2)})`,
    )
    expect([precise.sin, precise.exp, precise.log].every((u) => u <= 1)).toBe(true)
    // WGSL's own accuracy bounds for the built-ins: sin absolute 2^-11 on [-π, π], log absolute 2^-21 near 1, exp 3 + 2|x| ulp
    expect(device.sinAbs).toBeLessThan(2 ** -11)
    expect(device.exp).toBeLessThanOrEqual(3 + 2 * 3)
    expect(device.logAbs).toBeLessThan(2 ** -11)
  })

  it("i32 and bool: the cpu backend's results bit for bit", async () => {
    const m = cpu(`fn f(b: bool, c: bool, x: i32, y: i32) {
      b ^= x > 3
      FLIP(c)
      c ^= b
      y += x * 2147483647 + div(x, -3) + x % 5 + x ** 3
      if (b, b) { NEG(y) }
    }`)
    const n = 257
    const x = Int32Array.from({ length: n }, (_, i) => ((i * 7919) % 2001) - 1000)
    const y = Int32Array.from({ length: n }, (_, i) => i * 31 - 4000)
    const b = Uint8Array.from({ length: n }, (_, i) => (i % 3 === 0 ? 1 : 0)),
      c = Uint8Array.from({ length: n }, (_, i) => i % 2)
    const wants = Array.from({ length: n }, (_, i) => m.f!(b[i] === 1, c[i] === 1, x[i], y[i]))
    const k = await gpuMap(m.f!, { batch: n, perItem: ['x'], gpu })
    const [x0, y0, b0, c0] = [x.slice(), y.slice(), b.slice(), c.slice()]
    await k(b, c, x, y)
    for (let i = 0; i < n; i++) {
      expect([b[i] === 1, c[i] === 1, x[i], y[i]]).toEqual(wants[i])
    }
    await k.inverse(b, c, x, y)
    expect([b, c, x, y]).toEqual([b0, c0, x0, y0])
  })

  it('a fixed-point type on i32: + and − agree with the cpu backend bit for bit, forward then inverse is exact', async () => {
    const r = testRegistry()
    r.registerNumberSystem(fixedPoint({ name: 'q16', fractionBits: 16, integerBits: 14 }))
    const m = cpu(
      `fn f(acc: q16, x: q16, y: q16, n: i32, t: f32) {
      acc += x - y
      acc -= convert(n)
      acc += convert(sin(t))
      SWAP(x, y)
    }`,
      r,
    )
    const n = 300
    const acc = Float64Array.from({ length: n }, (_, i) => (i - 150) * 1.25 + 2 ** -16)
    const x = Float64Array.from({ length: n }, (_, i) => Math.sin(i) * 100)
    const y = Float64Array.from({ length: n }, (_, i) => Math.cos(i) * 1000)
    const ns = Int32Array.from({ length: n }, (_, i) => (i % 17) - 8)
    const t = uniform(n, 9, -3, 3)
    const k = await gpuMap(m.f!, { batch: n, gpu })
    expect(k.roles).toEqual({ acc: 'item', x: 'item', y: 'item', n: 'shared', t: 'shared' })
    const k2 = await gpuMap(m.f!, { batch: n, perItem: ['n', 't'], gpu })
    const before = [acc.slice(), x.slice(), y.slice()]
    const grid = (v: number) => Math.round(v * 65536) / 65536
    await k2(acc, x, y, ns, t)
    for (let i = 0; i < n; i++) {
      // exact parts: + and − of grid values and the i32 conversion; sin is the GPU's, rounded to the grid
      const exact = grid(before[0]![i]!) + grid(before[1]![i]!) - grid(before[2]![i]!) - ns[i]!
      expect(Math.abs(acc[i]! - exact - Math.sin(t[i]!))).toBeLessThan(2 ** -10)
      expect(acc[i]! * 65536).toBe(Math.round(acc[i]! * 65536)) // on the grid
      expect(x[i]).toBe(grid(before[2]![i]!))
    }
    await k2.inverse(acc, x, y, ns, t)
    // forward then inverse: bit for bit the (grid-rounded) inputs
    for (let i = 0; i < n; i++) {
      expect(acc[i]).toBe(grid(before[0]![i]!))
      expect(x[i]).toBe(grid(before[1]![i]!))
      expect(y[i]).toBe(grid(before[2]![i]!))
    }
    // and the exact operations alone agree with the cpu backend bit for bit
    const m2 = cpu('fn g(acc: q16, x: q16, y: q16, n: i32) { acc += x - y; acc -= convert(n); NEG(x) }', r)
    const k3 = await gpuMap(m2.g!, { batch: n, perItem: ['n', 'y'], gpu })
    const a3 = before[0]!.slice(),
      x3 = before[1]!.slice(),
      y3 = before[2]!.slice()
    await k3(a3, x3, y3, ns)
    for (let i = 0; i < n; i++)
      expect([a3[i], x3[i]]).toEqual(m2.g!(before[0]![i], before[1]![i], before[2]![i], ns[i]).slice(0, 2))
  })

  it('the gradient of a fixed-point parameter (f64 in the adjoint) is rejected with the reason', async () => {
    const r = testRegistry()
    r.registerNumberSystem(fixedPoint({ name: 'q16', fractionBits: 16, integerBits: 14 }))
    const m = cpu('fn f(acc: q16, x: q16) { acc += x }', r)
    const k = await gpuMap(m.f!, { batch: 2, perItem: ['x'], gpu, adjoint: () => adjointOf(m.f!) })
    await expect(k.gradient([new Float64Array(2), new Float64Array(2)], { loss: 'acc' })).rejects.toThrowError(
      /per-item f32 scalar/,
    )
    expect(() => k.gradientWgsl()).toThrowError(/gradient of `acc` \(q16\) is f64.*WGSL has no 64-bit floats/)
  })

  it('a fixed-point overflow is a run-time error, and the arrays are left as they were', async () => {
    const r = testRegistry()
    r.registerNumberSystem(fixedPoint({ name: 'q16', fractionBits: 16, integerBits: 14 }))
    const m = cpu('fn f(acc: q16, x: q16) { acc += x }', r)
    const k = await gpuMap(m.f!, { batch: 4, perItem: ['x'], gpu })
    const acc = new Float64Array([1, 2, 16000, 3]),
      x = new Float64Array([1, 1, 1000, 1])
    await expect(k(acc, x)).rejects.toThrowError(/q16 overflow.*item 2 of 4/)
    expect(acc).toEqual(new Float64Array([1, 2, 16000, 3]))
  })
})

describe.skipIf(!gpu)('the mapped kernel API', () => {
  it('a user primitive with a WGSL lowering runs on the GPU', async () => {
    const r = testRegistry()
    r.registerPrimitive({
      specificationVersion: 'v1',
      name: 'cube',
      kind: 'pure',
      arity: 1,
      evaluate: (x) => x * x * x,
      partials: (x) => [3 * x * x],
      // the derivative as a Tenet expression, so the adjoint is straight-line code the GPU can run
      partialExprs: ([x]) => [
        {
          kind: 'binary',
          op: '*',
          left: { kind: 'num', value: 3, isFloat: true },
          right: { kind: 'binary', op: '*', left: x!, right: x! },
        },
      ],
      emit: { cpu: (x) => `((${x}) ** 3)`, wgsl: (x) => `((${x}) * (${x}) * (${x}))` },
    })
    const m = cpu('fn f(y: f32, x: f32) { y += cube(x) }', r)
    const x = Float32Array.from([1, 2, -3, 0.5])
    const k = await gpuMap(m.f!, { batch: 4, perItem: ['x'], gpu, adjoint: adjointOf(m.f!) })
    const [y] = await k(new Float32Array(4), x)
    expect(y).toEqual(Float32Array.from([1, 8, -27, 0.125]))
    const g = await k.gradient([new Float32Array(4), x], { loss: 'y' })
    expect(g.gradient[1]).toEqual(Float32Array.from([3, 12, 27, 0.75]))
  })

  it('a failed run-time check throws the same error kind as the cpu backend, naming the item', async () => {
    const m = cpu('fn f(a: i32[], i: i32) { a[i] += 1 }')
    const k = await gpuMap(m.f!, { batch: 3, perItem: ['a', 'i'], gpu })
    const a = new Int32Array(6)
    const err = await k(a, Int32Array.from([0, 2, 1])).catch((e: unknown) => e)
    expect(InvertibilityError.isInstance(err)).toBe(true)
    expect((err as InvertibilityError).code).toBe('runtime/out-of-bounds')
    expect((err as Error).message).toMatch(/index 2 is out of bounds for `a`.*item 1 of 3/)
    expect(a).toEqual(new Int32Array(6))
    expect(() => m.f!(new Int32Array(2), 2)).toThrowError(/out of bounds/)
  })

  it('resident buffers: several calls without copies, then one read', async () => {
    const m = cpu('fn f(y: f32, x: f32) { y += x * 2.0 }')
    const k = await gpuMap(m.f!, { batch: 5, perItem: ['x'], gpu })
    const x = Float32Array.from([1, 2, 3, 4, 5])
    const res = k.resident(new Float32Array(5), x)
    await k.run(res)
    await k.run(res)
    await k.run(res)
    await k.inverse.run(res)
    const [y, xs] = await res.read()
    expect(y).toEqual(Float32Array.from([4, 8, 12, 16, 20]))
    expect(xs).toEqual(x)
    res.release()
  })

  it('jacobian: per-item rows for per-item inputs, summed rows for shared ones', async () => {
    const m = cpu('fn r(y: f32[], x: f32[], a: f32) { y[0] += x[0] * x[1]; y[1] += a * x[0] * x[0] }')
    const n = 3
    const x = Float32Array.from([1, 2, 3, 4, 5, 6])
    const k = await gpuMap(m.r!, { batch: n, perItem: ['y', 'x'], gpu, adjoint: adjointOf(m.r!) })
    const J = await k.jacobian([new Float32Array(2 * n), x, 0.5], { outputs: ['y'] })
    expect(J.rows).toBe(2)
    // item i: rows (∂y0/∂x, ∂y1/∂x) = ((x1, x0), (2a·x0, 0))
    const jx = J.jacobian[1]!
    for (let i = 0; i < n; i++) {
      const [x0, x1] = [x[2 * i]!, x[2 * i + 1]!]
      expect(Array.from(jx.subarray(4 * i, 4 * i + 4))).toEqual([x1, x0, 2 * 0.5 * x0, 0])
    }
    // shared a: row 0 gets 0, row 1 gets Σ x0²
    expect(Array.from(J.jacobian[2]!)).toEqual([0, 1 + 9 + 25])
    expect(J.jacobian[0]).not.toBeNull()
  })

  it('checks the roles: a written parameter cannot be shared; unknown names get suggestions', async () => {
    const m = cpu('fn f(y: f32, x: f32) { y += x }')
    await expect(gpuMap(m.f!, { batch: 2, shared: ['y'], gpu })).rejects.toThrowError(
      /`y` cannot be shared: `f` writes it/,
    )
    await expect(gpuMap(m.f!, { batch: 2, perItem: ['xx'], gpu })).rejects.toThrowError(/no parameter `xx`/)
    const k = await gpuMap(m.f!, { batch: 2, gpu })
    await expect(k(new Float32Array(3), 1)).rejects.toThrowError(/needs 2 \(one per item\)/)
    await expect(k.gradient([new Float32Array(2), 1], { loss: 'y' })).rejects.toThrowError(/without its adjoint/)
  })
})
