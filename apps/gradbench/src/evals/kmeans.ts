/**
 * kmeans: cost = Σᵢ minⱼ ‖Pᵢ − Cⱼ‖². The squared distances and their running minima (min is not
 * invertible, the prefix minima are) are kept in workspace arrays, which the adjoint uncomputes.
 * (Per-point ancilla arrays in a `routine` leave nothing behind but allocate per point and make
 * the gradient run the distances three times: 13× the cost, against about 3× here.) `dir` is J ⊘ diag(H): J by `grad`, diag(H) by one exact
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
  const points = o.points, centroids = o.centroids
  if (!Array.isArray(points) || !Array.isArray(centroids) || centroids.length === 0 || !Array.isArray(centroids[0])) {
    throw new Error('kmeans needs `points: double[n][d]` and `centroids: double[k][d]`')
  }
  const n = points.length, k = centroids.length, d = (centroids[0] as unknown[]).length
  return { P: flat(o, 'points', n * d), C: flat(o, 'centroids', k * d), n, k, d, dist: new Float64Array(n * k), rm: new Float64Array(n * k) }
}

export const kmeans: EvalModule = {
  cost(input): Prepared {
    const w = parse(input)
    const f = fn(compile(kmeansSource), 'kmeans').core
    let y = 0
    return {
      run: () => {
        w.dist.fill(0)
        w.rm.fill(0)
        f(0, w.P, w.C, w.n, w.k, w.d, w.dist, w.rm)
        y = f.results[0]!
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
    return {
      run: () => {
        g.run(0, w.P, w.C, w.n, w.k, w.d, w.dist, w.rm)
        const J = g.buffers[2]!
        const H = hvp(f, [0, w.P, w.C, w.n, w.k, w.d, w.dist, w.rm], { loss: 0, v: [0, null, ones, null, null, null, null, null] })[2] as Float64Array
        for (let i = 0; i < dir.length; i++) dir[i] = J[i]! / H[i]!
      },
      output: () => matrix(dir, w.k, w.d),
    }
  },
}
