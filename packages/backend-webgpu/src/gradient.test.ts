/**
 * Gradients on the GPU: f then its adjoint (the IR that @tenet/ad generates, lowered like any
 * program) in one kernel. Per-item gradients for per-item parameters; the gradients of shared
 * parameters, written by every item, summed by the tree (default) or by CAS atomics.
 */
import { describe, expect, it } from 'vitest'
import { besselF32Source } from './bessel.js'
import { gradient } from '@tenet/ad'
import { gpuMap } from './index.js'
import { adjointOf, cpu, testGpu } from './test-util.js'

const gpu = await testGpu()

/** A GMM-like per-point term: loss_i = log Σ_j exp(−½‖x_i − μ_j‖²); every point reads all means. */
const gmmSource = `fn term(loss: f32, x: f32[], means: f32[], k: i32) {
  routine {
    s: f32 <- 0.0
    for j in 0..k {
      d2: f32 <- 0.0
      for t in 0..len(x) { d2 += (x[t] - means[j * len(x) + t]) ** 2 }
      s += exp(-0.5 * d2)
      for t in 0..len(x) { d2 -= (x[t] - means[j * len(x) + t]) ** 2 }
      d2 -> 0.0
    }
  }
  loss += log(s)
  ~routine
}`

/** Random numbers in [lo, hi) from a fixed seed. */
function uniform(n: number, seed: number, lo = -1, hi = 1): Float32Array {
  let s = seed >>> 0
  return Float32Array.from({ length: n }, () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0
    return lo + ((s >>> 8) / 2 ** 24) * (hi - lo)
  })
}

