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
import { BA_BLOCK_COLS, createBaJacobian, createBaResiduals, type BaResiduals, type BaSparseJacobian } from '../objectives/ba.js'
import { grad, type TenetFunction, type TenetModule } from 'tenet'
import { benchBackend, compile, fn } from './compile.js'

/**
 * The projection of one observation as Tenet statements. `v(name)` gives the location of an
 * intermediate, `cam(j)`, `pt(j)` the parameters; the result is left in locations u, v, L.
 */
function projection(v: (name: string) => string, cam: (j: number) => string, pt: (j: number) => string): string {
  return `
    ${v('sq')} += ${cam(0)} * ${cam(0)} + ${cam(1)} * ${cam(1)} + ${cam(2)} * ${cam(2)}
    ${v('p0')} += ${pt(0)} - ${cam(3)}
    ${v('p1')} += ${pt(1)} - ${cam(4)}
    ${v('p2')} += ${pt(2)} - ${cam(5)}
    if (${v('sq')} != 0.0, ~) {
      ${v('th')} += sqrt(${v('sq')})
      ${v('cs')} += cos(${v('th')})
      ${v('sn')} += sin(${v('th')})
      ${v('w0')} += ${cam(0)} / ${v('th')}
      ${v('w1')} += ${cam(1)} / ${v('th')}
      ${v('w2')} += ${cam(2)} / ${v('th')}
      ${v('tmp')} += (${v('w0')} * ${v('p0')} + ${v('w1')} * ${v('p1')} + ${v('w2')} * ${v('p2')}) * (1.0 - ${v('cs')})
      ${v('c0')} += ${v('p0')} * ${v('cs')} + (${v('w1')} * ${v('p2')} - ${v('w2')} * ${v('p1')}) * ${v('sn')} + ${v('w0')} * ${v('tmp')}
      ${v('c1')} += ${v('p1')} * ${v('cs')} + (${v('w2')} * ${v('p0')} - ${v('w0')} * ${v('p2')}) * ${v('sn')} + ${v('w1')} * ${v('tmp')}
      ${v('c2')} += ${v('p2')} * ${v('cs')} + (${v('w0')} * ${v('p1')} - ${v('w1')} * ${v('p0')}) * ${v('sn')} + ${v('w2')} * ${v('tmp')}
    } else {
      ${v('c0')} += ${v('p0')} + (${cam(1)} * ${v('p2')} - ${cam(2)} * ${v('p1')})
      ${v('c1')} += ${v('p1')} + (${cam(2)} * ${v('p0')} - ${cam(0)} * ${v('p2')})
      ${v('c2')} += ${v('p2')} + (${cam(0)} * ${v('p1')} - ${cam(1)} * ${v('p0')})
    }
    ${v('u')} += ${v('c0')} / ${v('c2')}
    ${v('v')} += ${v('c1')} / ${v('c2')}
    ${v('rsq')} += ${v('u')} * ${v('u')} + ${v('v')} * ${v('v')}
    ${v('L')} += 1.0 + ${cam(9)} * ${v('rsq')} + ${cam(10)} * ${v('rsq')} * ${v('rsq')}`
}

const NAMES = ['sq', 'p0', 'p1', 'p2', 'th', 'cs', 'sn', 'w0', 'w1', 'w2', 'tmp', 'c0', 'c1', 'c2', 'u', 'v', 'rsq', 'L']
/** Intermediates kept per observation by `ba_rows`. */
export const BA_WORKSPACE = NAMES.length

