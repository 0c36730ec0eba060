/**
 * jax-js rows on the `wasm` device, float64 arrays. Written as a jax user would: vectorised,
 * `jit(grad(f))` / `jit(hessian(f))`, every array passed as an argument (jit would round JS
 * number literals to float32), `.ref` wherever an array is used more than once (move semantics).
 * Its wasm exp/log are single precision, so errors near 1e-7 relative are expected and reported.
 */
import { gmmIcfSize } from '../data/gmm-data.js'
import { checkClose } from '../harness/check.js'
import { defineRowFamily } from '../harness/registry.js'
import type { PreparedRow } from '../harness/types.js'
import { PETERSEN_EDGES, PETERSEN_NON_EDGES } from '../objectives/graph-embedding.js'
import { JAX_ROW, JAX_TOLERANCE, loadJax, type Jax } from '../peers/jaxjs.js'
import { readFlat } from '../peers/read.js'
import { besselTermCount, factorial } from '../objectives/bessel.js'
import { besselBatchTermCount, gmmQIndex } from './tfjs.js'

const name = JAX_ROW

// jax-js arrays are used through a loose type here: its generic signatures (tracers vs arrays)
// add nothing to the benchmark code but noise.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type A = any

const f64 = (jax: Jax, data: ArrayLike<number>, shape: number[]): A =>
  jax.numpy.array(Float64Array.from(data), { shape, dtype: jax.numpy.float64 })
const i32 = (jax: Jax, data: ArrayLike<number>, shape: number[]): A =>
  jax.numpy.array(Int32Array.from(data), { shape, dtype: jax.numpy.int32 })

function prepared(
  call: () => A,
  check: (v: Float64Array) => ReturnType<PreparedRow['check']>,
  dispose: A[],
): PreparedRow {
  return {
    run: () => void readFlat(call()),
    check: () => check(readFlat(call())),
    dispose: () => {
      for (const a of dispose) a.dispose()
    },
  }
}

export function besselJax(jax: Jax, z: A, consts: A, nu: number, terms: number): A {
  const np = jax.numpy
  // consts = [1/ν!, 1/(k(k+ν)) for k = 1..terms] as float64
  const half = np.multiply(z, 0.5)
  let s = np.multiply(np.power(half.ref, nu), consts.ref.slice(0))
  let out = s.ref
  const h2 = np.negative(np.square(half))
  for (let k = 1; k <= terms; k++) {
    s = np.multiply(np.multiply(s, h2.ref), consts.ref.slice(k))
    out = np.add(out, s.ref)
  }
  s.dispose()
  h2.dispose()
  consts.dispose()
  return out
}

export function besselConstants(nu: number, terms: number): Float64Array {
  const f = factorial(nu)
  return Float64Array.from({ length: terms + 1 }, (_, k) => (k === 0 ? 1 / f : 1 / (k * (k + nu))))
}

function embeddingJax(jax: Jax, x: A, idx: A, margin: A): A {
  const np = jax.numpy
  // idx = [e1a, e1b, e2a, e2b] concatenated (15, 15, 30, 30)
  const dist = (a: A, b: A): A => np.sqrt(np.sum(np.square(np.subtract(np.take(x.ref, a, 0), np.take(x.ref, b, 0))), 1))
  const d1 = dist(idx.ref.slice([0, 15]), idx.ref.slice([15, 30]))
  const d2 = dist(idx.ref.slice([30, 60]), idx.slice([60, 90]))
  x.dispose()
  const m1 = np.mean(d1.ref)
  const m2 = np.mean(d2.ref)
  const v1 = np.divide(np.sum(np.square(np.subtract(d1, m1.ref))), 14)
  const v2 = np.divide(np.sum(np.square(np.subtract(d2, m2.ref))), 29)
  const t = np.add(np.subtract(m1, m2), margin)
  return np.subtract(np.add(np.add(v1, v2), np.exp(jax.nn.relu(t))), 1)
}

/** 0/1 matrix S (icfSize × d²) with [exp(logdiag) | lower] · S = Q row-major. */
export function gmmSelection(d: number): Float64Array {
  const icfSz = gmmIcfSize(d)
  const idx = gmmQIndex(d)
  const S = new Float64Array(icfSz * d * d)
  for (let e = 0; e < d * d; e++) if (idx[e] < icfSz) S[idx[e] * d * d + e] = 1
  return S
}

/**
 * The GMM objective without its additive constant (irrelevant to the gradient), vectorised over
 * points: (alphas, means, icf, x, select, scal) ↦ value, with `select` the 0/1 matrix of
 * `gmmSelection(d)` and scal = [n, ½γ², m].
 */
