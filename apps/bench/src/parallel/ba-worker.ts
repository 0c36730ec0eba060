/**
 * The BA worker module of the parallel rows (see `@tenet/parallel`): `init` is the instance and
 * the Jacobian's values (in a SharedArrayBuffer); a task is a range of observations, whose rows
 * (x and y, `BA_BLOCK_COLS` each, with `createBaJacobianRows` on this thread, and the weight rows)
 * it writes straight into the shared values (its pool output is empty).
 */
import type { BaInstance } from '../data/ba-data.js'
import { baWeightRows, createBaJacobianRows } from '../tenet/ba.js'

export interface BaTask {
  i0: number
  i1: number
}

export interface BaWorkerInit {
  inst: BaInstance
  vals: Float64Array
}

export function setup(init: BaWorkerInit): (task: unknown, out: Float64Array) => void {
  const rows = createBaJacobianRows(init.inst)
  return (task) => {
    const { i0, i1 } = task as BaTask
    rows(i0, i1, init.vals, 0)
    baWeightRows(init.inst, init.vals, i0, i1)
  }
}
