import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { findAdbenchData } from '../data/adbench-path.js'
import { formatBa, generateBa, parseBa, readBa, writeBa } from '../data/ba-data.js'
import { formatGmm, generateGmm, parseGmm, readGmm, writeGmm } from '../data/gmm-data.js'
import { finiteDifferenceGradient, finiteDifferenceJacobian, maxScaledError } from '../math/finite-difference.js'
import { baJacobianPlain, baJacobianToDense, baObjectivePlain, baPackParameters, baWithParameters } from './ba.js'
import { gmmGradientPlain, gmmObjectivePlain, gmmPackParameters, gmmWithParameters } from './gmm.js'
import {
  BA_TEST_JACOBIAN_SHAPE,
  BA_TEST_JACOBIAN_VALUES,
  BA_TEST_REPROJECTION,
  BA_TEST_WEIGHT_ERROR,
  GMM_TEST_GRADIENT,
  GMM_TEST_OBJECTIVE,
} from '../data/adbench-test-values.js'

const adbench = findAdbenchData()
if (!adbench)
  console.warn(
    '[bench] skipping ADBench file tests: ../shared/data/adbench not found beside the repo (set TENET_ADBENCH_DIR to point at it)',
  )
const withAdbench = adbench ? it : it.skip

const tmp = mkdtempSync(join(tmpdir(), 'tenet-bench-'))
afterAll(() => rmSync(tmp, { recursive: true, force: true }))

describe('GMM', () => {
  withAdbench('reads ADBench test.txt and reproduces its objective and gradient', () => {
    const inst = readGmm(join(adbench!, 'gmm', 'test.txt'))
    expect([inst.d, inst.k, inst.n]).toEqual([2, 3, 1])
    expect(inst.wishart).toEqual({ gamma: 1, m: 0 })
    expect(gmmObjectivePlain(inst)).toBeCloseTo(GMM_TEST_OBJECTIVE, 12)
    const g = gmmGradientPlain(inst)
    expect(g.length).toBe(18)
    for (let i = 0; i < 18; i++) expect(g[i]).toBeCloseTo(GMM_TEST_GRADIENT[i], 10)
  })

  withAdbench('reads a full 1k file (one row per point)', () => {
    const inst = readGmm(join(adbench!, 'gmm', '1k', 'gmm_d2_K5.txt'))
    expect([inst.d, inst.k, inst.n, inst.x.length]).toEqual([2, 5, 1000, 2000])
    expect(Number.isFinite(gmmObjectivePlain(inst))).toBe(true)
  })

  it('reads files that store a single replicated point', () => {
    const inst = generateGmm({ d: 3, k: 2, n: 4, seed: 5 })
    const back = parseGmm(formatGmm(inst, { replicatePoint: true }))
    for (let i = 0; i < 4; i++)
      expect(Array.from(back.x.subarray(3 * i, 3 * i + 3))).toEqual(Array.from(inst.x.subarray(0, 3)))
  })

  it('generator round-trips through writer and reader', () => {
    const inst = generateGmm({ d: 4, k: 3, n: 17, seed: 42 })
    const path = join(tmp, 'g.txt')
    writeGmm(path, inst)
    expect(readGmm(path)).toEqual(inst)
    expect(generateGmm({ d: 4, k: 3, n: 17, seed: 42 })).toEqual(inst)
    expect(generateGmm({ d: 4, k: 3, n: 17, seed: 43 }).alphas).not.toEqual(inst.alphas)
  })

  it('rejects a truncated file with a clear message', () => {
    expect(() => parseGmm('2 3 1\n0.1\n')).toThrow(/expected/)
  })

  it('gradient matches central finite differences', () => {
    const inst = generateGmm({ d: 3, k: 4, n: 20, seed: 7, m: 2, gamma: 1.3 })
    const x = gmmPackParameters(inst)
    const fd = finiteDifferenceGradient((p) => gmmObjectivePlain(gmmWithParameters(inst, p)), x, 1e-6)
    expect(maxScaledError(gmmGradientPlain(inst), fd)).toBeLessThan(1e-7)
  })
})

