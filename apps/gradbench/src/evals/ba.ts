/**
 * ba: ADBench's bundle adjustment in GradBench's replicated form (n cameras, m points, p
 * observations; observation i sees camera i mod n and point i mod m). The program is the one
 * the benchmark suite uses, `examples.baSource` of `tenet`:
 *
 * - `ba_objective`: per observation, Rodrigues rotation (first-order branch at θ = 0), perspective
 *   division, radial distortion, focal length and principal point, in ancillas that `~routine`
 *   uncomputes; the weighted reprojection errors and 1 − w² for every observation.
 * - `ba_block` (`examples.baBlockSource`): the Jacobian form, one observation as a block program.
 *   `blockJacobian` runs it over per-observation copies of camera and point: by counts (2 rows,
 *   15 columns) one reverse sweep carrying both rows, fused with each observation's forward run,
 *   in one compiled loop; the weight rows are −2w.
 *
 * Both compute all p observations; the response is GradBench's compressed form.
 */
import { blockJacobian, examples } from 'tenet'
import { compile, fn } from './compile.js'
import { flat, int, num, record } from './input.js'
import type { EvalModule, Prepared } from './types.js'

const { baSource, baBlockSource, BA_WORKSPACE: W } = examples

interface Instance {
  n: number
  m: number
  p: number
  cams: Float64Array
  X: Float64Array
  w: Float64Array
  feats: Float64Array
  obs: Int32Array
}

function parse(input: unknown): Instance {
  const o = record(input)
  const n = int(o, 'n'),
    m = int(o, 'm'),
    p = int(o, 'p')
  if (n < 1 || m < 1 || p < 1) throw new Error('ba needs n, m, p ≥ 1')
  const cam = flat(o, 'cam', 11),
    x = flat(o, 'x', 3),
    feat = flat(o, 'feat', 2),
    w0 = num(o, 'w')
  const cams = new Float64Array(11 * n),
    X = new Float64Array(3 * m)
  for (let i = 0; i < n; i++) cams.set(cam, 11 * i)
  for (let i = 0; i < m; i++) X.set(x, 3 * i)
  const w = new Float64Array(p).fill(w0)
  const feats = new Float64Array(2 * p),
    obs = new Int32Array(2 * p)
  for (let i = 0; i < p; i++) {
    feats.set(feat, 2 * i)
    obs[2 * i] = i % n
    obs[2 * i + 1] = i % m
  }
  return { n, m, p, cams, X, w, feats, obs }
}

/** Non-zeros per reprojection row: 11 camera, 3 point, 1 weight column. */
const NZ = 15

export const ba: EvalModule = {
  objective(input): Prepared {
    const inst = parse(input)
    const f = fn(compile(baSource), 'ba_objective').core
    const reproj = new Float64Array(2 * inst.p),
      werr = new Float64Array(inst.p)
    return {
      run: () => {
        reproj.fill(0)
        werr.fill(0)
        f(reproj, werr, inst.cams, inst.X, inst.w, inst.obs, inst.feats, inst.p)
      },
      output: () => ({
        reproj_error: { elements: [reproj[0], reproj[1]], repeated: inst.p },
        w_err: { element: werr[0], repeated: inst.p },
      }),
    }
  },
  jacobian(input): Prepared {
    const inst = parse(input)
    const { n, m, p } = inst
    // one observation as a block program; the reprojection rows of all observations in one
    // compiled loop (by counts: one reverse sweep carrying both rows), over per-observation copies
    // of camera and point (made once, like ADBench's blocks)
    const jac = blockJacobian(fn(compile(baBlockSource), 'ba_block'), {
      sizes: [2, 11, 3, null, 2, W],
      inputs: [1, 2, 3],
      outputs: [0],
      workspace: [5],
    })
    const cam = new Float64Array(11 * p),
      pt = new Float64Array(3 * p)
    for (let i = 0; i < p; i++) {
      cam.set(inst.cams.subarray(11 * inst.obs[2 * i]!, 11 * inst.obs[2 * i]! + 11), 11 * i)
      pt.set(inst.X.subarray(3 * inst.obs[2 * i + 1]!, 3 * inst.obs[2 * i + 1]! + 3), 3 * i)
    }
    const r = new Float64Array(2 * p)
    const args = [r, cam, pt, inst.w, inst.feats, null]
    // CSR: 2p rows of 15 entries (ADBench's order is the block's), then p rows of 1
    const vals = new Float64Array(2 * NZ * p + p)
    const rows = vals.subarray(0, 2 * NZ * p)
    return {
      run: () => {
        jac.run(p, args, rows)
        for (let i = 0; i < p; i++) vals[2 * NZ * p + i] = -2 * inst.w[i]!
      },
      output: () => {
        // GradBench's compressed CSR: the first 30 row pointers and the last, the first 30 column
        // indices and values (observation 0's two rows) and the last (the last weight row)
        const rowPtr = Array.from({ length: 30 }, (_, r) => r * NZ)
        const colsOf = (i: number): number[] => {
          const c = inst.obs[2 * i]!,
            q = inst.obs[2 * i + 1]!
          return [
            ...Array.from({ length: 11 }, (_, j) => 11 * c + j),
            11 * n + 3 * q,
            11 * n + 3 * q + 1,
            11 * n + 3 * q + 2,
            11 * n + 3 * m + i,
          ]
        }
        const cols = [...colsOf(0), ...colsOf(0), 11 * n + 3 * m + p - 1]
        return {
          rows: [...rowPtr, 2 * NZ * p + p],
          cols: cols.slice(0, 30).concat(cols[30]!),
          vals: [...Array.from(vals.subarray(0, 30)), vals[vals.length - 1]!],
        }
      },
    }
  },
}
