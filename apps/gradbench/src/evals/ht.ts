/**
 * ht: ADBench's hand tracking. `ht_pose` poses the hand mesh by linear-blend skinning: θ is
 * spread into per-bone Euler angles, each bone's relative transform is its base transform times
 * the rotation, the absolute transforms are chained from the wrist, every vertex is the weighted
 * sum of its bones' transforms (times the inverse base absolute) applied to its base position,
 * and the global angle-axis rotation and translation finish it. `ht` ("complicated" variant)
 * interpolates each point's triangle with its barycentric `us`; `ht_simple` takes the vertex
 * itself. Every intermediate lives in a workspace array: the program is straight-line updates,
 * which is what forward mode wants.
 *
 * The Jacobian is forward mode: one run of the tangent program at width 28 (26 for the simple
 * variant). Directions 2…27 seed θ; directions 0 and 1 seed *every* point's u₀ and u₁ at once —
 * point i's residuals depend on its own `us` only, so the tangent of residual row 3i+k along
 * "all u₀" is exactly ∂/∂u₀ of point i. The tangent arrays are element-major (residual r's
 * direction j at r·w + j), which is the row-major [3c][28] Jacobian itself.
 */
import { compileTangent, type TenetFunction } from 'tenet'
import { compile, fn } from './compile.js'
import { InputError, flat, matrix, record, list } from './input.js'
import type { EvalModule, Prepared } from './types.js'

// R = Rz(ez)·Ry(ey)·Rx(ex) with ex = pose[o], ez = pose[o + 1], ey = pose[o + 2] (ADBench's "xzy")
const eulerRows = (o: string): string[][] => {
  const cx = `cos(pose[${o}])`, sx = `sin(pose[${o}])`
  const cz = `cos(pose[${o} + 1])`, sz = `sin(pose[${o} + 1])`
  const cy = `cos(pose[${o} + 2])`, sy = `sin(pose[${o} + 2])`
  return [
    [`${cz} * ${cy}`, `${cz} * ${sy} * ${sx} - ${sz} * ${cx}`, `${sz} * ${sx} + ${cz} * ${sy} * ${cx}`],
    [`${sz} * ${cy}`, `${cz} * ${cx} + ${sz} * ${sy} * ${sx}`, `${sz} * ${sy} * ${cx} - ${cz} * ${sx}`],
    [`-${sy}`, `${cy} * ${sx}`, `${cy} * ${cx}`],
  ]
}

// Rodrigues' rotation from the angle-axis θ[0..2] (norm in rot[9]): entry (r, c)
const angleAxis = (r: number, c: number): string => {
  const a = (i: number): string => `theta[${i}] / rot[9]`
  const co = 'cos(rot[9])', si = 'sin(rot[9])'
  if (r === c) return `${a(r)} * ${a(r)} + (1.0 - ${a(r)} * ${a(r)}) * ${co}`
  const k = 3 - r - c // the third axis
  const sign = (r + 1) % 3 === c ? '-' : '+' // (0,1), (1,2), (2,0): −; the others +
  return `${a(r)} * ${a(c)} * (1.0 - ${co}) ${sign} ${a(k)} * ${si}`
}

const PARAMS = 'theta: f64[], pose: f64[], rb: f64[], rot: f64[], rel: f64[], absm: f64[], tr: f64[], pos: f64[], gpos: f64[], brel: f64[], iba: f64[], bpos: f64[], wts: f64[], parents: i32[], nb: i32, nv: i32, mirror: i32'
const ARGS = 'theta, pose, rb, rot, rel, absm, tr, pos, gpos, brel, iba, bpos, wts, parents, nb, nv, mirror'