describe('BA', () => {
  withAdbench('reads ADBench test.txt as the C++ reader does and reproduces its residuals and Jacobian', () => {
    const inst = readBa(join(adbench!, 'ba', 'test.txt'))
    expect([inst.n, inst.m, inst.p]).toEqual([2, 10, 10])
    expect(Array.from(inst.obs.subarray(0, 6))).toEqual([0, 0, 1, 1, 0, 2])
    const { reprojErr, wErr } = baObjectivePlain(inst)
    for (let i = 0; i < 10; i++) {
      expect(reprojErr[2 * i]).toBeCloseTo(BA_TEST_REPROJECTION[0], 9)
      expect(reprojErr[2 * i + 1]).toBeCloseTo(BA_TEST_REPROJECTION[1], 9)
      expect(wErr[i]).toBeCloseTo(BA_TEST_WEIGHT_ERROR, 12)
    }
    const J = baJacobianPlain(inst)
    expect([J.nrows, J.ncols, J.rows.length, J.cols.length]).toEqual([...BA_TEST_JACOBIAN_SHAPE])
    for (const [i, v] of BA_TEST_JACOBIAN_VALUES) expect(J.vals[i]).toBeCloseTo(v, 6)
  })

  withAdbench('reads a real BA file (ba1) with the replication rule', () => {
    const inst = readBa(join(adbench!, 'ba', 'ba1_n49_m7776_p31843.txt'))
    expect([inst.n, inst.m, inst.p]).toEqual([49, 7776, 31843])
    expect(inst.obs[2 * 31842]).toBe(31842 % 49)
    expect(inst.obs[2 * 31842 + 1]).toBe(31842 % 7776)
  })

  it('generator round-trips through writer and reader', () => {
    const inst = generateBa({ n: 3, m: 5, p: 11, seed: 9 })
    const path = join(tmp, 'b.txt')
    writeBa(path, inst)
    expect(readBa(path)).toEqual(inst)
    expect(parseBa(formatBa(inst))).toEqual(inst)
  })

  it('writer refuses instances the format cannot hold', () => {
    const inst = generateBa({ n: 2, m: 2, p: 4, seed: 1 })
    inst.cams[11] += 1
    expect(() => formatBa(inst)).toThrow(/cameras differ/)
  })

  const residualVector = (inst: ReturnType<typeof generateBa>) => (q: Float64Array) => {
    const r = baObjectivePlain(baWithParameters(inst, q))
    const out = new Float64Array(3 * inst.p)
    out.set(r.reprojErr, 0)
    out.set(r.wErr, 2 * inst.p)
    return out
  }

  it('Jacobian matches central finite differences (θ ≠ 0 branch)', () => {
    const inst = generateBa({ n: 2, m: 3, p: 5, seed: 3 })
    // vary the cameras and points so the columns are not all alike
    for (let i = 0; i < inst.cams.length; i++) inst.cams[i] *= 1 + 0.01 * (i % 7)
    for (let i = 0; i < inst.X.length; i++) inst.X[i] += 0.05 * (i % 5)
    const fd = finiteDifferenceJacobian(residualVector(inst), baPackParameters(inst), 1e-7)
    const J = baJacobianToDense(baJacobianPlain(inst))
    expect(maxScaledError(J, fd.values)).toBeLessThan(1e-6)
  })

  it('Jacobian matches finite differences on the small-angle branch (θ = 0)', () => {
    const inst = generateBa({ n: 1, m: 2, p: 2, seed: 4 })
    inst.cams[0] = inst.cams[1] = inst.cams[2] = 0
    const J = baJacobianToDense(baJacobianPlain(inst))
    // away from the rotation columns the function is smooth; compare those with FD
    const fd = finiteDifferenceJacobian(residualVector(inst), baPackParameters(inst), 1e-7)
    const cols = fd.cols
    for (let r = 0; r < fd.rows; r++)
      for (let c = 3; c < cols; c++) expect(J[r * cols + c]).toBeCloseTo(fd.values[r * cols + c], 4)
  })
})
