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
 * The Jacobian is forward mode: 28 tangent directions (26 for the simple variant), 4 per run of
 * the width-4 tangent program. Directions 2…27 seed θ; directions 0 and 1 seed *every* point's u₀
 * and u₁ at once — point i's residuals depend on its own `us` only, so the tangent of residual
 * row 3i+k along "all u₀" is exactly ∂/∂u₀ of point i. The tangent arrays are element-major
 * (residual r's direction k at r·4 + k): rows of the dense [3c][28] Jacobian.
 */
import { compileTangent, type TenetFunction } from 'tenet'
import { compile, fn } from './compile.js'
import { InputError, flat, matrix, record, list } from './input.js'
import type { EvalModule, Prepared } from './types.js'

// R = Rz(ez)·Ry(ey)·Rx(ex) with ex, ez, ey = pose[o], pose[o + 1], pose[o + 2] (ADBench's "xzy"),
// from their cosines and sines cs[6i …]: (cx, sx, cz, sz, cy, sy)
const eulerRows = (): string[][] => {
  const [cx, sx, cz, sz, cy, sy] = [0, 1, 2, 3, 4, 5].map((j) => `cs[6 * i + ${j}]`)
  return [
    [`${cz} * ${cy}`, `${cz} * ${sy} * ${sx} - ${sz} * ${cx}`, `${sz} * ${sx} + ${cz} * ${sy} * ${cx}`],
    [`${sz} * ${cy}`, `${cz} * ${cx} + ${sz} * ${sy} * ${sx}`, `${sz} * ${sy} * ${cx} - ${cz} * ${sx}`],
    [`-${sy}`, `${cy} * ${sx}`, `${cy} * ${cx}`],
  ]
}

// Rodrigues' rotation from the angle-axis θ[0..2]: rot[9] its norm, rot[10..12] the unit axis,
// rot[13], rot[14] the cosine and sine; entry (r, c)
const angleAxis = (r: number, c: number): string => {
  const a = (i: number): string => `rot[${10 + i}]`
  const co = 'rot[13]',
    si = 'rot[14]'
  if (r === c) return `${a(r)} * ${a(r)} + (1.0 - ${a(r)} * ${a(r)}) * ${co}`
  const k = 3 - r - c // the third axis
  const sign = (r + 1) % 3 === c ? '-' : '+' // (0,1), (1,2), (2,0): −; the others +
  return `${a(r)} * ${a(c)} * (1.0 - ${co}) ${sign} ${a(k)} * ${si}`
}

const PARAMS =
  'theta: f64[], pose: f64[], cs: f64[], rb: f64[], rot: f64[], rel: f64[], absm: f64[], tr: f64[], pos: f64[], gpos: f64[], brel: f64[], iba: f64[], bpos: f64[], wts: f64[], parents: i32[], nb: i32, nv: i32, mirror: i32'
const ARGS = 'theta, pose, cs, rb, rot, rel, absm, tr, pos, gpos, brel, iba, bpos, wts, parents, nb, nv, mirror'

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
    cs[6 * i] += cos(pose[3 * (i + 3)])
    cs[6 * i + 1] += sin(pose[3 * (i + 3)])
    cs[6 * i + 2] += cos(pose[3 * (i + 3) + 1])
    cs[6 * i + 3] += sin(pose[3 * (i + 3) + 1])
    cs[6 * i + 4] += cos(pose[3 * (i + 3) + 2])
    cs[6 * i + 5] += sin(pose[3 * (i + 3) + 2])
${eulerRows()
  .flatMap((row, r) => row.map((e, c) => `    rb[9 * i + ${3 * r + c}] += ${e}`))
  .join('\n')}
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
  // linear-blend skinning (a vertex has weights for a few bones only: the zeros are skipped)
  for v in 0..nv {
    for i in 0..nb {
      if (wts[v * nb + i] != 0.0, ~) {
        for r in 0..3 {
          pos[3 * v + r] += wts[v * nb + i] * (tr[16 * i + 4 * r] * bpos[4 * v] + tr[16 * i + 4 * r + 1] * bpos[4 * v + 1] + tr[16 * i + 4 * r + 2] * bpos[4 * v + 2] + tr[16 * i + 4 * r + 3] * bpos[4 * v + 3])
        }
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
    rot[10] += theta[0] / rot[9]
    rot[11] += theta[1] / rot[9]
    rot[12] += theta[2] / rot[9]
    rot[13] += cos(rot[9])
    rot[14] += sin(rot[9])
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
  const work = [3 * (nb + 3), 6 * nb, 9 * nb, 15, 16 * nb, 16 * nb, 16 * nb, 3 * nv, 3 * nv].map(
    (k) => new Float64Array(k),
  )
  const consts = [
    flat(model, 'base_relatives', 16 * nb),
    flat(model, 'inverse_base_absolutes', 16 * nb),
    flat(model, 'base_positions', 4 * nv),
    flat(model, 'weights', nb * nv),
  ]
  const pose = [theta, ...work, ...consts, ints(model, 'parents', nb), nb, nv, model.is_mirrored === true ? 1 : 0]
  return {
    simple,
    c,
    err: new Float64Array(3 * c),
    us,
    pts,
    tris,
    corr,
    pose,
    poseFloats: [theta, ...work, ...consts],
    work,
  }
}

function prefix(inst: Instance): unknown[] {
  return inst.simple ? [inst.err, inst.pts, inst.corr] : [inst.err, inst.us, inst.pts, inst.tris, inst.corr]
}

function reset(inst: Instance): void {
  inst.err.fill(0)
  for (const a of inst.work) a.fill(0)
}

/**
 * Columns per tangent sweep. Wider sweeps share more of the primal work, but the generated
 * tangent function grows with the width and V8 stops optimising it beyond about this width: on
 * this program (a loaded 2-core machine, interleaved runs) width 7 took about 100× longer than
 * width 4 for the whole Jacobian, widths 14 and 28 no better.
 */
const WIDTH = 4

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
    const D = inst.simple ? 26 : 28 // Jacobian columns
    const off = inst.simple ? 0 : 2 // θ's first column
    const t = compileTangent(functionOf(inst), WIDTH).tangent.core
    const sweeps = Math.ceil(D / WIDTH)
    const rows = 3 * inst.c
    // per sweep, the seeds of `us` and θ for its WIDTH columns; the other tangents start at 0
    const seeds = Array.from({ length: sweeps }, (_, s) => {
      const tUs = new Float64Array(inst.us.length * WIDTH)
      const tTheta = new Float64Array(26 * WIDTH)
      for (let k = 0; k < WIDTH; k++) {
        const col = s * WIDTH + k
        if (col >= D) break
        if (col < off)
          for (let i = 0; i < inst.c; i++) tUs[(2 * i + col) * WIDTH + k] = 1 // u₀ (u₁) of every point
        else tTheta[(col - off) * WIDTH + k] = 1
      }
      return { tUs, tTheta }
    })
    const tErr = new Float64Array(rows * WIDTH)
    const tPts = new Float64Array(inst.pts.length * WIDTH)
    const tRest = inst.poseFloats.slice(1).map((a) => new Float64Array(a.length * WIDTH))
    const J = new Float64Array(rows * D)
    return {
      run: () => {
        for (let s = 0; s < sweeps; s++) {
          reset(inst)
          tErr.fill(0)
          for (const a of tRest) a.fill(0)
          const { tUs, tTheta } = seeds[s]!
          t(...prefix(inst), ...inst.pose, tErr, ...(inst.simple ? [] : [tUs]), tPts, tTheta, ...tRest)
          for (let r = 0; r < rows; r++) {
            for (let k = 0; k < WIDTH && s * WIDTH + k < D; k++) J[r * D + s * WIDTH + k] = tErr[r * WIDTH + k]!
          }
        }
      },
      output: () => matrix(J, rows, D),
    }
  },
}
