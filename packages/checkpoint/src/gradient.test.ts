import { describe, expect, it } from 'vitest'
import { finiteDifference } from '@tenet/testing'
import { bennettGradientSchedule, bennettSchedule } from './bennett.js'
import { binomialSchedule } from './binomial.js'
import { revolveExtraSteps } from './closed-forms.js'
import { costOf } from './cost.js'
import { checkpointedRun, reversibleGradient, type Chain } from './drivers.js'
import { checkpointedGradient, gradientSchedule, type ArrayStep, type GradientScheduleName } from './gradient.js'
import { knillGradientSchedule, knillSchedule } from './knill.js'

const CELLS = 100
const STEPS = 100
const alpha = 1
const h = 1 / CELLS
const dt = (0.25 * h * h) / alpha // λ = dt·α/h² = 1/4, stable

/** 1-D periodic diffusion: dest[i] += src[i] + dt·α·(src[i+1] + src[i−1] − 2·src[i]) / h². */
const diffusion: ArrayStep = {
  forward(dst, src) {
    const n = src.length
    for (let i = 0; i < n; i++) {
      const l = src[(i + n - 1) % n]!
      const r = src[(i + 1) % n]!
      dst[i]! += src[i]! + (dt * alpha * (r + l - 2 * src[i]!)) / (h * h)
    }
  },
  inverse(dst, src) {
    const n = src.length
    for (let i = 0; i < n; i++) {
      const l = src[(i + n - 1) % n]!
      const r = src[(i + 1) % n]!
      dst[i]! -= src[i]! + (dt * alpha * (r + l - 2 * src[i]!)) / (h * h)
    }
  },
  vjp(srcBar, _src, dstBar) {
    const n = dstBar.length
    const lam = (dt * alpha) / (h * h)
    for (let j = 0; j < n; j++) {
      srcBar[j]! += (1 - 2 * lam) * dstBar[j]! + lam * (dstBar[(j + n - 1) % n]! + dstBar[(j + 1) % n]!)
    }
  },
}

/** A nonlinear, step-dependent chain: dst[i] += src[i] + 0.1·sin(i_step·src[i+1])·src[i−1]. */
const nonlinear: ArrayStep = {
  forward(dst, src, k) {
    const n = src.length
    for (let i = 0; i < n; i++)
      dst[i]! += src[i]! + 0.1 * Math.sin(0.05 * k * src[(i + 1) % n]!) * src[(i + n - 1) % n]!
  },
  inverse(dst, src, k) {
    const n = src.length
    for (let i = 0; i < n; i++)
      dst[i]! -= src[i]! + 0.1 * Math.sin(0.05 * k * src[(i + 1) % n]!) * src[(i + n - 1) % n]!
  },
  vjp(srcBar, src, dstBar, k) {
    const n = src.length
    for (let i = 0; i < n; i++) {
      const r = (i + 1) % n
      const l = (i + n - 1) % n
      const g = dstBar[i]!
      srcBar[i]! += g
      srcBar[r]! += g * 0.1 * 0.05 * k * Math.cos(0.05 * k * src[r]!) * src[l]!
      srcBar[l]! += g * 0.1 * Math.sin(0.05 * k * src[r]!)
    }
  },
}

function runPlain(step: ArrayStep, s0: Float64Array, T: number): Float64Array {
  let s = Float64Array.from(s0)
  for (let i = 1; i <= T; i++) {
    const d = new Float64Array(s.length)
    step.forward(d, s, i)
    s = d
  }
  return s
}

function lcg(seed: number): () => number {
  let x = seed >>> 0
  return () => {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0
    return x / 2 ** 32
  }
}

function randomVector(n: number, seed: number): Float64Array {
  const rand = lcg(seed)
  return Float64Array.from({ length: n }, () => rand() * 2 - 1)
}

const dot = (a: Float64Array, b: Float64Array): number => a.reduce((acc, x, i) => acc + x * b[i]!, 0)

/** ∂(w · s_T)/∂s0[j], by central differences (`finiteDifference` of @tenet/testing) with step `eps`. */
function partial(step: ArrayStep, s0: Float64Array, T: number, w: Float64Array, j: number, eps: number): number {
  const loss = ([v]: number[]) => {
    const s = Float64Array.from(s0)
    s[j] = v!
    return dot(w, runPlain(step, s, T))
  }
  return finiteDifference(loss, [s0[j]!], eps)[0]!
}

