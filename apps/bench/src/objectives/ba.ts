import { BA_CAMERA_PARAMS, type BaInstance } from '../data/ba-data.js'

/** Reprojection errors (2 per observation) and weight errors (1 per observation). */
export interface BaResiduals {
  reprojErr: Float64Array
  wErr: Float64Array
}

/** Columns of one reprojection row of the Jacobian: 11 camera, 3 point, 1 weight. */
export const BA_BLOCK_COLS = BA_CAMERA_PARAMS + 3 + 1

/**
 * The BA Jacobian in ADBench's CSR layout (`BASparseMat`): 2p reprojection rows with 15
 * non-zeros each (camera columns, point columns, the observation's weight column), then p weight
 * rows with one non-zero. Columns: 11n camera parameters, 3m point coordinates, p weights.
 */
export interface BaSparseJacobian {
  nrows: number
  ncols: number
  rows: Int32Array
  cols: Int32Array
  vals: Float64Array
}

export function createBaResiduals(p: number): BaResiduals {
  return { reprojErr: new Float64Array(2 * p), wErr: new Float64Array(p) }
}

/**
 * Project point X with camera `cams[co..co+11)` into `out[oo], out[oo+1]` as ADBench does:
 * Rodrigues rotation of X − C (with the first-order branch when θ = 0), perspective division,
 * radial distortion 1 + k1 r² + k2 r⁴, focal length and principal point.
 */
function project(cams: Float64Array, co: number, X: Float64Array, xo: number, out: Float64Array, oo: number): void {
  const r0 = cams[co]
  const r1 = cams[co + 1]
  const r2 = cams[co + 2]
  const p0 = X[xo] - cams[co + 3]
  const p1 = X[xo + 1] - cams[co + 4]
  const p2 = X[xo + 2] - cams[co + 5]
  let c0: number
  let c1: number
  let c2: number
  const sqtheta = r0 * r0 + r1 * r1 + r2 * r2
  if (sqtheta !== 0) {
    const theta = Math.sqrt(sqtheta)
    const cs = Math.cos(theta)
    const sn = Math.sin(theta)
    const inv = 1 / theta
    const w0 = r0 * inv
    const w1 = r1 * inv
    const w2 = r2 * inv
    const tmp = (w0 * p0 + w1 * p1 + w2 * p2) * (1 - cs)
    c0 = p0 * cs + (w1 * p2 - w2 * p1) * sn + w0 * tmp
    c1 = p1 * cs + (w2 * p0 - w0 * p2) * sn + w1 * tmp
    c2 = p2 * cs + (w0 * p1 - w1 * p0) * sn + w2 * tmp
  } else {
    c0 = p0 + (r1 * p2 - r2 * p1)
    c1 = p1 + (r2 * p0 - r0 * p2)
    c2 = p2 + (r0 * p1 - r1 * p0)
  }
  let u = c0 / c2
  let v = c1 / c2
  const rsq = u * u + v * v
  const L = 1 + cams[co + 9] * rsq + cams[co + 10] * rsq * rsq
  u *= L
  v *= L
  out[oo] = u * cams[co + 6] + cams[co + 7]
  out[oo + 1] = v * cams[co + 6] + cams[co + 8]
}

/** ADBench's `ba_objective`: reprojection errors w·(proj − feat) and weight errors 1 − w². */
export function baObjectivePlain(inst: BaInstance, out?: BaResiduals): BaResiduals {
  const { p, cams, X, w, obs, feats } = inst
  const res = out ?? createBaResiduals(p)
  const e = res.reprojErr
  for (let i = 0; i < p; i++) {
    project(cams, obs[2 * i] * BA_CAMERA_PARAMS, X, obs[2 * i + 1] * 3, e, 2 * i)
    const wi = w[i]
    e[2 * i] = wi * (e[2 * i] - feats[2 * i])
    e[2 * i + 1] = wi * (e[2 * i + 1] - feats[2 * i + 1])
  }
  const we = res.wErr
  for (let i = 0; i < p; i++) we[i] = 1 - w[i] * w[i]
  return res
}

/** An empty Jacobian with ADBench's sparsity pattern (rows and cols filled, vals zero). */
export function createBaJacobian(inst: BaInstance): BaSparseJacobian {
  const { n, m, p, obs } = inst
  const nrows = 3 * p
  const ncols = BA_CAMERA_PARAMS * n + 3 * m + p
  const nnz = 2 * p * BA_BLOCK_COLS + p
  const rows = new Int32Array(nrows + 1)
  const cols = new Int32Array(nnz)
  let k = 0
  let r = 0
  for (let i = 0; i < p; i++) {
    const cam = obs[2 * i]
    const pt = obs[2 * i + 1]
    for (let row = 0; row < 2; row++) {
      for (let j = 0; j < BA_CAMERA_PARAMS; j++) cols[k++] = BA_CAMERA_PARAMS * cam + j
      for (let j = 0; j < 3; j++) cols[k++] = BA_CAMERA_PARAMS * n + 3 * pt + j
      cols[k++] = BA_CAMERA_PARAMS * n + 3 * m + i
      rows[++r] = k
    }
  }
  for (let i = 0; i < p; i++) {
    cols[k++] = BA_CAMERA_PARAMS * n + 3 * m + i
    rows[++r] = k
  }
  return { nrows, ncols, rows, cols, vals: new Float64Array(nnz) }
}

