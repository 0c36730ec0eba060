/**
 * The workloads of seed 003's Table 1 (and its implementation's `neural` and `particles`), each as
 * a plain-TS objective over one flat `Float64Array` of inputs — written as a good engineer would,
 * the baseline — and the same function against the dual-numbers API. Sizes follow the paper's
 * benchmark where it gives them (particles: 4 particles, 1000 steps of dt = 0.05); the MLP is ours.
 */
import type { Dual, Real } from '@tenet/dual'

export type Table1Id = 'scalar-mul' | 'dot' | 'sum-mat-vec' | 'rotate-vec-by-quat' | 'neural' | 'particles'

/** The layout of each workload's flat input. */
export interface Table1Sizes {
  /** dot: vector length; sum-mat-vec: matrix side; rotate: number of (vector, quaternion) pairs; particles: particles */
  n: number
  /** neural: layer widths [input, hidden…, output]; samples in `batch` */
  layers?: number[]
  batch?: number
  /** particles: steps */
  steps?: number
}

// ── scalar multiplication: f(x, y) = x · y ────────────────────────────────────────────────────

export function scalarMulPlain(x: Float64Array): number {
  return x[0]! * x[1]!
}
export function scalarMulDual(d: Dual, x: Real[]): Real {
  return d.mul(x[0]!, x[1]!)
}

// ── dot product of two length-n vectors (x = [a | b]) ──────────────────────────────────────────

export function dotPlain(x: Float64Array, n: number): number {
  let s = 0
  for (let i = 0; i < n; i++) s += x[i]! * x[n + i]!
  return s
}
/** As written against the scalar API: one multiplication and one addition per element. */
export function dotDual(d: Dual, x: Real[], n: number): Real {
  let s = d.mul(x[0]!, x[n]!)
  for (let i = 1; i < n; i++) s = d.add(s, d.mul(x[i]!, x[n + i]!))
  return s
}

// ── sum of a matrix–vector product: Σᵢ Σⱼ Mᵢⱼ vⱼ (x = [M row-major n×n | v]) ───────────────────

export function sumMatVecPlain(x: Float64Array, n: number): number {
  const v = n * n
  let s = 0
  for (let i = 0; i < n; i++) {
    let r = 0
    for (let j = 0; j < n; j++) r += x[i * n + j]! * x[v + j]!
    s += r
  }
  return s
}
export function sumMatVecDual(d: Dual, x: Real[], n: number): Real {
  const v = n * n
  let s = d.constant(0)
  for (let i = 0; i < n; i++) {
    let r = d.mul(x[i * n]!, x[v]!)
    for (let j = 1; j < n; j++) r = d.add(r, d.mul(x[i * n + j]!, x[v + j]!))
    s = d.add(s, r)
  }
  return s
}

// ── rotate_vec_by_quat (Krawiec et al.), over a batch of n pairs; loss Σ ⟨c, rot(vᵢ, qᵢ)⟩ ────────
// x = n × [v.x v.y v.z q.x q.y q.z q.w]; the cotangent c = (1, −2, 0.5) makes the loss scalar

export const ROT_COTANGENT = [1, -2, 0.5] as const

export function rotatePlain(x: Float64Array, n: number): number {
  const [c0, c1, c2] = ROT_COTANGENT
  let s = 0
  for (let k = 0; k < n; k++) {
    const o = 7 * k
    const vx = x[o]!,
      vy = x[o + 1]!,
      vz = x[o + 2]!,
      ux = x[o + 3]!,
      uy = x[o + 4]!,
      uz = x[o + 5]!,
      w = x[o + 6]!
    const a = 2 * (ux * vx + uy * vy + uz * vz)
    const b = w * w - (ux * ux + uy * uy + uz * uz)
    const c = 2 * w
    const rx = a * ux + b * vx + c * (uy * vz - uz * vy)
    const ry = a * uy + b * vy + c * (uz * vx - ux * vz)
    const rz = a * uz + b * vz + c * (ux * vy - uy * vx)
    s += c0 * rx + c1 * ry + c2 * rz
  }
  return s
}
/** One rotation, the same scalar code as `rotatePlain` against the dual API. */
function rotateOne(d: Dual, vx: Real, vy: Real, vz: Real, ux: Real, uy: Real, uz: Real, w: Real, out: Real[]): Real[] {
  const a = d.scale(d.add(d.add(d.mul(ux, vx), d.mul(uy, vy)), d.mul(uz, vz)), 2)
  const b = d.sub(d.square(w), d.add(d.add(d.square(ux), d.square(uy)), d.square(uz)))
  const c = d.scale(w, 2)
  out[0] = d.add(d.add(d.mul(a, ux), d.mul(b, vx)), d.mul(c, d.sub(d.mul(uy, vz), d.mul(uz, vy))))
  out[1] = d.add(d.add(d.mul(a, uy), d.mul(b, vy)), d.mul(c, d.sub(d.mul(uz, vx), d.mul(ux, vz))))
  out[2] = d.add(d.add(d.mul(a, uz), d.mul(b, vz)), d.mul(c, d.sub(d.mul(ux, vy), d.mul(uy, vx))))
  return out
}
const rotated: Real[] = [0 as Real, 0 as Real, 0 as Real]
export function rotateDual(d: Dual, x: Real[], n: number): Real {
  let s = d.constant(0)
  for (let k = 0; k < n; k++) {
    const o = 7 * k
    const r = rotateOne(d, x[o]!, x[o + 1]!, x[o + 2]!, x[o + 3]!, x[o + 4]!, x[o + 5]!, x[o + 6]!, rotated)
    s = d.add(s, d.add(d.combine(ROT_COTANGENT[0], r[0]!, ROT_COTANGENT[1], r[1]!), d.scale(r[2]!, ROT_COTANGENT[2])))
  }
  return s
}
// ── neural: a small MLP, tanh hidden layers, squared error against targets ────────────────────
// x = [W₁ (out×in row-major) | b₁ | W₂ | b₂ | …]; the batch inputs and targets are constants

