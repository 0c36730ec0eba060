/**
 * The GMM gradient over threads: the points are cut into a fixed number of shards (so the
 * result does not depend on how many threads there are), each shard's points gradient is one
 * task of a `@tenet/parallel` pool (the threads, the calling one too, claim tasks as they go), the
 * pool adds them in shard order, and the calling thread finishes (gmm_q's adjoint, gmm_rest's
 * gradient). The points and the parameters live in shared memory: a call writes the parameters
 * there and sends each worker only the point ranges.
 */
import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { createPool, sharedArray, splitRange, type Pool } from '@tenet/parallel'
import { gmmIcfSize, gmmParameterCount, type GmmInstance } from '../data/gmm-data.js'
import { createGmmGradientFinish, createGmmPointsGradient, GMM_BLOCK, gmmPointsGradientLength } from '../tenet/gmm.js'
import type { GmmTask } from './gmm-worker.js'

/**
 * Shards of the points: fixed, so the sum (in shard order) is the same for any thread count; 40
 * of them (of whole blocks of `GMM_BLOCK` points) rather than 16, so that when one thread has
 * no shard left the other has less of its last one to finish (a shard of 16 is a sixteenth of the
 * work, up to an eighth of a two-thread call).
 * The calling thread adds the finished shards' rows between its own shards and while the worker
 * finishes its last.
 */
export const GMM_SHARDS = 40
/**
 * The last shards are cut finer (`splitRange`'s taper, down to one block): with 40 equal shards of
 * four blocks, the thread that runs out of shards first waited for half a shard of the other's on
 * average, about 2.5% of a two-thread call; a fixed number, so the cut (and the sum) does not
 * depend on the threads.
 */
export const GMM_TAPER = 2

/** The built worker module (beside this file in dist/, or in dist/ when run from src/). */
function workerModule(): URL {
  const here = new URL('./gmm-worker.js', import.meta.url)
  if (existsSync(fileURLToPath(here))) return here
  return new URL('../../dist/parallel/gmm-worker.js', import.meta.url)
}

export interface GmmParallel {
  /** The gradient at `inst`'s parameters (its points must be those the pool was made with). */
  gradient(inst: GmmInstance, out?: Float64Array): Float64Array
  /** Runs every shard `rounds` times on every thread (JIT warm-up; see `Pool.warmUp`). */
  warmUp(rounds?: number): void
  readonly threads: number
  close(): Promise<void>
}

/**
 * A parallel GMM gradient for one instance (its points are shared with the workers once), its
 * points cut into `shards` tasks (the sum, in shard order, depends on `shards`, never on `workers`);
 * `spinMicroseconds` as `createPool`'s.
 */
export async function createGmmParallel(
  inst: GmmInstance,
  workers: number,
  shards = GMM_SHARDS,
  spinMicroseconds: number | 'auto' = 0,
): Promise<GmmParallel> {
  const { d, k, n } = inst
  const params = { alphas: sharedArray(k), means: sharedArray(k * d), icf: sharedArray(k * gmmIcfSize(d)) }
  const setParams = (g: GmmInstance): void => {
    params.alphas.set(g.alphas)
    params.means.set(g.means)
    params.icf.set(g.icf)
  }
  setParams(inst)
  const pool: Pool = await createPool({
    module: workerModule(),
    init: { d, k, x: sharedArray(inst.x), ...params },
    workers,
    spinMicroseconds,
  })
  const pg = createGmmPointsGradient(d, k)
  const finish = createGmmGradientFinish(d, k)
  const len = gmmPointsGradientLength(d, k)
  const pts = new Float64Array(len)
  // (whole blocks, at most `shards` tasks and a few smaller ones at the end: a fixed cut of the points)
  const ranges: GmmTask[] = splitRange(n, { unit: GMM_BLOCK, maxTasks: shards, taper: GMM_TAPER })
  // (fixed: sent to the workers once)
  const tasks = pool.taskList(ranges)
  return {
    threads: pool.workers + 1,
    gradient(g: GmmInstance, out = new Float64Array(gmmParameterCount(d, k))) {
      setParams(g)
      pool.sum(tasks, len, pts)
      pg.prepare(g.icf)
      return finish(g, pts, pg.qdiag, pg.sumq, out)
    },
    warmUp: (rounds) => pool.warmUp(tasks, len, rounds),
    close: () => pool.close(),
  }
}