describe('checkpointedGradient on a 1-D diffusion chain (100 cells, periodic, 100 steps)', () => {
  const s0 = Float64Array.from({ length: CELLS }, (_, i) => Math.exp(-(((i - 40) / 8) ** 2)))
  const w = randomVector(CELLS, 7) // L = w · s_T, so ∂L/∂s_T = w
  const runs = {
    'store-all': checkpointedGradient(diffusion, s0, STEPS, { schedule: 'store-all', seed: w }),
    bennett: checkpointedGradient(diffusion, s0, STEPS, { schedule: 'bennett', k: 4, seed: w }),
    binomial: checkpointedGradient(diffusion, s0, STEPS, { schedule: 'binomial', budget: 10, seed: w }),
    knill: checkpointedGradient(diffusion, s0, STEPS, { schedule: 'knill', budget: 9, seed: w }),
    'recompute-all': checkpointedGradient(diffusion, s0, STEPS, { schedule: 'recompute-all', seed: w }),
  }
  const reference = runs['store-all']

  it('gives the same final state and gradient (to 1e-12; in fact bit for bit) under every schedule', () => {
    const plain = runPlain(diffusion, s0, STEPS)
    for (const [name, run] of Object.entries(runs)) {
      expect(run.final, name).toEqual(plain)
      for (let j = 0; j < CELLS; j++)
        expect(Math.abs(run.gradient[j]! - reference.gradient[j]!)).toBeLessThanOrEqual(1e-12)
      expect(run.gradient, name).toEqual(reference.gradient)
    }
  })

  it('equals finite differences', () => {
    for (const j of [0, 13, 40, 41, 77, 99]) {
      expect(reference.gradient[j]!).toBeCloseTo(partial(diffusion, s0, STEPS, w, j, 1e-3), 9)
    }
  })

  it('the cost logs show the memory and recomputation each schedule used', () => {
    const c = Object.fromEntries(Object.entries(runs).map(([k, r]) => [k, r.cost]))
    for (const [name, cost] of Object.entries(c)) {
      expect(cost.adjoint, name).toBe(STEPS)
      expect(cost.wallTimeMs).toBeGreaterThanOrEqual(0)
      // The driver's counts are the schedule's (a plain vjp recomputes nothing).
      const { schedule: _s, wallTimeMs: _w, adjointForward, ...counts } = cost
      expect(adjointForward, name).toBe(0)
      expect(counts).toEqual(
        costOf(
          gradientSchedule(STEPS, {
            schedule: name as GradientScheduleName,
            k: 4,
            budget: name === 'binomial' ? 10 : 9,
          }),
        ),
      )
    }
    expect(c['store-all']!).toMatchObject({ forward: 100, uncompute: 0, peakStates: 101, stores: 0 })
    expect(c['recompute-all']!).toMatchObject({ forward: 4951, peakStates: 3 })
    expect(c.binomial!.peakStates).toBeLessThanOrEqual(12)
    expect(c.binomial!.forward).toBe(revolveExtraSteps(100, 10) + 1)
    expect(c.bennett!.uncompute).toBeGreaterThan(0)
    expect(c.bennett!.stores + c.bennett!.restores).toBe(0)
    expect(c.bennett!.peakStates).toBeLessThan(20)
    expect(c.knill!.peakStates).toBeLessThanOrEqual(10)
    // Knill is the optimal pebbling: with Bennett's memory it never needs more steps.
    const pebbles = costOf(bennettSchedule({ steps: STEPS, k: 4 })).peakStates - 1
    const knillForward = costOf(knillSchedule({ steps: STEPS, pebbles }))
    const bennettForward = costOf(bennettSchedule({ steps: STEPS, k: 4 }))
    expect(knillForward.peakStates).toBeLessThanOrEqual(bennettForward.peakStates)
    expect(knillForward.forward + knillForward.uncompute).toBeLessThan(
      bennettForward.forward + bennettForward.uncompute,
    )
  })
})