export function gmmJaxObjective(
  jax: Jax,
  d: number,
  k: number,
): (alphas: A, means: A, icf: A, x: A, select: A, scal: A) => A {
  const np = jax.numpy
  return (alphas: A, means: A, icf: A, x: A, select: A, scal: A): A => {
    const logdiag = icf.ref.slice([], [0, d])
    const lower = icf.slice([], [d])
    const qdiag = np.exp(logdiag.ref)
    const sumQ = np.sum(logdiag, 1)
    // Q (row-major d × d) = [exp(logdiag) | lower] · S with a constant 0/1 selection matrix
    const Q = np.reshape(np.matmul(np.concatenate([qdiag.ref, lower.ref], 1), select), [k, d, d])
    const xc = np.subtract(np.expandDims(x, 0), np.expandDims(means, 1))
    const y = np.matmul(xc, np.swapaxes(Q, 1, 2))
    const main = np.subtract(np.expandDims(np.add(alphas.ref, sumQ.ref), 1), np.multiply(np.sum(np.square(y), 2), 0.5))
    const slse = np.sum(jax.nn.logsumexp(main, 0))
    const lseA = jax.nn.logsumexp(alphas)
    // scal = [n, ½γ², m] as float64
    const frob = np.add(np.sum(np.square(qdiag), 1), np.sum(np.square(lower), 1))
    const prior = np.sum(np.subtract(np.multiply(frob, scal.ref.slice(1)), np.multiply(sumQ, scal.ref.slice(2))))
    return np.add(np.subtract(slse, np.multiply(lseA, scal.slice(0))), prior)
  }
}

/**
 * One residual row (0: x, 1: y) of BA, summed over observations and weighted: (cam, pt, w, feat,
 * one) ↦ Σ_i w_i (proj_i − feat_i), each observation with its own copy of its camera and point.
 */
export function baJaxResidual(jax: Jax, row: 0 | 1): (cam: A, pt: A, wo: A, feat: A, one: A) => A {
  const np = jax.numpy
  return (cam: A, pt: A, wo: A, feat: A, one: A): A => {
    const col = (j: number): A => cam.ref.slice([], j)
    const p0 = np.subtract(pt.ref.slice([], 0), col(3))
    const p1 = np.subtract(pt.ref.slice([], 1), col(4))
    const p2 = np.subtract(pt.slice([], 2), col(5))
    const theta = np.sqrt(np.add(np.add(np.square(col(0)), np.square(col(1))), np.square(col(2))))
    const [w0, w1, w2] = [0, 1, 2].map((j) => np.divide(col(j), theta.ref))
    const cs = np.cos(theta.ref)
    const sn = np.sin(theta)
    const tmp = np.multiply(
      np.add(np.add(np.multiply(w0.ref, p0.ref), np.multiply(w1.ref, p1.ref)), np.multiply(w2.ref, p2.ref)),
      np.subtract(one.ref, cs.ref),
    )
    const rot = (pa: A, wb: A, pc: A, wc: A, pb: A, wa: A): A =>
      np.add(
        np.add(
          np.multiply(pa.ref, cs.ref),
          np.multiply(np.subtract(np.multiply(wb.ref, pc.ref), np.multiply(wc.ref, pb.ref)), sn.ref),
        ),
        np.multiply(wa.ref, tmp.ref),
      )
    const c0 = rot(p0, w1, p2, w2, p1, w0)
    const c1 = rot(p1, w2, p0, w0, p2, w1)
    const c2 = rot(p2, w0, p1, w1, p0, w2)
    const u = np.divide(c0, c2.ref)
    const v = np.divide(c1, c2)
    const rsq = np.add(np.square(u.ref), np.square(v.ref))
    const L = np.add(np.add(one, np.multiply(col(9), rsq.ref)), np.multiply(col(10), np.square(rsq)))
    const proj =
      row === 0
        ? np.add(np.multiply(np.multiply(u, L), col(6)), col(7))
        : np.add(np.multiply(np.multiply(v, L), col(6)), col(8))
    return np.sum(np.multiply(wo, np.subtract(proj, feat)))
  }
}

const EMBEDDING_INDEX = [
  ...PETERSEN_EDGES.map((e) => e[0]),
  ...PETERSEN_EDGES.map((e) => e[1]),
  ...PETERSEN_NON_EDGES.map((e) => e[0]),
  ...PETERSEN_NON_EDGES.map((e) => e[1]),
]

