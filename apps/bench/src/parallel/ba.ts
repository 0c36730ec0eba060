/**
 * The BA Jacobian over threads: the observations are cut into a fixed number of shards, each
 * shard's reprojection rows are one task of a `@tenet/parallel` pool (the calling thread takes a
 * share), and the calling thread copies them into the sparse Jacobian and fills the weight rows.
 * Observations are independent, so every value is computed exactly as on one thread.
 */
import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { createPool, sharedArray, type Pool } from '@tenet/parallel'
import type { BaInstance } from '../data/ba-data.js'
import { BA_BLOCK_COLS, createBaJacobian, type BaSparseJacobian } from '../objectives/ba.js'
import { baObservationCopies } from '../tenet/ba.js'
import type { BaTask } from './ba-worker.js'

/** Shards of the observations (fixed: the work split does not depend on the thread count). */
export const BA_SHARDS = 16

function workerModule(): URL {
  const here = new URL('./ba-worker.js', import.meta.url)
  if (existsSync(fileURLToPath(here))) return here
  return new URL('../../dist/parallel/ba-worker.js', import.meta.url)
}

export interface BaParallel {
  run(): BaSparseJacobian
  readonly threads: number
  close(): Promise<void>
}

/** A parallel BA Jacobian for one instance (its per-observation copies are shared with the workers once). */
export async function createBaParallel(inst: BaInstance, workers: number): Promise<BaParallel> {
  const { p, w } = inst
  const { cam, pt } = baObservationCopies(inst)
  const init = { p, cam: sharedArray(cam), pt: sharedArray(pt), w: sharedArray(w), feats: sharedArray(inst.feats) }
  const pool: Pool = await createPool({ module: workerModule(), init, workers })
  const per = Math.ceil(p / BA_SHARDS)
  const tasks: BaTask[] = []
  for (let i0 = 0; i0 < p; i0 += per) tasks.push({ i0, i1: Math.min(p, i0 + per) })
  const rowLength = 2 * BA_BLOCK_COLS * per
  const J = createBaJacobian(inst)
  return {
    threads: pool.workers + 1,
    run() {
      const rows = pool.map(tasks, rowLength)
      tasks.forEach((t, k) => J.vals.set(rows.subarray(k * rowLength, k * rowLength + 2 * BA_BLOCK_COLS * (t.i1 - t.i0)), 2 * BA_BLOCK_COLS * t.i0))
      // weight rows: d(1 − w²)/dw
      const base = 2 * BA_BLOCK_COLS * p
      for (let i = 0; i < p; i++) J.vals[base + i] = -2 * w[i]!
      return J
    },
    close: () => pool.close(),
  }
}
