import { describe, expect, it } from 'vitest'
import { createRegistry, parse } from '@tenet/ir'
import { compileModule } from '@tenet/reversible'
import { cpuBackend } from '@tenet/backend-cpu'
import { wasmBackend } from '@tenet/backend-wasm'
import {
  checkGrad,
  grad,
  gradient,
  hessian,
  hvp,
  besselSource,
  besselReciprocalSource,
  graphEmbeddingSource,
  graphEmbeddingArgs,
} from './index.js'

const registry = () => createRegistry().registerBackend(cpuBackend).registerBackend(wasmBackend)
const compile = (text: string, backend: string, checks = true) =>
  compileModule(parse({ text, name: 'test' }), { registry: registry(), backend, checks })

describe('automatic differentiation runs on wasm', () => {
  it('J₂(1.0) and its derivative (the paper figures)', () => {
    for (const [src, checks] of [
      [besselSource, true],
      [besselSource, false],
      [besselReciprocalSource, true],
      [besselReciprocalSource, false],
    ] as const) {
      const m = compile(src, 'wasm', checks)
      for (const mode of ['auto', 'reverse'] as const) {
        const [, , dz] = gradient(m.ibesselj!, [0, 2, 1.0], { loss: 0, mode }) as number[]
        expect(Math.abs(dz! - 0.2102436)).toBeLessThan(1e-7)
      }
    }
  })

  it('the Bessel batch gradient (map-forward, its tangent map run two z at a time in f64x2 lanes) equals the cpu backend’s bit for bit and the exact derivative', () => {
    const src = `${besselSource}
fn ibesselj_batch(out: f64[], nu: i32, z: f64[]) {
  for i in 0..len(z) { ibesselj(out[i], nu, z[i]) }
}
fn ibesselj_sum(loss: f64, out: f64[], nu: i32, z: f64[]) {
  ibesselj_batch(out, nu, z)
  for i in 0..len(out) { loss += identity(out[i]) }
}`
    const [w, c] = [compile(src, 'wasm', false), compile(src, 'cpu', false)]
    const zs = Float64Array.from({ length: 9 }, (_, i) => 0.15 + 0.37 * i)
    for (const nu of [0, 2, 3]) {
      const gw = grad(w.ibesselj_sum!, { loss: 0 })
      expect(gw.plan.program).toBe('map-forward')
      const dw = gw(0, new Float64Array(9), nu, zs)[3] as Float64Array
      const dc = grad(c.ibesselj_sum!, { loss: 0 })(0, new Float64Array(9), nu, zs)[3] as Float64Array
      expect(Array.from(dw)).toEqual(Array.from(dc))
      // against J′_ν = (J_{ν−1} − J_{ν+1}) / 2 by the full series (the loop's atol 1e-8 truncates it)
      const J = (n: number, z: number): number => {
        if (n < 0) return (n % 2 === 0 ? 1 : -1) * J(-n, z)
        let t = (z / 2) ** n
        for (let k = 2; k <= n; k++) t /= k
        let sum = t
        for (let k = 1; k < 60; k++) sum += t *= -(z * z) / 4 / (k * (k + n))
        return sum
      }
      for (let i = 0; i < zs.length; i++)
        expect(Math.abs(dw[i]! - (J(nu - 1, zs[i]!) - J(nu + 1, zs[i]!)) / 2), `ν=${nu} z=${zs[i]}`).toBeLessThan(1e-7)
    }
  })

  it('the graph-embedding gradient equals the cpu backend’s, its Hessian bit for bit (f64x2 lane pairs included)', () => {
    const k = 4
    const x = Float64Array.from({ length: 10 * k }, (_, i) => Math.sin(1.3 * i) + 0.2 * i)
    const [w, c] = [compile(graphEmbeddingSource, 'wasm', false), compile(graphEmbeddingSource, 'cpu', false)]
    const gw = grad(w.embedding_loss!, { loss: 0 })(...graphEmbeddingArgs(x, k))[1] as Float64Array
    const gc = grad(c.embedding_loss!, { loss: 0 })(...graphEmbeddingArgs(x, k))[1] as Float64Array
    for (let i = 0; i < gw.length; i++) expect(gw[i]).toBeCloseTo(gc[i]!, 12)
    // and against finite differences of the wasm-compiled loss itself, with run-time checks on
    const checked = compile(graphEmbeddingSource, 'wasm', true)
    const fd = checkGrad(checked.embedding_loss!, graphEmbeddingArgs(x, k), { loss: 0, atol: 1e-6 })
    expect(fd.ok, JSON.stringify(fd.worst)).toBe(true)
    const hw = hessian(w.embedding_loss!, graphEmbeddingArgs(x, k), { loss: 0, wrt: [1] })
    const hc = hessian(c.embedding_loss!, graphEmbeddingArgs(x, k), { loss: 0, wrt: [1] })
    for (let i = 0; i < hw.length; i++) expect(hw[i]).toBe(hc[i])
  })

  it('keeps its work arrays in wasm memory: repeated calls, new lengths and a wide Hessian that grows the memory', () => {
    const [w, c] = [compile(graphEmbeddingSource, 'wasm', false), compile(graphEmbeddingSource, 'cpu', false)]
    const gw = grad(w.embedding_loss!, { loss: 0 }),
      gc = grad(c.embedding_loss!, { loss: 0 })
    for (const k of [3, 3, 5, 2]) {
      const x = Float64Array.from({ length: 10 * k }, (_, i) => Math.cos(0.7 * i + k))
      const args = graphEmbeddingArgs(x, k)
      const a = (gw(...args)[1] as Float64Array).slice(),
        b = gc(...args)[1] as Float64Array
      expect(a.length).toBe(10 * k)
      for (let i = 0; i < a.length; i++) expect(a[i]).toBeCloseTo(b[i]!, 12)
      expect(gw.lastLoss).toBeCloseTo(gc.lastLoss, 12)
      // the caller's arrays are left as passed
      expect(Array.from(args[2] as Float64Array).every((v) => v === 0)).toBe(true)
    }
    // 40 directions at once: the tangent arrays outgrow the first memory pages
    const k = 4
    const x = Float64Array.from({ length: 10 * k }, (_, i) => Math.sin(0.9 * i))
    for (const width of [40, 7]) {
      const hw = hessian(w.embedding_loss!, graphEmbeddingArgs(x, k), { loss: 0, wrt: [1], width })
      const hc = hessian(c.embedding_loss!, graphEmbeddingArgs(x, k), { loss: 0, wrt: [1], width: 8 })
      for (let i = 0; i < hw.length; i++) expect(hw[i]).toBe(hc[i])
      // and into a caller's array, twice (the second call replays the first one's plan)
      const out = new Float64Array(hw.length).fill(Number.NaN)
      for (let t = 0; t < 2; t++) {
        expect(hessian(w.embedding_loss!, graphEmbeddingArgs(x, k), { loss: 0, wrt: [1], width, out })).toBe(out)
        for (let i = 0; i < hw.length; i++) expect(out[i]).toBe(hc[i])
      }
    }
  })

  it('zeroes the array gradients (f64 and f32 in one block) on every call, also when a call grows the memory', () => {
    const text = `fn f(out: f64, x: f64[], y: f32[], z: f64[], n: i32) {
      t: f64[] <- zeros(n)
      for i in 0..len(x) { out += x[i] * f64(y[i]) }
      out += z[0] * z[0] * z[1]
      t -> zeros(n)
    }`
    const [w, c] = [compile(text, 'wasm', false), compile(text, 'cpu', false)]
    for (const fuse of [true, false]) {
      const gw = grad(w.f!, { loss: 0, fuse }),
        gc = grad(c.f!, { loss: 0, fuse })
      // the third call's ancilla of 300 000 doubles grows the memory during the call
      for (const [len, n] of [
        [3, 0],
        [3, 5],
        [5, 300_000],
        [5, 1],
        [2, 0],
      ] as const) {
        const args = () => [
          0,
          Float64Array.from({ length: len }, (_, i) => i + 1),
          Float32Array.from({ length: len }, (_, i) => 0.5 * i - 1),
          Float64Array.from([1.5, -2, 3]),
          n,
        ]
        const a = gw(...args()),
          b = gc(...args())
        for (const i of [1, 2, 3]) {
          expect((a[i] as Float64Array).length).toBe((b[i] as Float64Array).length)
          expect(Array.from(a[i] as Float64Array)).toEqual(Array.from(b[i] as Float64Array))
        }
        expect(a[2]).toBeInstanceOf(Float32Array)
      }
    }
  })

  it('copies short and long arguments in and zeroes short and long gradient blocks on every call (values that change)', () => {
    const text = `fn f(out: f64, x: f64[], y: f64[]) {
      for i in 0..len(x) { out += x[i] * x[i] * y[i % len(y)] }
    }`
    const [w, c] = [compile(text, 'wasm', false), compile(text, 'cpu', false)]
    const gw = grad(w.f!, { loss: 0 }),
      gc = grad(c.f!, { loss: 0 })
    // lengths below and above the driver's short-array threshold, each called three times
    for (const [nx, ny] of [
      [2, 1],
      [2, 1],
      [2, 1],
      [20, 3],
      [20, 3],
      [20, 3],
      [3, 40],
      [3, 40],
    ] as const)
      for (const shift of [0, 1, 2]) {
        const x = Float64Array.from({ length: nx }, (_, i) => Math.sin(i + shift + nx))
        const y = Float64Array.from({ length: ny }, (_, i) => Math.cos(2 * i - shift))
        const a = gw(0, x, y),
          b = gc(0, x, y)
        expect(Array.from(a[1] as Float64Array)).toEqual(Array.from(b[1] as Float64Array))
        expect(Array.from(a[2] as Float64Array)).toEqual(Array.from(b[2] as Float64Array))
        expect(gw.lastLoss).toBe(gc.lastLoss)
      }
  })

  it('takes fresh views of empty gradients after the memory grew (by another driver or during the call)', () => {
    const w = compile(
      'fn f(out: f64, x: f64[], n: i32) { t: f64[] <- zeros(n)\n for i in 0..len(x) { out += x[i] * x[i] }\n t -> zeros(n) }',
      'wasm',
      false,
    )
    const g1 = grad(w.f!, { loss: 0 }),
      g2 = grad(w.f!, { loss: 0 })
    expect(g1(0, new Float64Array(0), 0)[1]).toEqual(new Float64Array(0))
    // another driver of the same module grows the memory: g1's views detach
    expect((g2(0, new Float64Array(1_000_000), 0)[1] as Float64Array).length).toBe(1_000_000)
    expect(g1(0, new Float64Array(0), 0)[1]).toEqual(new Float64Array(0))
    // a call whose ancilla of 3·10⁶ doubles grows the memory, then a plain one
    expect(g1(0, new Float64Array(0), 3_000_000)[1]).toEqual(new Float64Array(0))
    expect(g1(0, new Float64Array(0), 0)[1]).toEqual(new Float64Array(0))
    expect(Array.from(g1(0, Float64Array.from([1, 2]), 0)[1] as Float64Array)).toEqual([2, 4])
  })

  it('gives its wasm memory back on release(), as gradient() and checkGrad() do after their one call', () => {
    const w = compile('fn dot(r: f64, x: f64[], y: f64[]) { for i in 0..len(x) { r += x[i] * y[i] } }', 'wasm', false)
    const x = Float64Array.from({ length: 1000 }, (_, i) => i),
      y = Float64Array.from({ length: 1000 }, (_, i) => 1 - i)
    const place = () => {
      const g = grad(w.dot!, { loss: 0 })
      g(0, x, y)
      const at = (g.buffers[2] as Float64Array).byteOffset
      g.release()
      return at
    }
    // a released driver's blocks are reused by the next one (first fit), so repeated one-off
    // gradients stay in the same memory
    const first = place()
    for (let t = 0; t < 5; t++) expect(place()).toBe(first)
    for (let t = 0; t < 5; t++)
      expect(Array.from(gradient(w.dot!, [0, x, y], { loss: 0 })[1] as Float64Array)).toEqual(Array.from(y))
    expect(place()).toBe(first)
    // a released gradient function still works: it allocates again
    const g = grad(w.dot!, { loss: 0 })
    g(0, x, y)
    g.release()
    expect(Array.from(g(0, x, y)[2] as Float64Array)).toEqual(Array.from(x))
  })

  it('gradients of long arrays, whose first allocations grow the memory, equal the cpu backend’s', () => {
    const text = 'fn dot(r: f64, x: f64[], y: f64[]) { for i in 0..len(x) { r += x[i] * y[i] } }'
    const [w, c] = [compile(text, 'wasm', false), compile(text, 'cpu', false)]
    const x = Float64Array.from({ length: 3000 }, (_, i) => i),
      y = Float64Array.from({ length: 3000 }, (_, i) => 2 * i + 1)
    for (const fuse of [true, false]) {
      const gw = grad(w.dot!, { loss: 0, fuse })(0, x, y),
        gc = grad(c.dot!, { loss: 0, fuse })(0, x, y)
      expect(Array.from(gw[1] as Float64Array)).toEqual(Array.from(gc[1] as Float64Array))
      expect(Array.from(gw[2] as Float64Array)).toEqual(Array.from(gc[2] as Float64Array))
    }
  })

  it('a Hessian after a failed sweep that grew the memory is right', () => {
    const text = `fn f(out: f64, x: f64[], k: i32, n: i32) {
      a: f64[] <- zeros(n)
      out += x[0] * x[1] * x[2] + x[k] * x[k]
      a -> zeros(n)
    }`
    const [w, c] = [compile(text, 'wasm', true), compile(text, 'cpu', true)]
    const x = Float64Array.from([1, 2, 3])
    const expected = hessian(c.f!, [0, x, 0, 1], { loss: 0, wrt: [1], width: 1 })
    expect(hessian(w.f!, [0, x, 0, 1], { loss: 0, wrt: [1], width: 1 })).toEqual(expected)
    // a million-element ancilla grows the memory, then x[7] fails
    expect(() => hvp(w.f!, [0, x, 7, 1_000_000], { loss: 0, v: [0, Float64Array.from([0, 0, 1]), 0, 0] })).toThrow(
      /out of bounds/,
    )
    for (let t = 0; t < 2; t++) expect(hessian(w.f!, [0, x, 0, 1], { loss: 0, wrt: [1], width: 1 })).toEqual(expected)
  })
})