export const htSource = `
fn ht_pose(${PARAMS}) {
  // pose parameters, column by column (3 per column): 0 global rotation, 2 translation, 3 + i bone i
  for r in 0..3 {
    pose[r] += theta[r]
    pose[6 + r] += theta[3 + r]
  }
  for f in 0..5 {
    pose[3 * (5 + 4 * f)] += theta[6 + 4 * f]
    pose[3 * (5 + 4 * f) + 1] += theta[7 + 4 * f]
    pose[3 * (6 + 4 * f)] += theta[8 + 4 * f]
    pose[3 * (7 + 4 * f)] += theta[9 + 4 * f]
  }
  // relative transforms: base_relatives[i] · [R 0; 0 1]
  for i in 0..nb {
${eulerRows('3 * (i + 3)').flatMap((row, r) => row.map((e, c) => `    rb[9 * i + ${3 * r + c}] += ${e}`)).join('\n')}
    for r in 0..4 {
      for c in 0..3 {
        rel[16 * i + 4 * r + c] += brel[16 * i + 4 * r] * rb[9 * i + c] + brel[16 * i + 4 * r + 1] * rb[9 * i + 3 + c] + brel[16 * i + 4 * r + 2] * rb[9 * i + 6 + c]
      }
      rel[16 * i + 4 * r + 3] += brel[16 * i + 4 * r + 3]
    }
  }
  // absolute transforms, chained from the root
  for i in 0..nb {
    if (parents[i] < 0, ~) {
      for e in 0..16 {
        absm[16 * i + e] += rel[16 * i + e]
      }
    } else {
      for r in 0..4 {
        for c in 0..4 {
          absm[16 * i + 4 * r + c] += absm[16 * parents[i] + 4 * r] * rel[16 * i + c] + absm[16 * parents[i] + 4 * r + 1] * rel[16 * i + 4 + c] + absm[16 * parents[i] + 4 * r + 2] * rel[16 * i + 8 + c] + absm[16 * parents[i] + 4 * r + 3] * rel[16 * i + 12 + c]
        }
      }
    }
  }
  // skinning transforms: absolute · inverse base absolute (rows 0..2)
  for i in 0..nb {
    for r in 0..3 {
      for c in 0..4 {
        tr[16 * i + 4 * r + c] += absm[16 * i + 4 * r] * iba[16 * i + c] + absm[16 * i + 4 * r + 1] * iba[16 * i + 4 + c] + absm[16 * i + 4 * r + 2] * iba[16 * i + 8 + c] + absm[16 * i + 4 * r + 3] * iba[16 * i + 12 + c]
      }
    }
  }
  // linear-blend skinning
  for v in 0..nv {
    for i in 0..nb {
      for r in 0..3 {
        pos[3 * v + r] += wts[v * nb + i] * (tr[16 * i + 4 * r] * bpos[4 * v] + tr[16 * i + 4 * r + 1] * bpos[4 * v + 1] + tr[16 * i + 4 * r + 2] * bpos[4 * v + 2] + tr[16 * i + 4 * r + 3] * bpos[4 * v + 3])
      }
    }
  }
  // global rotation (angle-axis; identity below 1e-4) and translation; a mirrored model flips x
  rot[9] += sqrt(theta[0] * theta[0] + theta[1] * theta[1] + theta[2] * theta[2])
  if (rot[9] < 0.0001, ~) {
    rot[0] += 1.0
    rot[4] += 1.0
    rot[8] += 1.0
  } else {
${[0, 1, 2].flatMap((r) => [0, 1, 2].map((c) => `    rot[${3 * r + c}] += ${angleAxis(r, c)}`)).join('\n')}
  }
  for v in 0..nv {
    for r in 0..3 {
      gpos[3 * v + r] += rot[3 * r] * f64(1 - 2 * mirror) * pos[3 * v] + rot[3 * r + 1] * pos[3 * v + 1] + rot[3 * r + 2] * pos[3 * v + 2] + theta[3 + r]
    }
  }
}

fn ht(err: f64[], us: f64[], pts: f64[], tris: i32[], corr: i32[], ${PARAMS}) {
  ht_pose(${ARGS})
  for i in 0..len(corr) {
    for r in 0..3 {
      err[3 * i + r] += pts[3 * i + r] - (us[2 * i] * gpos[3 * tris[3 * corr[i]] + r] + us[2 * i + 1] * gpos[3 * tris[3 * corr[i] + 1] + r] + (1.0 - us[2 * i] - us[2 * i + 1]) * gpos[3 * tris[3 * corr[i] + 2] + r])
    }
  }
}

fn ht_simple(err: f64[], pts: f64[], corr: i32[], ${PARAMS}) {
  ht_pose(${ARGS})
  for i in 0..len(corr) {
    for r in 0..3 {
      err[3 * i + r] += pts[3 * i + r] - gpos[3 * corr[i] + r]
    }
  }
}
`

