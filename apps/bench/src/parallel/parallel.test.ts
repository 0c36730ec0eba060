import { describe, expect, it } from 'vitest'
import { generateBa } from '../data/ba-data.js'
import { generateGmm } from '../data/gmm-data.js'
import { maxScaledError } from '../math/finite-difference.js'
import { baJacobianPlain } from '../objectives/ba.js'
import { createBaJacobianTenet } from '../tenet/ba.js'
import { createGmmTenet } from '../tenet/gmm.js'
import { directionalCheck, gmmCase } from '../workloads/gmm.js'
import { BA_SHARDS, baRanges, createBaParallel } from './ba.js'
import { createGmmParallel } from './gmm.js'
import { poolSpin } from '../rows/parallel.js'

describe('the thread rows’ pools', () => {
  it('GMM: the same bits call after call and for 1 or 2 workers (spinning or not); the single-thread gradient within 1e-12; finite differences', async () => {
    const inst = generateGmm({ d: 3, k: 4, n: 700, seed: 11 })
    const c = gmmCase(inst)
    const single = createGmmTenet(inst.d, inst.k).gradient(inst)
    const runs: Float64Array[] = []
    for (const [workers, spin] of [
      [1, 0],
      [2, 'auto'],
    ] as const) {
      const p = await createGmmParallel(inst, workers, undefined, spin)
      expect(p.threads).toBe(workers + 1)
      p.warmUp(1)
      for (let r = 0; r < 3; r++) runs.push(p.gradient(inst))
      await p.close()
    }
    for (const g of runs) expect(Array.from(g)).toEqual(Array.from(runs[0]!))
    expect(maxScaledError(runs[0]!, single)).toBeLessThanOrEqual(1e-12)
    expect(directionalCheck(c, runs[0]!).ok).toBe(true)
  })

  it('GMM: new parameters reach the workers (shared memory, written per call)', async () => {
    const inst = generateGmm({ d: 2, k: 3, n: 300, seed: 5 })
    const moved = { ...inst, means: inst.means.map((v) => v + 0.25), alphas: inst.alphas.map((v, i) => v - 0.1 * i) }
    const p = await createGmmParallel(inst, 1)
    const g = p.gradient(moved)
    await p.close()
    expect(maxScaledError(g, createGmmTenet(inst.d, inst.k).gradient(moved))).toBeLessThanOrEqual(1e-12)
    expect(directionalCheck(gmmCase(moved), g).ok).toBe(true)
  })

  it('BA: the Jacobian (weight rows too) is the single-thread one to the bit for 1 or 2 workers, spinning or not, and the plain one within 1e-10', async () => {
    const inst = generateBa({ n: 4, m: 9, p: 1300, seed: 6 })
    const ref = createBaJacobianTenet(inst).run().vals.slice()
    for (const [workers, spin] of [
      [1, 0],
      [2, 0],
      [2, 'auto'],
    ] as const) {
      const p = await createBaParallel(inst, workers, spin)
      p.warmUp(1)
      // (the values start at zero: every value, the weight rows' too, is written by a task)
      const a = p.run().vals.slice()
      const b = p.run().vals.slice()
      await p.close()
      expect(Array.from(a)).toEqual(Array.from(ref))
      expect(Array.from(b)).toEqual(Array.from(ref))
      expect(maxScaledError(a, baJacobianPlain(inst).vals)).toBeLessThanOrEqual(1e-10)
    }
  })

  it('BA: the ranges cover the observations once each, in whole chunks of 256, two at least but for the tapered few at the end', () => {
    for (const p of [1, 255, 256, 1300, 31843, 204472]) {
      const r = baRanges(p)
      expect(r[0]!.i0).toBe(0)
      expect(r.at(-1)!.i1).toBe(p)
      for (let t = 1; t < r.length; t++) expect(r[t]!.i0).toBe(r[t - 1]!.i1)
      for (const { i0, i1 } of r.slice(0, -1)) expect((i1 - i0) % 256).toBe(0)
      // (the bulk: ranges of two chunks at least; sizes never grow towards the end)
      const sizes = r.map(({ i0, i1 }) => i1 - i0)
      for (let t = 1; t < sizes.length; t++) expect(sizes[t]!).toBeLessThanOrEqual(sizes[t - 1]!)
      expect(sizes.filter((z) => z < 512).length).toBeLessThanOrEqual(4)
      expect(r.length).toBeLessThanOrEqual(BA_SHARDS + 6)
    }
    // ba1: 61 ranges of two chunks, then 2, 1, 1, 1 chunks (the last one short); ba2: 70 of 512, then smaller
    expect(baRanges(31843).map(({ i0, i1 }) => Math.ceil((i1 - i0) / 256))).toEqual([...Array(61).fill(2), 1, 1, 1])
    expect(baRanges(36455).length).toBe(73)
  })

  it("the rows' spin: 0 unless TENET_POOL_SPIN says 'auto' or microseconds", () => {
    expect(poolSpin(undefined)).toBe(0)
    expect(poolSpin('')).toBe(0)
    expect(poolSpin('auto')).toBe('auto')
    expect(poolSpin('0')).toBe(0)
    expect(poolSpin('50')).toBe(50)
    expect(() => poolSpin('fast')).toThrow(/TENET_POOL_SPIN/)
    expect(() => poolSpin('-5')).toThrow(/TENET_POOL_SPIN/)
  })
})
