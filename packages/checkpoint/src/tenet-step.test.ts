import { describe, expect, it } from 'vitest'
import { createRegistry, parse } from '@tenet/ir'
import { compileModule, interpreterBackend } from '@tenet/reversible'
import { cpuBackend } from '@tenet/backend-cpu'
import { checkpointedGradient } from './index.js'
import { finiteDifference } from '@tenet/testing'

const registry = createRegistry().registerBackend(cpuBackend).registerBackend(interpreterBackend)

/** One explicit diffusion step on a periodic 1-D grid, written in Tenet: dest += F(src). */
const diffusionSource = `
fn diffusion(dest: f64[], src: f64[], c: f64) {
  n: i32 <- len(src)
  for i in 0..n {
    dest[i] += src[i] + c * (src[(i + 1) % n] + src[(i + n - 1) % n] - 2.0 * src[i])
  }
  n -> len(src)
}`

function plainChain(s0: Float64Array, T: number, c: number): Float64Array {
  let s = s0.slice()
  const n = s.length
  for (let t = 0; t < T; t++) {
    const d = new Float64Array(n)
    for (let i = 0; i < n; i++) d[i] = s[i]! + c * (s[(i + 1) % n]! + s[(i + n - 1) % n]! - 2 * s[i]!)
    s = d
  }
  return s
}

describe.each(['cpu', 'interpreter'])('a Tenet step under every schedule (%s backend)', (backend) => {
  const m = compileModule(parse(diffusionSource), { registry, backend })
  const step = m.diffusion!
  // 100 cells, 100 steps, dt·α/h² = 0.2 (stable)
  const n = 100,
    T = 100,
    c = 0.2
  const s0 = Float64Array.from({ length: n }, (_, i) => Math.exp(-((i - 40) ** 2) / 50) + 0.1 * Math.sin(i))
  const seed = Float64Array.from({ length: n }, (_, i) => Math.cos(i / 7))
  const loss = (s: Float64Array) => s.reduce((acc, v, i) => acc + v * seed[i]!, 0)

  const runs = {
    'store-all': checkpointedGradient(step, s0, T, { schedule: 'store-all', seed, args: [c] }),
    bennett: checkpointedGradient(step, s0, T, { schedule: 'bennett', k: 4, seed, args: [c] }),
    knill: checkpointedGradient(step, s0, T, { schedule: 'knill', budget: 9, seed, args: [c] }),
    binomial: checkpointedGradient(step, s0, T, { schedule: 'binomial', budget: 6, seed, args: [c] }),
  }

  it('the final state equals the plain chain', () => {
    const ref = plainChain(s0, T, c)
    for (const r of Object.values(runs)) for (let i = 0; i < n; i++) expect(r.final[i]).toBeCloseTo(ref[i]!, 12)
  })

  it('store-all, Bennett (k = 4), Knill and binomial gradients agree to 1e-12 and equal finite differences', () => {
    const ref = runs['store-all'].gradient
    for (const r of Object.values(runs))
      for (let i = 0; i < n; i++) expect(Math.abs(r.gradient[i]! - ref[i]!)).toBeLessThan(1e-12)
    for (const i of [0, 17, 40, 99]) {
      const along = ([v]: number[]) => {
        const s = s0.slice()
        s[i] = v!
        return loss(plainChain(s, T, c))
      }
      expect(ref[i]).toBeCloseTo(finiteDifference(along, [s0[i]!], 1e-6)[0]!, 7)
    }
  })

  it('the cost logs show the memory each schedule used', () => {
    expect(runs['store-all'].cost.peakStates).toBe(T + 1)
    expect(runs.bennett.cost.peakStates).toBeLessThan(20)
    expect(runs.knill.cost.peakStates).toBeLessThanOrEqual(10)
    expect(runs.binomial.cost.peakStates).toBeLessThanOrEqual(6 + 2)
    expect(runs.bennett.cost.uncompute).toBeGreaterThan(0)
    expect(runs.binomial.cost.uncompute).toBe(0)
    expect(runs.binomial.cost.forward).toBeGreaterThan(T)
  })

  it('counts the forward step each checkpointing adjoint recomputes, and none under the reversible schedules', () => {
    // binomial frees s_i before its adjoint, so the Tenet adjoint recomputes it; store-all
    // hands the adjoint the stored s_i, to uncompute
    expect(runs['store-all'].cost.adjointForward).toBe(0)
    expect(runs.binomial.cost.adjointForward).toBe(T)
    // Bennett's and Knill's adjoints get s_i live and uncompute it: no step outside the schedule
    expect(runs.bennett.cost.adjointForward).toBe(0)
    expect(runs.knill.cost.adjointForward).toBe(0)
  })

  it('recompute-all: T(T−1)/2 + 1 forward steps in the schedule, T more inside the adjoints', () => {
    const r = checkpointedGradient(step, s0, 10, { schedule: 'recompute-all', seed, args: [c] })
    expect(r.cost.forward).toBe(45 + 1)
    expect(r.cost.adjointForward).toBe(10)
  })

  it('leaves s₀ and the seed as passed', () => {
    expect(s0[40]).toBe(1 + 0.1 * Math.sin(40))
    expect(seed[0]).toBe(1)
  })
})

