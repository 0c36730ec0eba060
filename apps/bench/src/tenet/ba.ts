/**
 * ADBench's bundle adjustment in Tenet. One observation: rotate X − C by the Rodrigues formula
 * (first-order branch when θ = 0), divide by depth, apply the radial distortion and the focal
 * length and principal point, and compare with the feature; weighted by w. The weight error is
 * 1 − w².
 *
 * - `ba_objective` is the clean form: per observation the intermediates live in ancillas that
 *   `~routine` uncomputes, so the function leaves nothing behind.
 * - `ba_rows` is the Jacobian form: every observation has its own copy of its camera and point
 *   (as ADBench's per-observation blocks), the intermediates are kept in a workspace, and
 *   `loss` accumulates row `row` (0: x, 1: y) of every observation's reprojection error. One
 *   forward run plus one adjoint run yields that row's 15 non-zeros for every observation.
 */
import { BA_CAMERA_PARAMS, type BaInstance } from '../data/ba-data.js'
import {
  BA_BLOCK_COLS,
  createBaJacobian,
  createBaResiduals,
  type BaResiduals,
  type BaSparseJacobian,
} from '../objectives/ba.js'
import { blockJacobian, grad, type BlockJacobian, type TenetFunction, type TenetModule } from 'tenet'
import { benchBackend, compile, fn } from './compile.js'
import { examples } from 'tenet'

/** The BA program is `tenet`'s (`examples.baSource`); its projection helper serves other forms (the f32 GPU kernel). */
export const { baSource, BA_WORKSPACE, baProjection: projection, BA_INTERMEDIATES: NAMES } = examples

const modules = new Map<string, TenetModule>()
export const baModule = (): TenetModule => {
  let m = modules.get(benchBackend())
  if (!m) modules.set(benchBackend(), (m = compile(baSource)))
  return m
}
export const baFunctions = (): { objective: TenetFunction; rows: TenetFunction } => ({
  objective: fn(baModule(), 'ba_objective'),
  rows: fn(baModule(), 'ba_rows'),
})

/** Reprojection and weight errors by `ba_objective` (Tenet; the module of the current backend unless given). */
export function baObjectiveTenet(
  inst: BaInstance,
  out: BaResiduals = createBaResiduals(inst.p),
  m: TenetModule = baModule(),
): BaResiduals {
  out.reprojErr.fill(0)
  out.wErr.fill(0)
  fn(m, 'ba_objective').core(out.reprojErr, out.wErr, inst.cams, inst.X, inst.w, inst.obs, inst.feats, inst.p)
  return out
}

/** Observations per block of the Jacobian sweeps (the workspace of a block stays in cache). */
export const BA_BLOCK = 256

/**
 * The Jacobian's observation rows for ranges of observations, for one instance (per-observation
 * copies made once): `rows(i0, i1, vals, base)` writes rows x and y of observations [i0, i1) into
 * `vals` at observation `i − base` (ADBench's layout, `BA_BLOCK_COLS` per row), block by block and
 * row by row: a forward run of `ba_rows`, then its generated adjoint seeded with 1. The worker
 * threads of the parallel rows use this on their ranges.
 */