describe('checkpointedGradient on a nonlinear chain', () => {
  const n = 12
  const T = 37
  const s0 = randomVector(n, 3)
  const w = randomVector(n, 11)
  const names: GradientScheduleName[] = ['store-all', 'bennett', 'knill', 'binomial', 'recompute-all']

  it('every schedule agrees with finite differences (product of the Jacobians at the right states)', () => {
    const ref = checkpointedGradient(nonlinear, s0, T, { schedule: 'store-all', seed: w })
    for (const j of [0, 5, 11]) {
      expect(ref.gradient[j]!).toBeCloseTo(partial(nonlinear, s0, T, w, j, 1e-6), 7)
    }
    for (const schedule of names) {
      for (const k of [2, 3, 5]) {
        const r = checkpointedGradient(nonlinear, s0, T, { schedule, k, budget: schedule === 'knill' ? 7 : 3, seed: w })
        expect(r.gradient, `${schedule} k=${k}`).toEqual(ref.gradient)
        expect(r.final).toEqual(runPlain(nonlinear, s0, T))
      }
    }
  })

  it('does not modify s₀ or the seed', () => {
    const a = Float64Array.from(s0)
    const b = Float64Array.from(w)
    for (const schedule of names) checkpointedGradient(nonlinear, a, T, { schedule, seed: b })
    expect(a).toEqual(s0)
    expect(b).toEqual(w)
  })

  it('works for T = 1 and refuses reverse computing without an inverse', () => {
    for (const schedule of names) {
      const r = checkpointedGradient(nonlinear, s0, 1, { schedule, seed: w })
      const g = new Float64Array(n)
      nonlinear.vjp(g, s0, w, 1)
      expect(r.gradient).toEqual(g)
    }
    const { inverse: _drop, ...noInverse } = nonlinear
    expect(() => checkpointedGradient(noInverse, s0, T, { schedule: 'bennett', seed: w })).toThrow(/inverse/)
    expect(() => checkpointedGradient(noInverse, s0, T, { schedule: 'binomial', seed: w })).not.toThrow()
    expect(() => checkpointedGradient(nonlinear, s0, T, { schedule: 'knill', budget: 3, seed: w })).toThrow(RangeError)
  })
})

describe('generic drivers over user state', () => {
  // Scalar chain x_i = x_{i−1} + 0.3·sin(x_{i−1}), states as one-element objects.
  type Box = { v: number }
  const F = (x: number): number => x + 0.3 * Math.sin(x)
  const dF = (x: number): number => 1 + 0.3 * Math.cos(x)

  it('a Tenet-style adjoint that uncomputes as it propagates (adjointUncomputes)', () => {
    let uncomputeCalls = 0
    let adjointCalls = 0
    const chain: Chain<Box> = {
      allocState: () => ({ v: 0 }),
      forward: (_i, dst, src) => {
        dst.v += F(src.v)
      },
      uncompute: (_i, dst, src) => {
        uncomputeCalls++
        dst.v -= F(src.v)
      },
      allocGradient: () => ({ v: 0 }),
      clearGradient: (g) => {
        g.v = 0
      },
      adjointUncomputes: true,
      adjoint: (_i, src, dstBar, srcBar, dst) => {
        adjointCalls++
        dst!.v -= F(src.v) // run the step backwards …
        srcBar.v += dF(src.v) * dstBar.v // … carrying the gradient
      },
    }
    const T = 27
    const schedule = bennettGradientSchedule({ steps: T, k: 3 })
    let out = 0
    const run = reversibleGradient(chain, schedule, { v: 0.4 }, (sT, sTBar) => {
      out = sT.v
      sTBar.v = 1
    })
    let x = 0.4
    let g = 1
    const xs = [x]
    for (let i = 1; i <= T; i++) xs.push((x = F(x)))
    for (let i = T; i >= 1; i--) g *= dF(xs[i - 1]!)
    expect(out).toBe(x)
    expect(run.gradient!.v).toBeCloseTo(g, 12)
    expect(adjointCalls).toBe(T)
    expect(uncomputeCalls).toBe(run.cost.uncompute)
    expect([...run.states.keys()]).toEqual([0])

    const knill = reversibleGradient(chain, knillGradientSchedule({ steps: T, pebbles: 6 }), { v: 0.4 }, (_s, b) => {
      b.v = 1
    })
    expect(knill.gradient!.v).toBe(run.gradient!.v)
  })

  it('the irreversible driver needs copyState for snapshots and refuses reversible-only runs of it', () => {
    const chain: Chain<Box> = {
      allocState: () => ({ v: 0 }),
      forward: (_i, dst, src) => {
        dst.v += F(src.v)
      },
      allocGradient: () => ({ v: 0 }),
      clearGradient: (g) => {
        g.v = 0
      },
      adjoint: (_i, src, dstBar, srcBar) => {
        srcBar.v += dF(src.v) * dstBar.v
      },
    }
    const schedule = binomialSchedule({ steps: 20, snapshots: 3 })
    expect(() => checkpointedRun(chain, schedule, { v: 0.4 }, (_s, b) => (b.v = 1))).toThrow(/copyState/)
    const withCopy: Chain<Box> = { ...chain, copyState: (d, s) => (d.v = s.v) }
    const run = checkpointedRun(withCopy, schedule, { v: 0.4 }, (_s, b) => (b.v = 1))
    expect(run.cost.peakStates).toBeLessThanOrEqual(5)
    expect(() => reversibleGradient(withCopy, schedule, { v: 0.4 }, (_s, b) => (b.v = 1))).toThrow(/reversible/)
  })
})