describe('a Tenet step compiled without run-time checks', () => {
  const fast = compileModule(parse(diffusionSource), { registry, backend: 'cpu', checks: false }).diffusion!
  const checked = compileModule(parse(diffusionSource), { registry, backend: 'cpu' }).diffusion!
  const n = 60,
    T = 50,
    c = 0.2
  const s0 = Float64Array.from({ length: n }, (_, i) => Math.exp(-((i - 25) ** 2) / 30) + 0.1 * Math.sin(i))
  const seed = Float64Array.from({ length: n }, (_, i) => Math.cos(i / 5))

  it('store-all and binomial skip the recompute (the reduced adjoint reads nothing of s_i) with equal gradients', () => {
    for (const schedule of ['store-all', 'binomial'] as const) {
      const a = checkpointedGradient(fast, s0, T, { schedule, budget: 5, seed, args: [c] })
      const b = checkpointedGradient(checked, s0, T, { schedule, budget: 5, seed, args: [c] })
      expect(a.cost.adjointForward, schedule).toBe(0)
      // (store-all hands even the checked step's adjoint the stored s_i)
      expect(b.cost.adjointForward, schedule).toBe(schedule === 'store-all' ? 0 : T)
      for (let i = 0; i < n; i++) expect(Math.abs(a.gradient[i]! - b.gradient[i]!)).toBeLessThan(1e-13)
    }
    // and against central differences of the plain chain
    const g = checkpointedGradient(fast, s0, T, { schedule: 'store-all', seed, args: [c] }).gradient
    const loss = (s: Float64Array) => s.reduce((acc, v, i) => acc + v * seed[i]!, 0)
    const h = 1e-6
    for (const i of [0, 13, 59]) {
      const plus = s0.slice(),
        minus = s0.slice()
      plus[i]! += h
      minus[i]! -= h
      expect(g[i]).toBeCloseTo((loss(plainChain(plus, T, c)) - loss(plainChain(minus, T, c))) / (2 * h), 7)
    }
  })
})

describe('tenetStep: the aliasing rule on the extra arguments', () => {
  it('an extra array the step writes that shares memory with another extra array is call/overlap', async () => {
    const { tenetStep } = await import('./tenet-step.js')
    const m = compileModule(
      parse({
        text: `fn s(dest: f64[], src: f64[], w: f64[], a: f64[]) {
  for i in 0..len(src) { dest[i] += src[i] * a[0] }
  w[0] += a[1]
}`,
        name: 't',
      }),
      { registry, backend: 'cpu' },
    )
    const a = Float64Array.of(1, 2)
    expect(() => tenetStep(m.s!, [a, a])).toThrow(
      /^arguments 3 \(`w: f64\[\]`\) and 4 \(`a: f64\[\]`\) of `s` share memory, and `s` writes `w`/,
    )
    expect(() => tenetStep(m.s!, [Float64Array.of(0), a])).not.toThrow()
  })
})