export function createBaJacobianRows(
  inst: BaInstance,
  block = BA_BLOCK,
): (i0: number, i1: number, vals: Float64Array, base: number) => void {
  const { p, cams, X, w, obs, feats } = inst
  const C = BA_CAMERA_PARAMS
  const cam = new Float64Array(C * p)
  const pt = new Float64Array(3 * p)
  for (let i = 0; i < p; i++) {
    cam.set(cams.subarray(C * obs[2 * i]!, C * obs[2 * i]! + C), C * i)
    pt.set(X.subarray(3 * obs[2 * i + 1]!, 3 * obs[2 * i + 1]! + 3), 3 * i)
  }
  const wc = w.slice()
  const ws = new Float64Array(BA_WORKSPACE * block)
  const gCam = new Float64Array(C * p)
  const gPt = new Float64Array(3 * p)
  const gW = new Float64Array(p)
  const gFeats = new Float64Array(2 * p)
  const gWs = new Float64Array(BA_WORKSPACE * block)
  const rows = fn(baModule(), 'ba_rows')
  const F = rows.core
  const A = grad(rows, { loss: 0 }).adjoint.core
  const B = BA_BLOCK_COLS
  return (from, to, vals, base) => {
    for (let i0 = from; i0 < to; i0 += block) {
      const i1 = Math.min(to, i0 + block)
      for (let row = 0; row < 2; row++) {
        ws.fill(0)
        F(0, row, i0, i1, cam, pt, wc, feats, ws)
        gCam.fill(0, C * i0, C * i1)
        gPt.fill(0, 3 * i0, 3 * i1)
        gW.fill(0, i0, i1)
        gWs.fill(0)
        A(F.results[0]!, row, i0, i1, cam, pt, wc, feats, ws, 1, gCam, gPt, gW, gFeats, gWs, 0)
        for (let i = i0; i < i1; i++) {
          const o = (2 * (i - base) + row) * B
          for (let j = 0; j < C; j++) vals[o + j] = gCam[C * i + j]!
          vals[o + C] = gPt[3 * i]!
          vals[o + C + 1] = gPt[3 * i + 1]!
          vals[o + C + 2] = gPt[3 * i + 2]!
          vals[o + C + 3] = gW[i]!
        }
      }
    }
  }
}

/**
 * One observation as a block program for `blockJacobian`: its residual pair `r` (2), camera (11),
 * point (3), weight, feature (2), and its intermediates in the workspace `ws` (`BA_WORKSPACE`,
 * written at literal indices, so the block Jacobian keeps them in scalars).
 */
export const baBlockSource = `
fn ba_block(r: f64[], cam: f64[], pt: f64[], w: f64, feat: f64[], ws: f64[]) {
${projection(
  (n) => `ws[${NAMES.indexOf(n)}]`,
  (j) => `cam[${j}]`,
  (j) => `pt[${j}]`,
)}
  r[0] += w * (ws[${NAMES.indexOf('u')}] * ws[${NAMES.indexOf('L')}] * cam[6] + cam[7] - feat[0])
  r[1] += w * (ws[${NAMES.indexOf('v')}] * ws[${NAMES.indexOf('L')}] * cam[6] + cam[8] - feat[1])
}
`

const blockModules = new Map<string, TenetModule>()
/** The compiled `ba_block` of the current backend. */
export const baBlockFunction = (): TenetFunction => {
  let m = blockModules.get(benchBackend())
  if (!m) blockModules.set(benchBackend(), (m = compile(baBlockSource)))
  return fn(m, 'ba_block')
}

/** `blockJacobian` of `ba_block`: the 2 × 15 Jacobian block (camera, point, weight) of each observation. */
export function baBlockJacobian(): BlockJacobian {
  return blockJacobian(baBlockFunction(), {
    sizes: [2, BA_CAMERA_PARAMS, 3, null, 2, BA_WORKSPACE],
    inputs: [1, 2, 3],
    outputs: [0],
    workspace: [5],
  })
}

/**
 * The Jacobian by `blockJacobian` over the observations: per-observation copies of the cameras
 * and points are made once (ADBench's per-observation blocks); a run writes the 2p observation
 * rows straight into the CSR values (the block layout is ADBench's), then the weight rows.
 */
export function createBaJacobianBlocked(inst: BaInstance): { run(): BaSparseJacobian; jac: BlockJacobian } {
  const { p, cams, X, w, obs, feats } = inst
  const C = BA_CAMERA_PARAMS
  const cam = new Float64Array(C * p)
  const pt = new Float64Array(3 * p)
  for (let i = 0; i < p; i++) {
    cam.set(cams.subarray(C * obs[2 * i]!, C * obs[2 * i]! + C), C * i)
    pt.set(X.subarray(3 * obs[2 * i + 1]!, 3 * obs[2 * i + 1]! + 3), 3 * i)
  }
  const r = new Float64Array(2 * p)
  const jac = baBlockJacobian()
  const J = createBaJacobian(inst)
  const rows = J.vals.subarray(0, 2 * BA_BLOCK_COLS * p)
  const args = [r, cam, pt, w, feats, null]
  return {
    jac,
    run: () => {
      jac.run(p, args, rows)
      baWeightRows(inst, J.vals)
      return J
    },
  }
}

