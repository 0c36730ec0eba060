import { createRng } from '../math/prng.js'
import { formatFixed, readText, roundFixed, tokenize, writeText } from './text.js'

/** Camera parameters: r1 r2 r3 (Rodrigues), C1 C2 C3 (centre), f, u0 v0, k1 k2. */
export const BA_CAMERA_PARAMS = 11

/**
 * One bundle-adjustment instance in ADBench's layout: `n` cameras (11 numbers each), `m` points
 * (3 each), `p` observations each with a weight, a (camera, point) pair and a 2-d feature.
 */
export interface BaInstance {
  n: number
  m: number
  p: number
  cams: Float64Array
  X: Float64Array
  w: Float64Array
  /** 2p: camera index, point index per observation */
  obs: Int32Array
  feats: Float64Array
}

/**
 * Parse ADBench's BA text: `n m p`, then ONE camera, ONE point, ONE weight and ONE feature which
 * stand for all of them, exactly as ADBench's C++ reader expands them: every camera is the one
 * camera, every point the one point, every weight and feature the one given, and observation i
 * pairs camera i mod n with point i mod m.
 */
export function parseBa(text: string): BaInstance {
  const t = tokenize(text)
  const need = 3 + BA_CAMERA_PARAMS + 3 + 1 + 2
  if (t.length < need) throw new SyntaxError(`BA file: expected ${need} numbers, found ${t.length}`)
  const n = t[0]
  const m = t[1]
  const p = t[2]
  for (const [name, v] of [
    ['n', n],
    ['m', m],
    ['p', p],
  ] as const)
    if (!Number.isInteger(v) || v < 1) throw new SyntaxError(`BA file: bad ${name} = ${v}`)
  const cam = t.subarray(3, 3 + BA_CAMERA_PARAMS)
  const point = t.subarray(3 + BA_CAMERA_PARAMS, 3 + BA_CAMERA_PARAMS + 3)
  const weight = t[3 + BA_CAMERA_PARAMS + 3]
  const feat = t.subarray(need - 2, need)
  return replicateBa(n, m, p, cam, point, weight, feat)
}

function replicateBa(
  n: number,
  m: number,
  p: number,
  cam: ArrayLike<number>,
  point: ArrayLike<number>,
  weight: number,
  feat: ArrayLike<number>,
): BaInstance {
  const cams = new Float64Array(n * BA_CAMERA_PARAMS)
  for (let i = 0; i < n; i++) cams.set(cam, i * BA_CAMERA_PARAMS)
  const X = new Float64Array(m * 3)
  for (let i = 0; i < m; i++) X.set(point, i * 3)
  const w = new Float64Array(p).fill(weight)
  const obs = new Int32Array(2 * p)
  const feats = new Float64Array(2 * p)
  for (let i = 0; i < p; i++) {
    obs[2 * i] = i % n
    obs[2 * i + 1] = i % m
    feats[2 * i] = feat[0]
    feats[2 * i + 1] = feat[1]
  }
  return { n, m, p, cams, X, w, obs, feats }
}

export function readBa(path: string): BaInstance {
  return parseBa(readText(path))
}

/**
 * ADBench's text form. The format stores one camera, point, weight and feature, so only
 * instances in the replicated form (as read or generated) can be written; others throw.
 */
export function formatBa(inst: BaInstance): string {
  assertReplicated(inst)
  const row = (a: Float64Array, start: number, len: number): string => {
    let s = ''
    for (let j = 0; j < len; j++) s += formatFixed(a[start + j])
    return s
  }
  return [
    `${inst.n} ${inst.m} ${inst.p}`,
    row(inst.cams, 0, BA_CAMERA_PARAMS),
    row(inst.X, 0, 3),
    inst.w[0].toFixed(6),
    row(inst.feats, 0, 2),
    '',
  ].join('\n')
}

export function writeBa(path: string, inst: BaInstance): void {
  writeText(path, formatBa(inst))
}

function assertReplicated(inst: BaInstance): void {
  const { n, m, p } = inst
  for (let i = 0; i < n * BA_CAMERA_PARAMS; i++)
    if (inst.cams[i] !== inst.cams[i % BA_CAMERA_PARAMS])
      throw new Error('writeBa: cameras differ; ADBench text stores one camera')
  for (let i = 0; i < m * 3; i++)
    if (inst.X[i] !== inst.X[i % 3]) throw new Error('writeBa: points differ; ADBench text stores one point')
  for (let i = 0; i < p; i++) {
    if (inst.w[i] !== inst.w[0]) throw new Error('writeBa: weights differ; ADBench text stores one weight')
    if (inst.feats[2 * i] !== inst.feats[0] || inst.feats[2 * i + 1] !== inst.feats[1])
      throw new Error('writeBa: features differ; ADBench text stores one feature')
    if (inst.obs[2 * i] !== i % n || inst.obs[2 * i + 1] !== i % m)
      throw new Error('writeBa: observation pairs are not (i mod n, i mod m)')
  }
}

/**
 * A seeded instance of ADBench's shape: one camera looking at one point in front of it (so the
 * projection is well conditioned), with a focal length in the hundreds of pixels, small radial
 * distortion, a weight in (0, 1) and a feature near the projection. Values are rounded to the 6
 * decimals of the text format, so write + read gives back the same instance.
 */
export function generateBa(options: { n: number; m: number; p: number; seed?: number }): BaInstance {
  const rng = createRng(options.seed ?? 1)
  const r = (scale: number, offset = 0): number => roundFixed(offset + scale * rng.normal())
  const cam = [
    r(0.3),
    r(0.3),
    r(0.3), // rotation
    r(1),
    r(1),
    r(1), // centre
    roundFixed(300 + 400 * rng.uniform()), // focal length
    r(2),
    r(2), // principal point
    r(0.01),
    r(0.001), // radial distortion
  ]
  // a point in front of the camera: centre + R^T (0, 0, depth) + jitter, depth in [3, 8)
  const depth = 3 + 5 * rng.uniform()
  const forward = rotateTransposed(cam.slice(0, 3), [0, 0, depth])
  const point = [0, 1, 2].map((i) => roundFixed(cam[3 + i] + forward[i] + 0.5 * rng.normal()))
  const weight = roundFixed(0.1 + 0.9 * rng.uniform())
  const feat = [r(50), r(50)]
  return replicateBa(options.n, options.m, options.p, cam, point, weight, feat)
}

/** R^T v for the Rodrigues rotation R(r) (rotation by -θ about the same axis). */
function rotateTransposed(r: number[], v: number[]): number[] {
  const theta = Math.hypot(r[0], r[1], r[2])
  if (theta === 0) return v.slice()
  const k = r.map((x) => -x / theta)
  const c = Math.cos(theta)
  const s = Math.sin(theta)
  const dot = k[0] * v[0] + k[1] * v[1] + k[2] * v[2]
  const cross = [k[1] * v[2] - k[2] * v[1], k[2] * v[0] - k[0] * v[2], k[0] * v[1] - k[1] * v[0]]
  return [0, 1, 2].map((i) => v[i] * c + cross[i] * s + k[i] * dot * (1 - c))
}