export const jaxRows = defineRowFamily({
  family: 'jax-js',
  rows: {
    bessel: [
      {
        name,
        kind: 'gradient',
        async setup(c) {
          const jax = await loadJax()
          const b = c.batch
          if (b) {
            // vectorised: jit(grad(Σ J(z_i))) over a float64 array of the 10⁵ z
            const terms = besselBatchTermCount(c.nu, b.zs)
            const g = jax.jit(jax.grad((z: A, k: A) => jax.numpy.sum(besselJax(jax, z, k, c.nu, terms))))
            const z = f64(jax, b.zs, [b.zs.length])
            const k = f64(jax, besselConstants(c.nu, terms), [terms + 1])
            return prepared(
              () => g(z.ref, k.ref),
              (v) => {
                const r = checkClose(v, b.derivative(), JAX_TOLERANCE, 'dJ/dz')
                return { ...r, reason: r.reason ?? `vectorised over 10⁵ z, series unrolled to ${terms} terms` }
              },
              [z, k],
            )
          }
          const terms = besselTermCount(c.nu, c.z)
          const g = jax.jit(jax.grad((z: A, k: A) => besselJax(jax, z, k, c.nu, terms)))
          const z = f64(jax, [c.z], [])
          const k = f64(jax, besselConstants(c.nu, terms), [terms + 1])
          return prepared(
            () => g(z.ref, k.ref),
            (v) => checkClose(v, [c.derivative], JAX_TOLERANCE, 'dJ/dz'),
            [z, k],
          )
        },
      },
      {
        name,
        kind: 'hessian',
        async setup(c) {
          const jax = await loadJax()
          const b = c.batch
          if (b) {
            // J″(z_i) at every z: grad of Σ J′(z_i) (the Hessian of Σ J(z_i) is diagonal)
            const terms = besselBatchTermCount(c.nu, b.zs)
            const g1 = jax.grad((z: A, k: A) => jax.numpy.sum(besselJax(jax, z, k, c.nu, terms)))
            const g = jax.jit(jax.grad((z: A, k: A) => jax.numpy.sum(g1(z, k))))
            const z = f64(jax, b.zs, [b.zs.length])
            const k = f64(jax, besselConstants(c.nu, terms), [terms + 1])
            return prepared(
              () => g(z.ref, k.ref),
              (v) => {
                const r = checkClose(v, b.second(), JAX_TOLERANCE, 'd²J/dz²')
                return { ...r, reason: r.reason ?? 'diagonal Hessian: grad of Σ J′(z_i), vectorised' }
              },
              [z, k],
            )
          }
          const terms = besselTermCount(c.nu, c.z)
          const g = jax.jit(jax.grad(jax.grad((z: A, k: A) => besselJax(jax, z, k, c.nu, terms))))
          const z = f64(jax, [c.z], [])
          const k = f64(jax, besselConstants(c.nu, terms), [terms + 1])
          return prepared(
            () => g(z.ref, k.ref),
            (v) => checkClose(v, [c.second], JAX_TOLERANCE, 'd²J/dz²'),
            [z, k],
          )
        },
      },
    ],
    'graph-embedding': [
      {
        name,
        kind: 'gradient',
        async setup(c) {
          const jax = await loadJax()
          const g = jax.jit(jax.grad((x: A, idx: A, margin: A) => embeddingJax(jax, x, idx, margin)))
          const x = f64(jax, c.x, [10, c.k])
          const idx = i32(jax, EMBEDDING_INDEX, [90])
          const margin = f64(jax, [0.1], [])
          return prepared(
            () => g(x.ref, idx.ref, margin.ref),
            (v) => checkClose(v, c.gradient(), JAX_TOLERANCE, 'gradient'),
            [x, idx, margin],
          )
        },
      },
      {
        name,
        kind: 'hessian',
        async setup(c) {
          const jax = await loadJax()
          const x = f64(jax, c.x, [10 * c.k])
          const idx = i32(jax, EMBEDDING_INDEX, [90])
          const margin = f64(jax, [0.1], [])
          // hessian takes a one-argument function: the index and margin arrays are closed over
          // (with .ref, since each use consumes)
          // (not jitted: under jit, jax-js 0.1.25 rejects the second-order transpose of `take`)
          const h = jax.hessian((xf: A) => embeddingJax(jax, jax.numpy.reshape(xf, [10, c.k]), idx.ref, margin.ref))
          return prepared(
            () => h(x.ref),
            (v) => checkClose(v, c.hessian(), JAX_TOLERANCE * 10, 'Hessian'),
            [x, idx, margin],
          )
        },
      },
    ],
    gmm: [
      {
        name,
        kind: 'gradient',
        async setup(c) {
          const jax = await loadJax()
          const np = jax.numpy
          const { d, k, n } = c.inst
          if (d < 2) return { na: 'd = 1 has no off-diagonal factors' }
          const icfSz = gmmIcfSize(d)
          const { gamma, m } = c.inst.wishart
          const objective = gmmJaxObjective(jax, d, k)
          const g: A = jax.jit(jax.grad(objective, { argnums: [0, 1, 2] }))
          const args = [
            f64(jax, c.inst.alphas, [k]),
            f64(jax, c.inst.means, [k, d]),
            f64(jax, c.inst.icf, [k, icfSz]),
            f64(jax, c.inst.x, [n, d]),
            f64(jax, gmmSelection(d), [icfSz, d * d]),
            f64(jax, [n, 0.5 * gamma * gamma, m], [3]),
          ]
          return prepared(
            () => g(...args.map((a) => a.ref)),
            (v) => checkClose(v, c.gradient(), JAX_TOLERANCE, 'gradient'),
            args,
          )
        },
      },
    ],
    'sparse-dot': [
      {
        name,
        kind: 'gradient',
        setup: () => ({
          na: 'jax-js 0.1.25 exposes no scatter-add / segment-sum to build sparse operands from their values',
        }),
      },
    ],
    'sparse-mul': [
      {
        name,
        kind: 'gradient',
        setup: () => ({ na: 'jax-js 0.1.25 exposes no scatter-add / segment-sum for y[row] += …' }),
      },
    ],
    ba: [
      {
        name,
        kind: 'jacobian',
        async setup(c) {
          if (c.peersSkipped) return { na: c.peersSkipped }
          const jax = await loadJax()
          const np = jax.numpy
          const { p, cams, X, w, obs, feats } = c.inst
          for (let i = 0; i < cams.length; i += 11)
            if (cams[i] === 0 && cams[i + 1] === 0 && cams[i + 2] === 0)
              return { na: 'a camera with zero rotation needs the first-order branch, not written for jax-js' }
          // per-observation parameters: the Jacobian block of observation i is the gradient of
          // Σ err_row with respect to observation i's own copy of its camera, point and weight
          const camO = new Float64Array(11 * p)
          const ptO = new Float64Array(3 * p)
          for (let i = 0; i < p; i++) {
            camO.set(cams.subarray(11 * obs[2 * i], 11 * obs[2 * i] + 11), 11 * i)
            ptO.set(X.subarray(3 * obs[2 * i + 1], 3 * obs[2 * i + 1] + 3), 3 * i)
          }
          const residual = (row: 0 | 1) => baJaxResidual(jax, row)
          const g0: A = jax.jit(jax.grad(residual(0), { argnums: [0, 1, 2] }))
          const g1: A = jax.jit(jax.grad(residual(1), { argnums: [0, 1, 2] }))
          const args = [
            f64(jax, camO, [p, 11]),
            f64(jax, ptO, [p, 3]),
            f64(jax, w, [p]),
            f64(
              jax,
              feats.filter((_, i) => i % 2 === 0),
              [p],
            ),
            f64(
              jax,
              feats.filter((_, i) => i % 2 === 1),
              [p],
            ),
            f64(jax, [1], []),
          ]
          const [camA, ptA, wA, fxA, fyA, oneA] = args
          const vals = new Float64Array(2 * 15 * p + p)
          const once = (): Float64Array => {
            for (const [row, g, f] of [
              [0, g0, fxA],
              [1, g1, fyA],
            ] as const) {
              const [gc, gp, gw] = (g(camA.ref, ptA.ref, wA.ref, f.ref, oneA.ref) as A[]).map(
                (a) => a.dataSync() as Float64Array,
              )
              for (let i = 0; i < p; i++) {
                const o = (2 * i + row) * 15
                for (let j = 0; j < 11; j++) vals[o + j] = gc[11 * i + j]
                for (let j = 0; j < 3; j++) vals[o + 11 + j] = gp[3 * i + j]
                vals[o + 14] = gw[i]
              }
            }
            for (let i = 0; i < p; i++) vals[30 * p + i] = -2 * w[i] // d(1 − w²)/dw, trivially
            return vals
          }
          return {
            run: () => void once(),
            check: () => {
              const r = checkClose(once(), c.jacobian().vals, JAX_TOLERANCE, 'Jacobian')
              return { ...r, reason: r.reason ?? 'two reverse passes over per-observation parameters' }
            },
            dispose: () => {
              for (const a of args) a.dispose()
            },
          }
        },
      },
    ],
    unitary: [
      {
        name,
        kind: 'gradient',
        setup: () => ({ na: 'not written for jax-js: M(M−1)/2 sequential two-row rotations' }),
      },
    ],
    'unitary-rnn': [
      {
        name,
        kind: 'gradient',
        setup: () => ({
          na: 'not written for jax-js: T · M(M−1)/2 sequential two-row rotations (one tiny kernel each); its gradient would store every activation',
        }),
      },
    ],
    leapfrog: [
      {
        name,
        kind: 'objective',
        setup: () => ({ na: 'not written for jax-js: a time-stepping loop of tiny kernels' }),
      },
    ],
  },
})
