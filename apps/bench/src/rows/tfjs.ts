/**
 * TensorFlow.js rows (pure-JS `cpu` backend, float32). Each workload is written the way a TF.js
 * user would: vectorised over points / observations / edges, derivatives by `tf.grad(s)`.
 * Errors are reported against the float64 plain-TS reference with the float32 tolerance.
 */
import { gmmIcfSize } from '../data/gmm-data.js'
import { checkClose, TOLERANCE } from '../harness/check.js'
import { defineRowFamily } from '../harness/registry.js'
import type { NotApplicable, PreparedRow } from '../harness/types.js'
import { ADBENCH_PI, wishartConstant } from '../objectives/gmm.js'
import { BA_BLOCK_COLS } from '../objectives/ba.js'
import { PETERSEN_EDGES, PETERSEN_NON_EDGES } from '../objectives/graph-embedding.js'
import { besselTermCount, factorial } from '../objectives/bessel.js'
import { loadTf, TF_ROW, type Tf } from '../peers/tfjs.js'
import { readFlat } from '../peers/read.js'
import type { Tensor, Scalar, Tensor1D } from '@tensorflow/tfjs'

const name = TF_ROW

/** Index map turning [exp(logdiag) | lower (column-wise) | 0] into a row-major d × d Q. */
export function gmmQIndex(d: number): Int32Array {
  const zero = gmmIcfSize(d)
  const idx = new Int32Array(d * d).fill(zero)
  let li = d
  for (let col = 0; col < d; col++) {
    idx[col * d + col] = col
    for (let row = col + 1; row < d; row++) idx[row * d + col] = li++
  }
  return idx
}

/** The largest term count over a batch of z (one unrolled series for the whole batch). */
export function besselBatchTermCount(nu: number, zs: ArrayLike<number>, atol = 1e-8): number {
  let most = 0
  for (let i = 0; i < zs.length; i++) most = Math.max(most, besselTermCount(nu, zs[i]!, atol))
  return most
}

function besselTf(tf: Tf, z: Tensor, nu: number, terms: number): Tensor {
  const half = tf.div(z, 2)
  let s = tf.div(tf.pow(half, nu), factorial(nu))
  let out = s
  const h2 = tf.neg(tf.square(half))
  for (let k = 1; k <= terms; k++) {
    s = tf.div(tf.mul(s, h2), k * (k + nu))
    out = tf.add(out, s)
  }
  return out
}

/** Run `fn` in a TF.js scope (intermediate tensors freed) and return its plain value. */
function tidyValue<T>(tf: Tf, fn: () => T): T {
  let out!: T
  tf.tidy(() => {
    out = fn()
  })
  return out
}

const f32 = (a: ArrayLike<number>): Float32Array => Float32Array.from(a)