/** The weight rows of the Jacobian, d(1 − w²)/dw, after the 2p observation rows. */
export function baWeightRows(inst: BaInstance, vals: Float64Array): void {
  const base = 2 * BA_BLOCK_COLS * inst.p
  for (let i = 0; i < inst.p; i++) vals[base + i] = -2 * inst.w[i]!
}

/** A reusable Jacobian evaluator for one instance (`createBaJacobianRows` over all observations, then the weight rows). */
export function createBaJacobianTenet(inst: BaInstance, block = BA_BLOCK): { run(): BaSparseJacobian } {
  // wasm copies every array argument of a call in and out: give it block-sized arrays (see blockLocalRun)
  if (benchBackend() === 'wasm') {
    const rows = fn(baModule(), 'ba_rows')
    return { run: blockLocalRun(inst, block, rows.core, grad(rows, { loss: 0 }).adjoint.core) }
  }
  const rows = createBaJacobianRows(inst, block)
  const J = createBaJacobian(inst)
  const run = (): BaSparseJacobian => {
    rows(0, inst.p, J.vals, 0)
    baWeightRows(inst, J.vals)
    return J
  }
  return { run }
}

/**
 * The Jacobian sweep of `createBaJacobianTenet` for the wasm backend: each block's cameras,
 * points, weights and features are copied into arrays of one block and the functions run on
 * observations 0…n of those, because a wasm call copies every array argument into its memory and
 * the written ones back (the whole instance's arrays, several MB, made each block's two calls
 * about 20× slower than on the cpu backend). The same Jacobian.
 */
function blockLocalRun(
  inst: BaInstance,
  block: number,
  F: TenetFunction['core'],
  A: TenetFunction['core'],
): () => BaSparseJacobian {
  const { p, cams, X, w, obs, feats } = inst
  const C = BA_CAMERA_PARAMS
  const cam = new Float64Array(C * block),
    pt = new Float64Array(3 * block),
    wc = new Float64Array(block),
    ft = new Float64Array(2 * block)
  const ws = new Float64Array(BA_WORKSPACE * block),
    gWs = new Float64Array(BA_WORKSPACE * block)
  const gCam = new Float64Array(C * block),
    gPt = new Float64Array(3 * block),
    gW = new Float64Array(block),
    gFeats = new Float64Array(2 * block)
  const J = createBaJacobian(inst)
  const vals = J.vals
  const B = BA_BLOCK_COLS
  return () => {
    for (let i0 = 0; i0 < p; i0 += block) {
      const n = Math.min(p, i0 + block) - i0
      for (let i = 0; i < n; i++) {
        const c = obs[2 * (i0 + i)]!,
          x = obs[2 * (i0 + i) + 1]!
        for (let j = 0; j < C; j++) cam[C * i + j] = cams[C * c + j]!
        for (let j = 0; j < 3; j++) pt[3 * i + j] = X[3 * x + j]!
        wc[i] = w[i0 + i]!
        ft[2 * i] = feats[2 * (i0 + i)]!
        ft[2 * i + 1] = feats[2 * (i0 + i) + 1]!
      }
      for (let row = 0; row < 2; row++) {
        ws.fill(0)
        F(0, row, 0, n, cam, pt, wc, ft, ws)
        gCam.fill(0)
        gPt.fill(0)
        gW.fill(0)
        gWs.fill(0)
        A(F.results[0]!, row, 0, n, cam, pt, wc, ft, ws, 1, gCam, gPt, gW, gFeats, gWs, 0)
        for (let i = 0; i < n; i++) {
          const o = (2 * (i0 + i) + row) * B
          for (let j = 0; j < C; j++) vals[o + j] = gCam[C * i + j]!
          vals[o + C] = gPt[3 * i]!
          vals[o + C + 1] = gPt[3 * i + 1]!
          vals[o + C + 2] = gPt[3 * i + 2]!
          vals[o + C + 3] = gW[i]!
        }
      }
    }
    const base = 2 * B * p
    for (let i = 0; i < p; i++) vals[base + i] = -2 * w[i]!
    return J
  }
}