/**
 * Hand-derived Jacobian of {@link baObjectivePlain} (chain rule through the projection, with the
 * Rodrigues derivative for both branches), written into ADBench's CSR layout. It is the float64
 * reference the other engines are checked against, and the suite's plain-TS Jacobian row; it
 * writes each observation's 2 × 15 block straight into `vals` and allocates nothing per call
 * when `out` is given.
 */
export function baJacobianPlain(inst: BaInstance, out?: BaSparseJacobian): BaSparseJacobian {
  const J = out ?? createBaJacobian(inst)
  const { p, cams, X, w, obs, feats } = inst
  const vals = J.vals
  for (let i = 0; i < p; i++)
    reprojectionBlock(
      cams,
      obs[2 * i] * BA_CAMERA_PARAMS,
      X,
      obs[2 * i + 1] * 3,
      w[i],
      feats,
      2 * i,
      vals,
      2 * BA_BLOCK_COLS * i,
    )
  const base = 2 * BA_BLOCK_COLS * p
  for (let i = 0; i < p; i++) vals[base + i] = -2 * w[i]
  return J
}

/**
 * Per-observation 2 × 15 Jacobian block ∂(err_x, err_y)/∂(cam[11], X[3], w), written row-major
 * into `vals[o .. o + 30)`.
 */
