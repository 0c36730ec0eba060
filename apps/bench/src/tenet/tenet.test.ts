import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { findAdbenchData } from '../data/adbench-path.js'
import { generateBa, readBa } from '../data/ba-data.js'
import { generateGmm, readGmm } from '../data/gmm-data.js'
import { maxScaledError } from '../math/finite-difference.js'
import { baJacobianPlain, baObjectivePlain } from '../objectives/ba.js'
import { besselJDerivative, besselJPlain } from '../objectives/bessel.js'
import { embeddingGradientPlain } from '../objectives/graph-embedding.js'
import { gmmGradientPlain, gmmObjectivePlain } from '../objectives/gmm.js'
import { leapfrogDoubleDouble, meanPlanetError, solarSystem } from '../objectives/leapfrog.js'
import { randomCsc, sparseDotGradientPlain, sparseDotPlain } from '../objectives/sparse.js'
import { unitaryGradientPlain } from '../objectives/unitary.js'
import { grad } from 'tenet'
import { baJacobian, baObjective, gmmGradient, gmmObjective } from './index.js'
import {
  baModule,
  baObjectiveTenet,
  createBaJacobianRows,
  createBaJacobianTenet,
  createBaResidualsTenet,
} from './ba.js'
import { withBackend } from './compile.js'
import { createGmmTenet } from './gmm.js'
import * as P from './programs.js'
import { toColumnMajor } from '../rows/tenet.js'
import { createRng } from '../math/prng.js'
import { PETERSEN_E1, PETERSEN_E2 } from '../objectives/graph-embedding.js'
import {
  BA_TEST_JACOBIAN_SHAPE,
  BA_TEST_JACOBIAN_VALUES,
  BA_TEST_REPROJECTION,
  BA_TEST_WEIGHT_ERROR,
  GMM_TEST_GRADIENT,
  GMM_TEST_OBJECTIVE,
} from '../data/adbench-test-values.js'

const adbench = findAdbenchData()
const withAdbench = adbench ? it : it.skip

/** max |a − b| / max(|b|, tiny) elementwise, relative. */
function maxRelative(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let e = 0
  for (let i = 0; i < b.length; i++) e = Math.max(e, Math.abs(a[i]! - b[i]!) / Math.max(Math.abs(b[i]!), 1e-300))
  return e
}

describe('Tenet GMM', () => {
  withAdbench("ADBench's test.txt: objective and the 18 gradient entries", () => {
    const inst = readGmm(join(adbench!, 'gmm', 'test.txt'))
    expect(gmmObjective(inst)).toBeCloseTo(GMM_TEST_OBJECTIVE, 12)
    const g = gmmGradient(inst)
    expect(g.length).toBe(18)
    for (let i = 0; i < 18; i++) expect(g[i]).toBeCloseTo(GMM_TEST_GRADIENT[i]!, 10)
  })

  it.each([
    [2, 3, 7],
    [3, 5, 200],
    [10, 25, 150],
  ])('d=%i K=%i n=%i: objective and gradient match the plain ones (≤ 1e-12 relative)', (d, k, n) => {
    const inst = generateGmm({ d, k, n, seed: d * 100 + k })
    expect(maxRelative([gmmObjective(inst)], [gmmObjectivePlain(inst)])).toBeLessThanOrEqual(1e-12)
    // relative to the gradient's scale (entries that cancel to ~0 have no relative accuracy)
    expect(maxScaledError(gmmGradient(inst), gmmGradientPlain(inst))).toBeLessThanOrEqual(1e-12)
  })

  it('on wasm (work arrays in the module memory), call after call and for another n', () => {
    const t = withBackend('wasm', () => createGmmTenet(3, 4))
    for (const n of [130, 130, 7]) {
      const inst = generateGmm({ d: 3, k: 4, n, seed: n })
      expect(maxRelative([t.objective(inst)], [gmmObjectivePlain(inst)])).toBeLessThanOrEqual(1e-12)
      expect(maxScaledError(t.gradient(inst), gmmGradientPlain(inst))).toBeLessThanOrEqual(1e-12)
    }
  })
})

