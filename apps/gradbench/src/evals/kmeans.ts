/**
 * kmeans: cost = Σᵢ minⱼ ‖Pᵢ − Cⱼ‖², over blocks of points. For a block, the squared distances
 * and their running minima (min is not invertible, the prefix minima are) are kept in workspace
 * arrays, which the adjoint uncomputes; a block's workspace is k values per point, so memory
 * does not grow with n (GradBench's defaults go to n = 10⁵, k = 1000). (Per-point ancilla
 * arrays in a `routine` leave nothing behind but allocate per point and make the gradient run the
 * distances three times.)
 *
 * `dir` is J ⊘ diag(H), both summed over the blocks: J by `grad`, diag(H) by one exact
 * Hessian-vector product (forward-over-reverse) along the all-ones direction — the Hessian of
 * this cost is diagonal (each term depends on one centroid, and on each of its coordinates
 * separately), so H·1 is its diagonal.
 */
import { grad, hvp } from 'tenet'
import { compile, fn } from './compile.js'
import { flat, matrix, record } from './input.js'
import type { EvalModule, Prepared } from './types.js'

export const kmeansSource = `
fn kmeans(cost: f64, P: f64[], C: f64[], n: i32, k: i32, d: i32, dist: f64[], rm: f64[]) {
  for i in 0..n {
    for j in 0..k {
      for e in 0..d {
        dist[i * k + j] += (P[i * d + e] - C[j * d + e]) * (P[i * d + e] - C[j * d + e])
      }
    }
    rm[i * k] += dist[i * k]
    for j in 1..k {
      rm[i * k + j] += min(rm[i * k + j - 1], dist[i * k + j])
    }
    cost += rm[i * k + k - 1]
  }
}
`

/** Points per block. */
const BLOCK = 256

interface Work {
  P: Float64Array
  C: Float64Array
  n: number
  k: number
  d: number
  dist: Float64Array
  rm: Float64Array
}

function parse(input: unknown): Work {
  const o = record(input)
  const points = o.points,
    centroids = o.centroids
  if (!Array.isArray(points) || !Array.isArray(centroids) || centroids.length === 0 || !Array.isArray(centroids[0])) {
    throw new Error('kmeans needs `points: double[n][d]` and `centroids: double[k][d]`')
  }
  const n = points.length,
    k = centroids.length,
    d = (centroids[0] as unknown[]).length
  return {
    P: flat(o, 'points', n * d),
    C: flat(o, 'centroids', k * d),
    n,
    k,
    d,
    dist: new Float64Array(Math.min(n, BLOCK) * k),
    rm: new Float64Array(Math.min(n, BLOCK) * k),
  }
}

export const kmeans: EvalModule = {
  cost(input): Prepared {
    const w = parse(input)
    const f = fn(compile(kmeansSource), 'kmeans').core
    let y = 0
    return {
      run: () => {
        y = 0
        for (let i0 = 0; i0 < w.n; i0 += BLOCK) {
          const m = Math.min(BLOCK, w.n - i0)
          w.dist.fill(0)
          w.rm.fill(0)
          f(y, w.P.subarray(i0 * w.d, (i0 + m) * w.d), w.C, m, w.k, w.d, w.dist, w.rm)
          y = f.results[0]!
        }
      },
      output: () => y,
    }
  },
  dir(input): Prepared {
    const w = parse(input)
    const f = fn(compile(kmeansSource), 'kmeans')
    const g = grad(f, { loss: 0 })
    const ones = new Float64Array(w.C.length).fill(1)
    const dir = new Float64Array(w.C.length)
    const J = new Float64Array(w.C.length),
      H = new Float64Array(w.C.length)
    const v = [0, null, ones, null, null, null, null, null]
    return {
      run: () => {
        J.fill(0)
        H.fill(0)
        for (let i0 = 0; i0 < w.n; i0 += BLOCK) {
          const m = Math.min(BLOCK, w.n - i0)
          const P = w.P.subarray(i0 * w.d, (i0 + m) * w.d)
          // the driver runs on its own copies of the workspace, which stays zero here
          g.run(0, P, w.C, m, w.k, w.d, w.dist, w.rm)
          const Jb = g.buffers[2]!
          for (let i = 0; i < J.length; i++) J[i] = J[i]! + Jb[i]!
          const Hb = hvp(f, [0, P, w.C, m, w.k, w.d, w.dist, w.rm], { loss: 0, v })[2] as Float64Array
          for (let i = 0; i < H.length; i++) H[i] = H[i]! + Hb[i]!
        }
        for (let i = 0; i < dir.length; i++) dir[i] = J[i]! / H[i]!
      },
      output: () => matrix(dir, w.k, w.d),
    }
  },
}