export const tfRows = defineRowFamily({
  family: 'TF.js',
  rows: {
    bessel: [
      {
        name,
        kind: 'gradient',
        async setup(c) {
          const tf = await loadTf()
          const b = c.batch
          if (b) {
            // vectorised over the batch: the series to the largest term count any z needs (the
            // extra terms are below atol), the gradient of Σ J(z_i) is J′(z_i) at every z
            const terms = besselBatchTermCount(c.nu, b.zs)
            const g = tf.grad((z: Tensor) => tf.sum(besselTf(tf, z, c.nu, terms)))
            const z = tf.tensor1d(f32(b.zs))
            const once = (): Float32Array => tidyValue(tf, () => g(z).dataSync() as Float32Array)
            return {
              run: () => void once(),
              check: () => {
                const r = checkClose(once(), b.derivative(), TOLERANCE.f32, 'dJ/dz')
                return { ...r, reason: r.reason ?? `vectorised over 10⁵ z, series unrolled to ${terms} terms` }
              },
              dispose: () => z.dispose(),
            }
          }
          const terms = besselTermCount(c.nu, c.z)
          const g = tf.grad((z: Tensor) => besselTf(tf, z, c.nu, terms))
          const z = tf.scalar(c.z)
          const once = (): number => tidyValue(tf, () => g(z).dataSync()[0])
          return {
            run: () => void once(),
            check: () => ({
              ...checkClose([once()], [c.derivative], TOLERANCE.f32, 'dJ/dz'),
              reason: `series unrolled to ${terms} terms`,
            }),
            dispose: () => z.dispose(),
          }
        },
      },
      {
        name,
        kind: 'hessian',
        async setup(c) {
          const tf = await loadTf()
          const b = c.batch
          if (b) {
            // J″(z_i) at every z: grad of Σ J′(z_i) (the Hessian of Σ J(z_i) is diagonal)
            const terms = besselBatchTermCount(c.nu, b.zs)
            const g1 = tf.grad((z: Tensor) => tf.sum(besselTf(tf, z, c.nu, terms)))
            const gg = tf.grad((z: Tensor) => tf.sum(g1(z)))
            const z = tf.tensor1d(f32(b.zs))
            const once = (): Float32Array => tidyValue(tf, () => gg(z).dataSync() as Float32Array)
            return {
              run: () => void once(),
              check: () => {
                const r = checkClose(once(), b.second(), TOLERANCE.f32, 'd²J/dz²')
                return { ...r, reason: r.reason ?? 'diagonal Hessian: grad of Σ J′(z_i), vectorised' }
              },
              dispose: () => z.dispose(),
            }
          }
          const terms = besselTermCount(c.nu, c.z)
          const gg = tf.grad(tf.grad((z: Tensor) => besselTf(tf, z, c.nu, terms)))
          const z = tf.scalar(c.z)
          const once = (): number => tidyValue(tf, () => gg(z).dataSync()[0])
          return {
            run: () => void once(),
            check: () => checkClose([once()], [c.second], TOLERANCE.f32, 'd²J/dz²'),
            dispose: () => z.dispose(),
          }
        },
      },
    ],
    'sparse-dot': [
      {
        name,
        kind: 'gradient',
        setup: () => ({
          na: 'TF.js 4.22 has no gradient for scatterND, and building the operands with gather instead differentiates into unsortedSegmentSum, O(segments × entries) on the cpu backend (10⁶ × 5·10⁴ here)',
        }),
      },
    ],
    'sparse-mul': [
      {
        name,
        kind: 'gradient',
        async setup(c) {
          const tf = await loadTf()
          const n = c.A.rows
          const cols = new Int32Array(c.A.values.length)
          for (let j = 0; j < c.A.cols; j++) for (let k = c.A.colPtr[j]; k < c.A.colPtr[j + 1]; k++) cols[k] = j
          const colT = tf.tensor1d(cols, 'int32')
          const rowT = tf.tensor1d(c.A.rowIdx, 'int32')
          const t = (a: Float64Array): Tensor1D => tf.tensor1d(f32(a))
          const [xr, xi, ar, ai, y0r, y0i, ybr, ybi] = [
            c.x.re,
            c.x.im,
            c.A.values,
            c.A.imag,
            c.y0.re,
            c.y0.im,
            c.yBar.re,
            c.yBar.im,
          ].map(t)
          // y = y0 + A x with gather (x at each entry's column) and segment sums over rows
          const grads = tf.grads((pr: Tensor, pi: Tensor, vr: Tensor, vi: Tensor) => {
            const gr = tf.gather(pr, colT)
            const gi = tf.gather(pi, colT)
            const yr = tf.add(y0r, tf.unsortedSegmentSum(tf.sub(tf.mul(vr, gr), tf.mul(vi, gi)), rowT, n))
            const yi = tf.add(y0i, tf.unsortedSegmentSum(tf.add(tf.mul(vr, gi), tf.mul(vi, gr)), rowT, n))
            return tf.add(tf.sum(tf.mul(ybr, yr)), tf.sum(tf.mul(ybi, yi)))
          })
          const once = (): Float64Array => tidyValue(tf, () => readFlat(grads([xr, xi, ar, ai])))
          return {
            run: () => void once(),
            check: () => {
              const b = c.backward()
              const r = checkClose(
                once(),
                [...b.xBar.re, ...b.xBar.im, ...b.aBarRe, ...b.aBarIm],
                TOLERANCE.f32,
                'reverse pass',
              )
              return { ...r, reason: r.reason ?? 'gather + unsortedSegmentSum formulation' }
            },
            dispose: () => tf.dispose([colT, rowT, xr, xi, ar, ai, y0r, y0i, ybr, ybi]),
          }
        },
      },
    ],
    'graph-embedding': [
      {
        name,
        kind: 'gradient',
        async setup(c) {
          const tf = await loadTf()
          const loss = embeddingLossTf(tf, c.k)
          const g = tf.grad(loss.f)
          const x = tf.tensor2d(f32(c.x), [10, c.k])
          const once = (): Float32Array => tidyValue(tf, () => g(x).dataSync() as Float32Array)
          return {
            run: () => void once(),
            check: () => checkClose(once(), c.gradient(), TOLERANCE.f32, 'gradient'),
            dispose: () => tf.dispose([x, ...loss.constants]),
          }
        },
      },
      {
        name,
        kind: 'hessian',
        async setup(c) {
          const tf = await loadTf()
          const loss = embeddingLossTf(tf, c.k)
          const size = 10 * c.k
          const g = tf.grad(loss.f)
          // no jacobian in TF.js: one second-order pass per Hessian row, e_i · ∇L(x) with the
          // unit vectors e_i built once here
          const basis = tf.tidy(() => Array.from({ length: size }, (_, i) => tf.oneHot(i, size).toFloat()))
          const rows = basis.map((e) => tf.grad((x: Tensor) => tf.sum(tf.mul(g(x).reshape([size]), e))))
          const x = tf.tensor2d(f32(c.x), [10, c.k])
          const once = (): Float64Array => tidyValue(tf, () => readFlat(rows.map((r) => r(x))))
          return {
            run: () => void once(),
            check: () => checkClose(once(), c.hessian(), TOLERANCE.f32 * 5, 'Hessian'),
            dispose: () => tf.dispose([x, ...basis, ...loss.constants]),
          }
        },
      },
    ],
    gmm: [
      {
        name,
        kind: 'gradient',
        async setup(c) {
          const tf = await loadTf()
          const { d, k, n } = c.inst
          if (d < 2) return { na: 'd = 1 has no off-diagonal factors' } satisfies NotApplicable
          const icfSz = gmmIcfSize(d)
          const x = tf.tensor2d(f32(c.inst.x), [n, d])
          const qIndex = tf.tensor1d(gmmQIndex(d), 'int32')
          const zeros = tf.zeros([k, 1])
          const { gamma, m } = c.inst.wishart
          const constant = -n * d * 0.5 * Math.log(2 * ADBENCH_PI) - k * wishartConstant(d, gamma, m)
          const objective = (alphas: Tensor, means: Tensor, icf: Tensor): Scalar => {
            const logdiag = tf.slice(icf, [0, 0], [k, d])
            const lower = tf.slice(icf, [0, d], [k, icfSz - d])
            const qdiag = tf.exp(logdiag)
            const sumQ = tf.sum(logdiag, 1)
            const Q = tf.reshape(tf.gather(tf.concat([qdiag, lower, zeros], 1), qIndex, 1), [k, d, d])
            const xc = tf.sub(tf.expandDims(x, 0), tf.expandDims(means, 1)) // k × n × d
            const y = tf.matMul(xc as Tensor, Q as Tensor, false, true)
            const main = tf.sub(tf.expandDims(tf.add(alphas, sumQ), 1), tf.mul(tf.sum(tf.square(y), 2), 0.5))
            const slse = tf.sum(tf.logSumExp(main, 0))
            const prior = tf.sum(
              tf.sub(
                tf.mul(tf.add(tf.sum(tf.square(qdiag), 1), tf.sum(tf.square(lower), 1)), 0.5 * gamma * gamma),
                tf.mul(sumQ, m),
              ),
            )
            return tf.add(tf.add(tf.sub(slse, tf.mul(tf.logSumExp(alphas), n)), prior), constant) as Scalar
          }
          const grads = tf.grads(objective as (...a: Tensor[]) => Tensor)
          const alphas = tf.tensor1d(f32(c.inst.alphas))
          const means = tf.tensor2d(f32(c.inst.means), [k, d])
          const icf = tf.tensor2d(f32(c.inst.icf), [k, icfSz])
          const once = (): Float64Array => tidyValue(tf, () => readFlat(grads([alphas, means, icf])))
          return {
            run: () => void once(),
            check: () => checkClose(once(), c.gradient(), TOLERANCE.f32, 'gradient'),
            dispose: () => tf.dispose([x, qIndex, zeros, alphas, means, icf]),
          } satisfies PreparedRow
        },
      },
    ],
    ba: [
      {
        name,
        kind: 'jacobian',
        async setup(c) {
          if (c.peersSkipped) return { na: c.peersSkipped }
          const tf = await loadTf()
          const { p, cams, X, w, obs, feats } = c.inst
          for (let i = 0; i < cams.length; i += 11)
            if (cams[i] === 0 && cams[i + 1] === 0 && cams[i + 2] === 0)
              return { na: 'a camera with zero rotation needs the first-order branch, not written for TF.js' }
          // per-observation parameters, copied once here (as for jax-js and Tenet): the Jacobian
          // block of observation i is the gradient of Σ err_row with respect to its own copy of
          // its camera, point and weight
          const camCopy = new Float32Array(11 * p)
          const ptCopy = new Float32Array(3 * p)
          for (let i = 0; i < p; i++) {
            camCopy.set(cams.subarray(11 * obs[2 * i], 11 * obs[2 * i] + 11), 11 * i)
            ptCopy.set(X.subarray(3 * obs[2 * i + 1], 3 * obs[2 * i + 1] + 3), 3 * i)
          }
          const camO = tf.tensor2d(camCopy, [p, 11])
          const ptO = tf.tensor2d(ptCopy, [p, 3])
          const wT = tf.tensor1d(f32(w))
          const fx = tf.tensor1d(f32(feats.filter((_, i) => i % 2 === 0)))
          const fy = tf.tensor1d(f32(feats.filter((_, i) => i % 2 === 1)))
          const residual =
            (row: 0 | 1) =>
            (cam: Tensor, pt: Tensor, wo: Tensor): Scalar => {
              const col = tf.unstack(cam, 1)
              const [X0, X1, X2] = tf.unstack(pt, 1)
              const [r0, r1, r2] = col
              const p0 = tf.sub(X0, col[3])
              const p1 = tf.sub(X1, col[4])
              const p2 = tf.sub(X2, col[5])
              const theta = tf.sqrt(tf.add(tf.add(tf.square(r0), tf.square(r1)), tf.square(r2)))
              const [w0, w1, w2] = [r0, r1, r2].map((r) => tf.div(r, theta))
              const cs = tf.cos(theta)
              const sn = tf.sin(theta)
              const tmp = tf.mul(tf.add(tf.add(tf.mul(w0, p0), tf.mul(w1, p1)), tf.mul(w2, p2)), tf.sub(1, cs))
              const rot = (pa: Tensor, wb: Tensor, pc: Tensor, wc: Tensor, pb: Tensor, wa: Tensor): Tensor =>
                tf.add(tf.add(tf.mul(pa, cs), tf.mul(tf.sub(tf.mul(wb, pc), tf.mul(wc, pb)), sn)), tf.mul(wa, tmp))
              const c0 = rot(p0, w1, p2, w2, p1, w0)
              const c1 = rot(p1, w2, p0, w0, p2, w1)
              const c2 = rot(p2, w0, p1, w1, p0, w2)
              const u = tf.div(c0, c2)
              const v = tf.div(c1, c2)
              const rsq = tf.add(tf.square(u), tf.square(v))
              const L = tf.add(tf.add(1, tf.mul(col[9], rsq)), tf.mul(col[10], tf.square(rsq)))
              const proj =
                row === 0 ? tf.add(tf.mul(tf.mul(u, L), col[6]), col[7]) : tf.add(tf.mul(tf.mul(v, L), col[6]), col[8])
              return tf.sum(tf.mul(wo, tf.sub(proj, row === 0 ? fx : fy)))
            }
          const g0 = tf.grads(residual(0) as (...a: Tensor[]) => Tensor)
          const g1 = tf.grads(residual(1) as (...a: Tensor[]) => Tensor)
          const gw = tf.grad((wo: Tensor) => tf.sum(tf.sub(1, tf.square(wo))))
          const vals = new Float64Array(2 * BA_BLOCK_COLS * p + p)
          const once = (): Float64Array =>
            tidyValue(tf, () => {
              for (const [row, g] of [
                [0, g0],
                [1, g1],
              ] as const) {
                const [gc, gp, gwo] = g([camO, ptO, wT]).map((t) => t.dataSync())
                for (let i = 0; i < p; i++) {
                  const o = (2 * i + row) * BA_BLOCK_COLS
                  for (let j = 0; j < 11; j++) vals[o + j] = gc[11 * i + j]
                  for (let j = 0; j < 3; j++) vals[o + 11 + j] = gp[3 * i + j]
                  vals[o + 14] = gwo[i]
                }
              }
              vals.set(gw(wT).dataSync(), 2 * BA_BLOCK_COLS * p)
              return vals
            })
          return {
            run: () => void once(),
            check: () => {
              const r = checkClose(once(), c.jacobian().vals, TOLERANCE.f32, 'Jacobian')
              return { ...r, reason: r.reason ?? 'two reverse passes over per-observation parameters' }
            },
            dispose: () => tf.dispose([camO, ptO, wT, fx, fy]),
          }
        },
      },
    ],
    unitary: [
      {
        name,
        kind: 'gradient',
        setup: () => ({
          na: 'not written for TF.js: M(M−1)/2 sequential two-row rotations would be one small kernel each',
        }),
      },
    ],
    'unitary-rnn': [
      {
        name,
        kind: 'gradient',
        setup: () => ({
          na: 'not written for TF.js: T · M(M−1)/2 sequential two-row rotations (one tiny kernel each); its gradient would store every activation',
        }),
      },
    ],
    leapfrog: [
      {
        name,
        kind: 'objective',
        setup: () => ({
          na: 'not written for TF.js: float32-only backend; the study needs float64 and a time-stepping loop',
        }),
      },
    ],
  },
})

