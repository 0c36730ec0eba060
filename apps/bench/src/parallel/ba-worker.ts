/**
 * The BA worker module of the parallel rows (see `@tenet/parallel`): `init` holds the
 * per-observation copies of cameras and points, the weights and the features (in
 * SharedArrayBuffers, shared with every worker); a task is a range of observations; its output is
 * their reprojection rows of the Jacobian (2 rows of `BA_BLOCK_COLS` values per observation, from
 * the first of the range).
 */
import { createBaRangeJacobian, type BaRangeInit } from '../tenet/ba.js'

export interface BaTask { i0: number; i1: number }

export function setup(init: BaRangeInit): (task: unknown, out: Float64Array) => void {
  const range = createBaRangeJacobian(init)
  return (task, out) => {
    const t = task as BaTask
    range(t.i0, t.i1, out, 0)
  }
}