describe('Tenet BA', () => {
  withAdbench("ADBench's test.txt: residuals and the Jacobian", () => {
    const inst = readBa(join(adbench!, 'ba', 'test.txt'))
    const { reprojErr, wErr } = baObjective(inst)
    for (let i = 0; i < 10; i++) {
      expect(reprojErr[2 * i]).toBeCloseTo(BA_TEST_REPROJECTION[0], 12)
      expect(reprojErr[2 * i + 1]).toBeCloseTo(BA_TEST_REPROJECTION[1], 12)
      expect(wErr[i]).toBeCloseTo(BA_TEST_WEIGHT_ERROR, 12)
    }
    const J = baJacobian(inst)
    expect([J.nrows, J.ncols, J.rows.length, J.cols.length]).toEqual([...BA_TEST_JACOBIAN_SHAPE])
    for (const [i, v] of BA_TEST_JACOBIAN_VALUES) expect(J.vals[i]).toBeCloseTo(v, 9)
    const ref = baJacobianPlain(inst)
    expect(Array.from(J.cols)).toEqual(Array.from(ref.cols))
    expect(maxScaledError(J.vals, ref.vals)).toBeLessThanOrEqual(1e-12)
  })

  it('generated instance, both Rodrigues branches: residuals and Jacobian match the plain ones', () => {
    const inst = generateBa({ n: 4, m: 9, p: 40, seed: 3 })
    inst.cams.fill(0, 0, 3) // camera 0 has zero rotation: the first-order branch
    const r = baObjective(inst),
      rp = baObjectivePlain(inst)
    expect(maxScaledError(r.reprojErr, rp.reprojErr)).toBeLessThanOrEqual(1e-12)
    expect(maxScaledError(r.wErr, rp.wErr)).toBe(0)
    expect(maxScaledError(baJacobian(inst).vals, baJacobianPlain(inst).vals)).toBeLessThanOrEqual(1e-12)
  })

  it('the block Jacobian picks one reverse sweep of two rows by counts, and the wasm backend gives the same Jacobian', () => {
    const inst = generateBa({ n: 4, m: 9, p: 300, seed: 4 })
    inst.cams.fill(0, 0, 3)
    const cpu = createBaJacobianTenet(inst)
    expect([cpu.jac.plan.mode, cpu.jac.plan.width, cpu.jac.plan.sweeps]).toEqual(['reverse', 2, 1])
    expect(cpu.jac.plan.toString()).toMatch(/by counts: forward .* = 18, reverse .* = 4/)
    const ref = baJacobianPlain(inst).vals
    expect(maxScaledError(cpu.run().vals, ref)).toBeLessThanOrEqual(1e-12)
    const wasm = withBackend('wasm', () => createBaJacobianTenet(inst))
    expect(maxScaledError(wasm.run().vals, ref)).toBeLessThanOrEqual(1e-12)
    // observation ranges with an offset base (the worker threads' use)
    const rows = createBaJacobianRows(inst)
    const part = new Float64Array(30 * 100)
    rows(150, 250, part, 150)
    expect(maxScaledError(part, ref.subarray(30 * 150, 30 * 250))).toBeLessThanOrEqual(1e-12)
  })

  it('on wasm (observations and features staged in the module memory): call after call, across a memory growth, for another instance', () => {
    const a = generateBa({ n: 4, m: 9, p: 60, seed: 5 }),
      b = generateBa({ n: 3, m: 7, p: 25, seed: 6 })
    a.cams.fill(0, 0, 3)
    const m = withBackend('wasm', () => baModule())
    const same = (inst: typeof a) => {
      const r = baObjectiveTenet(inst, undefined, m),
        rp = baObjectivePlain(inst)
      expect(maxScaledError(r.reprojErr, rp.reprojErr)).toBeLessThanOrEqual(1e-12)
      expect(maxScaledError(r.wErr, rp.wErr)).toBe(0)
    }
    same(a)
    same(a)
    // a large allocation grows the memory (detaching the staged arrays' earlier views)
    const big = m.ba_objective!.core.resident!.allocate('f64', 1 << 20)
    same(a)
    same(b)
    // the parameters are still copied in per call: a changed camera shows
    b.cams[3] += 0.25
    same(b)
    same(a)
    big.release()
  })

  it('on wasm, into residuals in the module memory: call after call, across a memory growth', () => {
    const a = generateBa({ n: 4, m: 9, p: 60, seed: 7 })
    a.cams.fill(0, 0, 3)
    const m = withBackend('wasm', () => baModule())
    const out = createBaResidualsTenet(a.p, m)
    const probe = m.ba_objective!.core.resident!.allocate('f64', 1)
    expect(out.reprojErr.buffer).toBe(probe.array.buffer)
    probe.release()
    const same = () => {
      const r = baObjectiveTenet(a, out, m),
        rp = baObjectivePlain(a)
      expect(r).toBe(out)
      expect(maxScaledError(r.reprojErr, rp.reprojErr)).toBeLessThanOrEqual(1e-12)
      expect(maxScaledError(r.wErr, rp.wErr)).toBe(0)
    }
    same()
    // stale values are zeroed first
    out.reprojErr.fill(Number.NaN)
    same()
    const big = m.ba_objective!.core.resident!.allocate('f64', 1 << 21)
    same()
    a.X[4] -= 0.5
    same()
    big.release()
    out.release()
    // on cpu: plain arrays
    const cpu = createBaResidualsTenet(a.p, baModule())
    expect(cpu.reprojErr.length).toBe(2 * a.p)
    expect(maxScaledError(baObjectiveTenet(a, cpu).reprojErr, baObjectivePlain(a).reprojErr)).toBeLessThanOrEqual(1e-12)
  })
})