export interface MlpData {
  layers: number[]
  /** batch × layers[0] */
  inputs: Float64Array
  /** batch × layers[last] */
  targets: Float64Array
  batch: number
}

export function mlpParameterCount(layers: number[]): number {
  let p = 0
  for (let l = 1; l < layers.length; l++) p += layers[l]! * (layers[l - 1]! + 1)
  return p
}

/** Scratch buffers for the plain MLP, so the baseline does not allocate per call. */
export function mlpWorkspace(layers: number[]): Float64Array[] {
  return layers.map((w) => new Float64Array(w))
}

export function mlpPlain(x: Float64Array, data: MlpData, ws: Float64Array[]): number {
  const { layers, inputs, targets, batch } = data
  const L = layers.length
  let loss = 0
  for (let s = 0; s < batch; s++) {
    const a0 = ws[0]!
    for (let i = 0; i < layers[0]!; i++) a0[i] = inputs[s * layers[0]! + i]!
    let p = 0
    for (let l = 1; l < L; l++) {
      const nin = layers[l - 1]!,
        nout = layers[l]!,
        prev = ws[l - 1]!,
        next = ws[l]!
      const bias = p + nout * nin
      for (let o = 0; o < nout; o++) {
        let z = x[bias + o]!
        for (let i = 0; i < nin; i++) z += x[p + o * nin + i]! * prev[i]!
        next[o] = l < L - 1 ? Math.tanh(z) : z
      }
      p = bias + nout
    }
    const out = ws[L - 1]!,
      m = layers[L - 1]!
    for (let o = 0; o < m; o++) {
      const e = out[o]! - targets[s * m + o]!
      loss += e * e
    }
  }
  return loss / batch
}

export function mlpDual(d: Dual, x: Real[], data: MlpData): Real {
  const { layers, inputs, targets, batch } = data
  const L = layers.length
  let loss = d.constant(0)
  for (let s = 0; s < batch; s++) {
    let prev: Real[] = []
    let p = 0
    for (let l = 1; l < L; l++) {
      const nin = layers[l - 1]!,
        nout = layers[l]!
      const bias = p + nout * nin
      const next: Real[] = []
      for (let o = 0; o < nout; o++) {
        // the first layer reads constant inputs (a linear node), the others a dot product
        const w = p + o * nin
        const z = d.add(l === 1 ? d.linear(inputs, x, s * nin, w, nin) : d.dot(x, prev, w, 0, nin), x[bias + o]!)
        next.push(l < L - 1 ? d.tanh(z) : z)
      }
      prev = next
      p = bias + nout
    }
    const m = layers[L - 1]!
    for (let o = 0; o < m; o++) loss = d.add(loss, d.square(d.offset(prev[o]!, -targets[s * m + o]!)))
  }
  return d.scale(loss, 1 / batch)
}

// ── particles: n particles in 2D, force −0.5·p and friction −0.2·v, `steps` Euler steps of 0.05;
// loss Σ xᵢ·yᵢ of the final positions. x = n × [px py vx vy] ───────────────────────────────────

export const PARTICLE_DT = 0.05

export function particlesPlain(x: Float64Array, n: number, steps: number): number {
  let s = 0
  for (let k = 0; k < n; k++) {
    let px = x[4 * k]!,
      py = x[4 * k + 1]!,
      vx = x[4 * k + 2]!,
      vy = x[4 * k + 3]!
    for (let t = 0; t < steps; t++) {
      const ax = -0.5 * px - 0.2 * vx,
        ay = -0.5 * py - 0.2 * vy
      px += PARTICLE_DT * vx
      py += PARTICLE_DT * vy
      vx += PARTICLE_DT * ax
      vy += PARTICLE_DT * ay
    }
    s += px * py
  }
  return s
}
export function particlesDual(d: Dual, x: Real[], n: number, steps: number): Real {
  let s = d.constant(0)
  for (let k = 0; k < n; k++) {
    let px = x[4 * k]!,
      py = x[4 * k + 1]!,
      vx = x[4 * k + 2]!,
      vy = x[4 * k + 3]!
    for (let t = 0; t < steps; t++) {
      // linear combinations with constant coefficients are one node each (`combine`, `addScaled`)
      const ax = d.combine(-0.5, px, -0.2, vx),
        ay = d.combine(-0.5, py, -0.2, vy)
      px = d.addScaled(px, vx, PARTICLE_DT)
      py = d.addScaled(py, vy, PARTICLE_DT)
      vx = d.addScaled(vx, ax, PARTICLE_DT)
      vy = d.addScaled(vy, ay, PARTICLE_DT)
    }
    s = d.add(s, d.mul(px, py))
  }
  return s
}
