import { describe, expect, it } from 'vitest'
import { finiteDifference } from '@tenet/testing'
import { checkpointedRun, type Chain } from './drivers.js'
import { checkpointedGradient, type ArrayStep } from './gradient.js'
import { storeAllSchedule } from './simple.js'

/** dst[i] += src[i] + 0.1·sin(0.05·k·src[i+1])·src[i−1] (periodic), a nonlinear step-dependent chain. */
const nonlinear: ArrayStep = {
  forward(dst, src, k) {
    const n = src.length
    for (let i = 0; i < n; i++)
      dst[i]! += src[i]! + 0.1 * Math.sin(0.05 * k * src[(i + 1) % n]!) * src[(i + n - 1) % n]!
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
  let s = s0.slice()
  for (let i = 1; i <= T; i++) {
    const d = new Float64Array(s.length)
    step.forward(d, s, i)
    s = d
  }
  return s
}

const vector = (n: number, f: (i: number) => number) => Float64Array.from({ length: n }, (_, i) => f(i))

/** The same gradient through the schedule interpreter (`runSchedule` over `storeAllSchedule`). */
function interpreted(step: ArrayStep, s0: Float64Array, T: number, seed: Float64Array): Float64Array {
  const n = s0.length
  const chain: Chain<Float64Array> = {
    allocState: () => new Float64Array(n),
    forward: (i, dst, src) => step.forward(dst, src, i),
    clearState: (s) => s.fill(0),
    allocGradient: () => new Float64Array(n),
    clearGradient: (g) => g.fill(0),
    adjoint: (i, src, dstBar, srcBar) => step.vjp(srcBar, src, dstBar, i),
  }
  return checkpointedRun(chain, storeAllSchedule({ steps: T }), s0, (_, bar) => bar.set(seed)).gradient!
}

describe('store-all without the schedule interpreter', () => {
  const n = 17,
    T = 40
  const s0 = vector(n, (i) => Math.cos(i) + 0.2)
  const seed = vector(n, (i) => Math.sin(i / 3))

  it('gives the interpreted schedule’s gradient to the last bit, the plain chain’s s_T, and its cost log', () => {
    const r = checkpointedGradient(nonlinear, s0, T, { schedule: 'store-all', seed })
    expect([...r.gradient]).toEqual([...interpreted(nonlinear, s0, T, seed)])
    expect([...r.final]).toEqual([...runPlain(nonlinear, s0, T)])
    expect(r.cost).toMatchObject({ forward: T, adjoint: T, uncompute: 0, stores: 0, peakStates: T + 1 })
  })

  it('equals central differences', () => {
    const g = checkpointedGradient(nonlinear, s0, T, { schedule: 'store-all', seed }).gradient
    for (const j of [0, 5, 16]) {
      const loss = ([v]: number[]) => {
        const s = s0.slice()
        s[j] = v!
        return runPlain(nonlinear, s, T).reduce((acc, x, i) => acc + x * seed[i]!, 0)
      }
      expect(g[j]).toBeCloseTo(finiteDifference(loss, [s0[j]!], 1e-6)[0]!, 7)
    }
  })

  it('reuses its state buffer across runs of other sizes, and after a run that threw, with equal results', () => {
    const want = checkpointedGradient(nonlinear, s0, T, { schedule: 'store-all', seed }).gradient
    // a longer and a shorter chain in between leave other values in the kept buffer
    checkpointedGradient(
      nonlinear,
      vector(2 * n, (i) => i),
      2 * T,
      {
        schedule: 'store-all',
        seed: vector(2 * n, () => 1),
      },
    )
    expect([...checkpointedGradient(nonlinear, s0, T, { schedule: 'store-all', seed }).gradient]).toEqual([...want])
    const throws: ArrayStep = {
      ...nonlinear,
      forward(dst, src, k) {
        nonlinear.forward(dst, src, k)
        if (k === T - 3) throw new Error('step failed')
      },
    }
    expect(() => checkpointedGradient(throws, s0, T, { schedule: 'store-all', seed })).toThrow('step failed')
    expect([...checkpointedGradient(nonlinear, s0, T, { schedule: 'store-all', seed }).gradient]).toEqual([...want])
  })

  it('a step that runs a store-all chain itself gets a buffer of its own', () => {
    // F(src) = src + G(src) where G's value is the final state of an inner 3-step chain: its
    // forward runs checkpointedGradient (store-all) while the outer run holds its states
    const inner = (src: Float64Array) =>
      checkpointedGradient(nonlinear, src, 3, { schedule: 'store-all', seed: src }).final
    const nested: ArrayStep = {
      forward(dst, src) {
        const f = inner(src)
        for (let i = 0; i < dst.length; i++) dst[i]! += 0.5 * f[i]!
      },
      vjp() {},
    }
    const r = checkpointedGradient(nested, s0, 5, { schedule: 'store-all', seed })
    expect([...r.final]).toEqual([...runPlain(nested, s0, 5)])
  })

  it('hands an uncomputing adjoint the stored output and counts no recompute', () => {
    const seen: number[] = []
    const step: ArrayStep = {
      forward: nonlinear.forward,
      vjp() {
        throw new Error('vjp should not run')
      },
      vjpRecomputes: true,
      vjpUncompute(srcBar, src, dstBar, dst, i) {
        // dst is s_i as the forward sweep left it
        const want = new Float64Array(src.length)
        nonlinear.forward(want, src, i)
        expect([...dst]).toEqual([...want])
        seen.push(i)
        nonlinear.vjp(srcBar, src, dstBar, i)
      },
    }
    const r = checkpointedGradient(step, s0, T, { schedule: 'store-all', seed })
    expect(seen).toEqual(Array.from({ length: T }, (_, k) => T - k))
    expect(r.cost.adjointForward).toBe(0)
    expect([...r.gradient]).toEqual([...interpreted(nonlinear, s0, T, seed)])
  })
})