describe('Tenet programs of the other workloads', () => {
  it('Bessel J₂(1) and its derivative', () => {
    const g = grad(P.besselFunction(), { loss: 0 })
    g.run(0, 2, 1.0)
    expect(g.lastLoss).toBeCloseTo(besselJPlain(2, 1), 10)
    expect(g.scalars[2]).toBeCloseTo(besselJDerivative(2, 1), 8)
  })

  it('sparse dot, with and without the branch keeper', () => {
    const A = randomCsc(60, 50, 0.1, 1),
      B = randomCsc(60, 50, 0.1, 2)
    const ref = sparseDotGradientPlain(A, B)
    for (const f of [P.sparseDotFunction(), P.sparseDotMergeFunction()]) {
      const g = grad(f, { loss: 0 })
      g.run(0, 60, 50, A.colPtr, A.rowIdx, A.values, B.colPtr, B.rowIdx, B.values)
      expect(g.lastLoss).toBeCloseTo(sparseDotPlain(A, B), 12)
      expect(maxScaledError(g.buffers[5]!, ref.gA)).toBeLessThanOrEqual(1e-12)
      expect(maxScaledError(g.buffers[8]!, ref.gB)).toBeLessThanOrEqual(1e-12)
    }
  })

  it('graph embedding gradient', () => {
    const rng = createRng(4)
    const k = 3
    const x = Float64Array.from({ length: 10 * k }, rng.normal)
    const g = grad(P.embeddingFunction(), { loss: 0 })
    // (q1, d1, q2, d2: four arrays, as one the program writes must share no memory with another)
    const q1 = new Float64Array(15),
      d1 = new Float64Array(15),
      q2 = new Float64Array(30),
      d2 = new Float64Array(30)
    g.run(0, x, q1, d1, q2, d2, k, PETERSEN_E1, PETERSEN_E2)
    expect(maxScaledError(g.buffers[1]!, embeddingGradientPlain(x, k))).toBeLessThanOrEqual(1e-12)
  })

  it('unitary loss gradient without a tape', () => {
    const M = 6,
      N = 4
    const rng = createRng(9)
    const theta = Float64Array.from({ length: (M * (M - 1)) / 2 }, rng.normal)
    const x = Float64Array.from({ length: M * N }, rng.normal)
    const c = Float64Array.from({ length: M * N }, rng.normal)
    const g = grad(P.unitaryFunctions().loss, { loss: 0 })
    g.run(0, toColumnMajor(x, M, N), theta, toColumnMajor(c, M, N), M, N)
    expect(maxScaledError(g.buffers[2]!, unitaryGradientPlain(x, M, N, theta, c).theta)).toBeLessThanOrEqual(1e-12)
  })

  it('leapfrog: float64 reversible as accurate as the regular one; accumulative worse; float32 worse still', () => {
    const sys = solarSystem()
    const ref = leapfrogDoubleDouble(sys, 1, 500)
    const e = (T: 'f64' | 'f32', acc: boolean) =>
      meanPlanetError(P.tenetLeapfrog(P.leapfrogFunctions(T, acc), T, sys, 1, 500), ref)
    expect(e('f64', false)).toBeLessThan(1e-12)
    expect(e('f64', true)).toBeGreaterThan(e('f64', false))
    expect(e('f32', false)).toBeLessThan(1e-3)
    expect(e('f32', true)).toBeGreaterThan(e('f32', false))
    // the generated inverse recovers the start
    const f = P.leapfrogFunctions('f64').steps
    const x = sys.x.slice(),
      v = sys.v.slice()
    f.core(x, v, sys.mass, 9, 2.959122082855911e-4, 1, 200)
    f.inverse.core(x, v, sys.mass, 9, 2.959122082855911e-4, 1, 200)
    expect(maxScaledError(x, sys.x)).toBeLessThan(1e-12)
  })
})