export const baSource = `
fn ba_objective(reproj: f64[], werr: f64[], cams: f64[], X: f64[], w: f64[], obs: i32[], feats: f64[], p: i32) {
  for i in 0..p {
    co: i32 <- 11 * obs[2 * i]
    xo: i32 <- 3 * obs[2 * i + 1]
    routine {
${NAMES.map((n) => `      ${n} <- 0.0`).join('\n')}
${projection((n) => n, (j) => `cams[co + ${j}]`, (j) => `X[xo + ${j}]`)}
    }
    reproj[2 * i] += w[i] * (u * L * cams[co + 6] + cams[co + 7] - feats[2 * i])
    reproj[2 * i + 1] += w[i] * (v * L * cams[co + 6] + cams[co + 8] - feats[2 * i + 1])
    ~routine
    werr[i] += 1.0 - w[i] * w[i]
    xo -> 3 * obs[2 * i + 1]
    co -> 11 * obs[2 * i]
  }
}

fn ba_rows(loss: f64, row: i32, i0: i32, i1: i32, cam: f64[], pt: f64[], w: f64[], feats: f64[], ws: f64[]) {
  for i in i0..i1 {
    b: i32 <- ${BA_WORKSPACE} * (i - i0)
    co: i32 <- 11 * i
    xo: i32 <- 3 * i
${projection((n) => `ws[b + ${NAMES.indexOf(n)}]`, (j) => `cam[co + ${j}]`, (j) => `pt[xo + ${j}]`)}
    if (row == 0, ~) {
      loss += w[i] * (ws[b + ${NAMES.indexOf('u')}] * ws[b + ${NAMES.indexOf('L')}] * cam[co + 6] + cam[co + 7] - feats[2 * i])
    } else {
      loss += w[i] * (ws[b + ${NAMES.indexOf('v')}] * ws[b + ${NAMES.indexOf('L')}] * cam[co + 6] + cam[co + 8] - feats[2 * i + 1])
    }
    xo -> 3 * i
    co -> 11 * i
    b -> ${BA_WORKSPACE} * (i - i0)
  }
}
`

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
export function baObjectiveTenet(inst: BaInstance, out: BaResiduals = createBaResiduals(inst.p), m: TenetModule = baModule()): BaResiduals {
  out.reprojErr.fill(0)
  out.wErr.fill(0)
  fn(m, 'ba_objective').core(out.reprojErr, out.wErr, inst.cams, inst.X, inst.w, inst.obs, inst.feats, inst.p)
  return out
}

/** Observations per block of the Jacobian sweeps (the workspace of a block stays in cache). */
export const BA_BLOCK = 256

/**
 * A reusable Jacobian evaluator for one instance (per-observation copies made once). Block by
 * block and row by row: a forward run of `ba_rows`, then its generated adjoint seeded with 1.
 */
export function createBaJacobianTenet(inst: BaInstance, block = BA_BLOCK): { run(): BaSparseJacobian } {
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
  const J = createBaJacobian(inst)
  const vals = J.vals
  const B = BA_BLOCK_COLS
  const run = (): BaSparseJacobian => {
    for (let i0 = 0; i0 < p; i0 += block) {
      const i1 = Math.min(p, i0 + block)
      for (let row = 0; row < 2; row++) {
        ws.fill(0)
        F(0, row, i0, i1, cam, pt, wc, feats, ws)
        gCam.fill(0, C * i0, C * i1)
        gPt.fill(0, 3 * i0, 3 * i1)
        gW.fill(0, i0, i1)
        gWs.fill(0)
        A(F.results[0]!, row, i0, i1, cam, pt, wc, feats, ws, 1, gCam, gPt, gW, gFeats, gWs, 0)
        for (let i = i0; i < i1; i++) {
          const o = (2 * i + row) * B
          for (let j = 0; j < C; j++) vals[o + j] = gCam[C * i + j]!
          vals[o + C] = gPt[3 * i]!
          vals[o + C + 1] = gPt[3 * i + 1]!
          vals[o + C + 2] = gPt[3 * i + 2]!
          vals[o + C + 3] = gW[i]!
        }
      }
    }
    // weight rows: d(1 − w²)/dw
    const base = 2 * B * p
    for (let i = 0; i < p; i++) vals[base + i] = -2 * w[i]!
    return J
  }
  return { run }
}
