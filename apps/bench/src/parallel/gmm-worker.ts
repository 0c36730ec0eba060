/**
 * The GMM worker module of the parallel rows (see `@tenet/parallel`): `init` holds the shape, the
 * points and the parameters, all in SharedArrayBuffers (every worker reads the same memory; the
 * calling thread writes the current parameters there before each call, so no call copies them to
 * a worker); a task is a range of points; its output is the points gradient over that range
 * (layout `gmmPointsGradientLength`).
 */
import { createGmmPointsGradient } from '../tenet/gmm.js'

export interface GmmWorkerInit {
  d: number
  k: number
  x: Float64Array
  alphas: Float64Array
  means: Float64Array
  icf: Float64Array
}
export interface GmmTask {
  i0: number
  i1: number
}

export function setup(init: GmmWorkerInit): (task: unknown, out: Float64Array) => void {
  const pg = createGmmPointsGradient(init.d, init.k)
  return (task, out) => {
    const t = task as GmmTask
    pg.prepare(init.icf)
    pg.run(init.x, init.alphas, init.means, init.icf, t.i0, t.i1, out)
  }
}