function reprojectionBlock(
  cams: Float64Array,
  co: number,
  X: Float64Array,
  xo: number,
  wi: number,
  feats: Float64Array,
  fo: number,
  vals: Float64Array,
  o: number,
): void {
  const r0 = cams[co]
  const r1 = cams[co + 1]
  const r2 = cams[co + 2]
  const p0 = X[xo] - cams[co + 3]
  const p1 = X[xo + 1] - cams[co + 4]
  const p2 = X[xo + 2] - cams[co + 5]
  // Xcam = R(r) (X − C); R (∂Xcam/∂X) row-major in R00..R22
  let c0: number, c1: number, c2: number
  let R00: number,
    R01: number,
    R02: number,
    R10: number,
    R11: number,
    R12: number,
    R20: number,
    R21: number,
    R22: number
  // Rodrigues quantities, used again for ∂Xcam/∂r below (θ ≠ 0 only)
  let cs = 0,
    sn = 0,
    inv = 0,
    w0 = 0,
    w1 = 0,
    w2 = 0,
    wp = 0,
    omc = 0,
    tmp = 0,
    x0 = 0,
    x1 = 0,
    x2 = 0
  const sqtheta = r0 * r0 + r1 * r1 + r2 * r2
  const rotating = sqtheta !== 0
  if (rotating) {
    const theta = Math.sqrt(sqtheta)
    cs = Math.cos(theta)
    sn = Math.sin(theta)
    inv = 1 / theta
    w0 = r0 * inv
    w1 = r1 * inv
    w2 = r2 * inv
    wp = w0 * p0 + w1 * p1 + w2 * p2
    omc = 1 - cs
    tmp = wp * omc
    x0 = w1 * p2 - w2 * p1
    x1 = w2 * p0 - w0 * p2
    x2 = w0 * p1 - w1 * p0
    c0 = p0 * cs + x0 * sn + w0 * tmp
    c1 = p1 * cs + x1 * sn + w1 * tmp
    c2 = p2 * cs + x2 * sn + w2 * tmp
    // R = cos I + sin [w]× + (1 − cos) w wᵀ
    R00 = cs + omc * w0 * w0
    R01 = -sn * w2 + omc * w0 * w1
    R02 = sn * w1 + omc * w0 * w2
    R10 = sn * w2 + omc * w1 * w0
    R11 = cs + omc * w1 * w1
    R12 = -sn * w0 + omc * w1 * w2
    R20 = -sn * w1 + omc * w2 * w0
    R21 = sn * w0 + omc * w2 * w1
    R22 = cs + omc * w2 * w2
  } else {
    c0 = p0 + (r1 * p2 - r2 * p1)
    c1 = p1 + (r2 * p0 - r0 * p2)
    c2 = p2 + (r0 * p1 - r1 * p0)
    // R = I + [r]×
    R00 = 1
    R01 = -r2
    R02 = r1
    R10 = r2
    R11 = 1
    R12 = -r0
    R20 = -r1
    R21 = r0
    R22 = 1
  }
  const iz = 1 / c2
  const u = c0 * iz
  const v = c1 * iz
  const k1 = cams[co + 9]
  const k2 = cams[co + 10]
  const f = cams[co + 6]
  const rsq = u * u + v * v
  const L = 1 + k1 * rsq + k2 * rsq * rsq
  const dL = k1 + 2 * k2 * rsq
  const du = u * L
  const dv = v * L
  // ∂(du,dv)/∂(u,v) = L I + 2 dL (u,v)(u,v)ᵀ
  const Auu = L + 2 * dL * u * u
  const Auv = 2 * dL * u * v
  const Avv = L + 2 * dL * v * v
  // ∂(u,v)/∂Xcam = [[iz, 0, −u iz], [0, iz, −v iz]]
  const s = wi * f
  // G = s · A · P  (2 × 3)
  const G00 = s * Auu * iz
  const G01 = s * Auv * iz
  const G02 = -s * (Auu * u + Auv * v) * iz
  const G10 = s * Auv * iz
  const G11 = s * Avv * iz
  const G12 = -s * (Auv * u + Avv * v) * iz
  const C = BA_BLOCK_COLS
  // rotation columns: G · ∂Xcam/∂r_a
  if (rotating) {
    // ∂Xcam/∂r_a: dθ = w_a, dw = (e_a − w w_a)/θ
    for (let a = 0; a < 3; a++) {
      const wa = a === 0 ? w0 : a === 1 ? w1 : w2
      const dw0 = ((a === 0 ? 1 : 0) - w0 * wa) * inv
      const dw1 = ((a === 1 ? 1 : 0) - w1 * wa) * inv
      const dw2 = ((a === 2 ? 1 : 0) - w2 * wa) * inv
      const dcs = -sn * wa
      const dsn = cs * wa
      const dx0 = dw1 * p2 - dw2 * p1
      const dx1 = dw2 * p0 - dw0 * p2
      const dx2 = dw0 * p1 - dw1 * p0
      const dtmp = (dw0 * p0 + dw1 * p1 + dw2 * p2) * omc + wp * sn * wa
      const D0 = p0 * dcs + dx0 * sn + x0 * dsn + dw0 * tmp + w0 * dtmp
      const D1 = p1 * dcs + dx1 * sn + x1 * dsn + dw1 * tmp + w1 * dtmp
      const D2 = p2 * dcs + dx2 * sn + x2 * dsn + dw2 * tmp + w2 * dtmp
      vals[o + a] = G00 * D0 + G01 * D1 + G02 * D2
      vals[o + C + a] = G10 * D0 + G11 * D1 + G12 * D2
    }
  } else {
    // ∂Xcam/∂r_a = e_a × (X − C): (0, −p2, p1), (p2, 0, −p0), (−p1, p0, 0)
    vals[o] = G02 * p1 - G01 * p2
    vals[o + 1] = G00 * p2 - G02 * p0
    vals[o + 2] = G01 * p0 - G00 * p1
    vals[o + C] = G12 * p1 - G11 * p2
    vals[o + C + 1] = G10 * p2 - G12 * p0
    vals[o + C + 2] = G11 * p0 - G10 * p1
  }
  for (let row = 0; row < 2; row++) {
    const g0 = row === 0 ? G00 : G10
    const g1 = row === 0 ? G01 : G11
    const g2 = row === 0 ? G02 : G12
    const b = o + row * C
    // point = G R, centre = −G R
    const gx = g0 * R00 + g1 * R10 + g2 * R20
    const gy = g0 * R01 + g1 * R11 + g2 * R21
    const gz = g0 * R02 + g1 * R12 + g2 * R22
    vals[b + 3] = -gx
    vals[b + 4] = -gy
    vals[b + 5] = -gz
    const dd = row === 0 ? du : dv
    const uv = row === 0 ? u : v
    vals[b + 6] = wi * dd // focal length
    vals[b + 7] = row === 0 ? wi : 0 // u0
    vals[b + 8] = row === 0 ? 0 : wi // v0
    vals[b + 9] = s * uv * rsq // k1
    vals[b + 10] = s * uv * rsq * rsq // k2
    vals[b + 11] = gx
    vals[b + 12] = gy
    vals[b + 13] = gz
    const proj = dd * f + cams[co + 7 + row]
    vals[b + 14] = proj - feats[fo + row] // weight
  }
}

/** Dense view of the parameters for finite differences: cams, X, w (ADBench's column order). */
export function baPackParameters(inst: BaInstance): Float64Array {
  const out = new Float64Array(inst.cams.length + inst.X.length + inst.w.length)
  out.set(inst.cams, 0)
  out.set(inst.X, inst.cams.length)
  out.set(inst.w, inst.cams.length + inst.X.length)
  return out
}

export function baWithParameters(inst: BaInstance, params: Float64Array): BaInstance {
  const nc = inst.cams.length
  const nx = inst.X.length
  return {
    ...inst,
    cams: params.subarray(0, nc),
    X: params.subarray(nc, nc + nx),
    w: params.subarray(nc + nx, nc + nx + inst.w.length),
  }
}

/** Expand the CSR Jacobian to dense row-major (tests only). */
export function baJacobianToDense(J: BaSparseJacobian): Float64Array {
  const out = new Float64Array(J.nrows * J.ncols)
  for (let r = 0; r < J.nrows; r++)
    for (let k = J.rows[r]; k < J.rows[r + 1]; k++) out[r * J.ncols + J.cols[k]] += J.vals[k]
  return out
}