interface Instance {
  simple: boolean
  c: number
  err: Float64Array
  us: Float64Array
  pts: Float64Array
  tris: Int32Array
  corr: Int32Array
  /** ht_pose's arguments, in order */
  pose: unknown[]
  /** the float arrays among them, for the tangent's zero seeds */
  poseFloats: Float64Array[]
  work: Float64Array[]
}

const ints = (o: Record<string, unknown>, key: string, size?: number): Int32Array => Int32Array.from(flat(o, key, size))

function parse(input: unknown): Instance {
  const o = record(input)
  const data = record(o.data)
  const model = record(data.model)
  const nb = Array.isArray(model.parents) ? model.parents.length : 0
  const nv = Array.isArray(model.base_positions) ? model.base_positions.length : 0
  if (nb < 21 || nv < 1) throw new InputError('ht needs a hand model with at least 21 bones and some vertices')
  const theta = flat(o, 'theta', 26)
  const corr = ints(data, 'correspondences')
  const c = corr.length
  const pts = flat(data, 'points', 3 * c)
  const us = flat(o, 'us')
  const simple = us.length === 0
  if (!simple && us.length !== 2 * c) throw new InputError(`ht needs us: double[${c}][2] (or empty)`)
  const tris = simple ? new Int32Array(0) : ints(model, 'triangles')
  const work = [3 * (nb + 3), 9 * nb, 10, 16 * nb, 16 * nb, 16 * nb, 3 * nv, 3 * nv].map((k) => new Float64Array(k))
  const consts = [flat(model, 'base_relatives', 16 * nb), flat(model, 'inverse_base_absolutes', 16 * nb), flat(model, 'base_positions', 4 * nv), flat(model, 'weights', nb * nv)]
  const pose = [theta, ...work, ...consts, ints(model, 'parents', nb), nb, nv, model.is_mirrored === true ? 1 : 0]
  return { simple, c, err: new Float64Array(3 * c), us, pts, tris, corr, pose, poseFloats: [theta, ...work, ...consts], work }
}

function prefix(inst: Instance): unknown[] {
  return inst.simple ? [inst.err, inst.pts, inst.corr] : [inst.err, inst.us, inst.pts, inst.tris, inst.corr]
}

function reset(inst: Instance): void {
  inst.err.fill(0)
  for (const a of inst.work) a.fill(0)
}

const functionOf = (inst: Instance): TenetFunction => fn(compile(htSource), inst.simple ? 'ht_simple' : 'ht')

export const ht: EvalModule = {
  objective(input): Prepared {
    const inst = parse(input)
    const f = functionOf(inst).core
    const args = [...prefix(inst), ...inst.pose]
    return {
      run: () => {
        reset(inst)
        f(...args)
      },
      output: () => list(inst.err),
    }
  },
  jacobian(input): Prepared {
    const inst = parse(input)
    const w = inst.simple ? 26 : 28
    const off = inst.simple ? 0 : 2
    const t = compileTangent(functionOf(inst), w).tangent.core
    // tangents of the float arrays, in parameter order: err, (us), pts, then ht_pose's
    const tErr = new Float64Array(3 * inst.c * w)
    const tUs = new Float64Array(inst.us.length * w)
    for (let i = 0; i < inst.c && !inst.simple; i++) {
      tUs[2 * i * w] = 1 // u₀ of every point along direction 0
      tUs[(2 * i + 1) * w + 1] = 1 // u₁ along direction 1
    }
    const tPts = new Float64Array(inst.pts.length * w)
    const tPose = inst.poseFloats.map((a) => new Float64Array(a.length * w))
    const tTheta = tPose[0]!
    for (let j = 0; j < 26; j++) tTheta[j * w + off + j] = 1
    const args = [...prefix(inst), ...inst.pose, tErr, ...(inst.simple ? [] : [tUs]), tPts, ...tPose]
    return {
      run: () => {
        reset(inst)
        tErr.fill(0)
        for (let k = 1; k < tPose.length; k++) tPose[k]!.fill(0)
        t(...args)
      },
      output: () => matrix(tErr, 3 * inst.c, w),
    }
  },
}
