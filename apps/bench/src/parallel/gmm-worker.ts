/**
 * The GMM worker module of the parallel rows (see `@tenet/parallel`): `init` holds the shape and
 * the points (in a SharedArrayBuffer, so every worker reads the same memory); a task is a range
 * of points with the current parameters; its output is the points gradient over that range
 * (layout `gmmPointsGradientLength`).
 */
import { createGmmPointsGradient } from '../tenet/gmm.js'

export interface GmmWorkerInit {
  d: number
  k: number
  x: Float64Array
}
export interface GmmTask {
  i0: number
  i1: number
  alphas: Float64Array
  means: Float64Array
  icf: Float64Array
}

export function setup(init: GmmWorkerInit): (task: unknown, out: Float64Array) => void {
  const pg = createGmmPointsGradient(init.d, init.k)
  return (task, out) => {
    const t = task as GmmTask
    pg.prepare(t.icf)
    pg.run(init.x, t.alphas, t.means, t.icf, t.i0, t.i1, out)
  }
}