function embeddingLossTf(tf: Tf, k: number): { f: (x: Tensor) => Scalar; constants: Tensor[] } {
  const e1a = tf.tensor1d(
    PETERSEN_EDGES.map((e) => e[0]),
    'int32',
  )
  const e1b = tf.tensor1d(
    PETERSEN_EDGES.map((e) => e[1]),
    'int32',
  )
  const e2a = tf.tensor1d(
    PETERSEN_NON_EDGES.map((e) => e[0]),
    'int32',
  )
  const e2b = tf.tensor1d(
    PETERSEN_NON_EDGES.map((e) => e[1]),
    'int32',
  )
  const dist = (x: Tensor, a: Tensor, b: Tensor): Tensor =>
    tf.sqrt(tf.sum(tf.square(tf.sub(tf.gather(x, a), tf.gather(x, b))), 1))
  const variance = (d: Tensor, mean: Tensor, n: number): Tensor => tf.div(tf.sum(tf.square(tf.sub(d, mean))), n - 1)
  void k
  return {
    f: (x: Tensor) => {
      const d1 = dist(x, e1a, e1b)
      const d2 = dist(x, e2a, e2b)
      const m1 = tf.mean(d1)
      const m2 = tf.mean(d2)
      return tf.sub(
        tf.add(tf.add(variance(d1, m1, 15), variance(d2, m2, 30)), tf.exp(tf.relu(tf.add(tf.sub(m1, m2), 0.1)))),
        1,
      ) as Scalar
    },
    constants: [e1a, e1b, e2a, e2b],
  }
}