describe.skipIf(!gpu)('gradients on webgpu', () => {
  const n = 200,
    d = 2,
    k = 3
  const x = uniform(n * d, 1, -2, 2),
    means = uniform(k * d, 2, -1.5, 1.5)
  // f32 sums do not uncompute to exactly zero: the float tolerance of the checks is for f64, so run unchecked
  const m = cpu(gmmSource, undefined, false)
  const f = m.term!

  // the independent reference, in f64: ∂/∂μ_j Σ_i log Σ_j' e^{−½‖x_i−μ_j'‖²} = Σ_i w_ij (x_i − μ_j)
  const exact = new Float64Array(k * d),
    exactX = new Float64Array(n * d)
  for (let i = 0; i < n; i++) {
    const w = Array.from({ length: k }, (_, j) => {
      let s = 0
      for (let t = 0; t < d; t++) s += (x[i * d + t]! - means[j * d + t]!) ** 2
      return Math.exp(-0.5 * s)
    })
    const tot = w.reduce((a, b) => a + b, 0)
    for (let j = 0; j < k; j++) {
      for (let t = 0; t < d; t++) {
        exact[j * d + t] += (w[j]! / tot) * (x[i * d + t]! - means[j * d + t]!)
        exactX[i * d + t] -= (w[j]! / tot) * (x[i * d + t]! - means[j * d + t]!)
      }
    }
  }
  // the cpu backend's f32 gradient, item by item, summed over the items for the shared means
  const cpuMeans = new Float64Array(k * d)
  for (let i = 0; i < n; i++) {
    const g = gradient(f, [0, x.slice(i * d, (i + 1) * d), means.slice(), k], { loss: 0 })
    const gm = g[2] as Float32Array
    for (let j = 0; j < k * d; j++) cpuMeans[j] += gm[j]!
  }

  it.each(['tree', 'atomic'] as const)(
    'shared means: the %s reduction gives the cpu gradient (GMM-like terms)',
    async (reduction) => {
      const kernel = await gpuMap(f, {
        batch: n,
        perItem: ['loss', 'x'],
        shared: ['means', 'k'],
        adjoint: adjointOf(f),
        gpu,
        checks: false,
      })
      const loss = new Float32Array(n)
      const g = await kernel.gradient([loss, x, means, k], { loss: 'loss', reduction })
      expect(g.reduction).toBe(reduction)
      const gm = g.gradient[2] as Float32Array
      expect(gm).toBeInstanceOf(Float32Array)
      for (let j = 0; j < k * d; j++) {
        expect(Math.abs(gm[j]! - cpuMeans[j]!)).toBeLessThan(2e-4 * (1 + Math.abs(cpuMeans[j]!)))
        expect(Math.abs(gm[j]! - exact[j]!)).toBeLessThan(2e-4 * (1 + Math.abs(exact[j]!)))
      }
      // per-item gradients of the per-item points
      const gx = g.gradient[1] as Float32Array
      expect(gx.length).toBe(n * d)
      for (let i = 0; i < n * d; i++) expect(Math.abs(gx[i]! - exactX[i]!)).toBeLessThan(1e-4)
      expect(g.gradient[3]).toBeNull() // k is an i32
      expect(loss.every((v) => v === 0)).toBe(true) // the caller's arrays are left alone
    },
  )

  it('the tree reduction is deterministic: the same bits on every run', async () => {
    const kernel = await gpuMap(f, {
      batch: n,
      perItem: ['loss', 'x'],
      shared: ['means', 'k'],
      adjoint: adjointOf(f),
      gpu,
      checks: false,
    })
    const a = await kernel.gradient([new Float32Array(n), x, means, k], { loss: 'loss' })
    const b = await kernel.gradient([new Float32Array(n), x, means, k], { loss: 'loss' })
    expect(a.reduction).toBe('tree')
    expect(new Uint32Array((a.gradient[2] as Float32Array).buffer)).toEqual(
      new Uint32Array((b.gradient[2] as Float32Array).buffer),
    )
  })

  it('a shared scalar: the per-item gradients of y += a·x_i are x_i, the shared a gets Σ x_i (both reductions)', async () => {
    const mm = cpu('fn f(y: f32, x: f32, a: f32) { y += a * x }')
    const xs = uniform(1000, 5)
    const kernel = await gpuMap(mm.f!, { batch: 1000, perItem: ['x'], adjoint: adjointOf(mm.f!), gpu })
    expect(kernel.roles).toEqual({ y: 'item', x: 'item', a: 'shared' })
    const sum = xs.reduce((s, v) => s + v, 0)
    for (const reduction of ['tree', 'atomic'] as const) {
      const g = await kernel.gradient([new Float32Array(1000), xs, 0.5], { loss: 'y', reduction })
      expect(g.gradient[1]).toEqual(new Float32Array(1000).fill(0.5))
      expect(Math.abs((g.gradient[2] as number) - sum)).toBeLessThan(1e-3)
    }
  })

  it('a shared array with run-time checks on: both reductions give Σ x_i and n', async () => {
    const mm = cpu('fn f(y: f32, x: f32, w: f32[]) { y += w[0] * x + w[1] * w[1] }')
    const xs = uniform(300, 7)
    const kernel = await gpuMap(mm.f!, { batch: 300, perItem: ['x'], adjoint: adjointOf(mm.f!), gpu })
    const sum = xs.reduce((s, v) => s + v, 0)
    for (const reduction of ['tree', 'atomic'] as const) {
      const g = await kernel.gradient([new Float32Array(300), xs, Float32Array.from([2, 0.5])], {
        loss: 'y',
        reduction,
      })
      const gw = g.gradient[2] as Float32Array
      expect(Math.abs(gw[0]! - sum)).toBeLessThan(1e-3)
      expect(gw[1]).toBe(300)
      expect(g.gradient[1]).toEqual(new Float32Array(300).fill(2))
    }
  })

  it('a batch of 10⁵ Bessel z gives J′_ν(z) at every z', async () => {
    const fb = cpu(besselF32Source, undefined, false).besselj!
    const N = 100_000,
      nu = 2
    const z = Float32Array.from({ length: N }, (_, i) => 0.1 + (i / N) * 4)
    // the device's exp/log: 10⁵ items of 48 of each take tens of seconds on SwiftShader with the
    // precise routines (the GMM tests above run those through gradients)
    const kernel = await gpuMap(fb, {
      batch: N,
      perItem: ['out', 'z'],
      shared: ['nu'],
      adjoint: adjointOf(fb),
      gpu,
      checks: false,
      precise: false,
    })
    const out = new Float32Array(N)
    await kernel(out, nu, z)
    const g = await kernel.gradient([new Float32Array(N), nu, z], { loss: 'out' })
    const gz = g.gradient[2] as Float32Array
    let worst = 0,
      worstValue = 0
    for (let i = 0; i < N; i++) {
      const zi = z[i]!
      worst = Math.max(worst, Math.abs(gz[i]! - besselDerivative(nu, zi)))
      worstValue = Math.max(worstValue, Math.abs(out[i]! - besselJ(nu, zi)))
    }
    expect(worstValue).toBeLessThan(2e-5)
    expect(worst).toBeLessThan(2e-5)
  })
})

/** J_ν(z) by its series in f64 (an independent reference). */
function besselJ(nu: number, z: number): number {
  if (nu < 0) return (nu % 2 === 0 ? 1 : -1) * besselJ(-nu, z)
  let fact = 1
  for (let i = 2; i <= nu; i++) fact *= i
  let s = (z / 2) ** nu / fact,
    out = s
  for (let k = 1; k < 60; k++) {
    s *= -((z * z) / 4) / (k * (k + nu))
    out += s
  }
  return out
}
/** J′_ν = (J_{ν−1} − J_{ν+1}) / 2. */
function besselDerivative(nu: number, z: number): number {
  return 0.5 * (besselJ(nu - 1, z) - besselJ(nu + 1, z))
}
