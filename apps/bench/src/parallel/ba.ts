/**
 * The BA Jacobian over threads: the observations are cut into a fixed number of ranges, each
 * range's rows are one task of a `@tenet/parallel` pool (the calling thread takes a share), and
 * every task writes its rows straight into ADBench's CSR values, which live in shared memory (no
 * reduction and no copy: every value is written by exactly one task, so the result is the
 * single-threaded one, to the bit).
 */
import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { createPool, sharedArray, type Pool } from '@tenet/parallel'
import type { BaInstance } from '../data/ba-data.js'
import { createBaJacobian, type BaSparseJacobian } from '../objectives/ba.js'
import { baWeightRows } from '../tenet/ba.js'
import type { BaTask } from './ba-worker.js'

/** Ranges of observations: fixed, so the tasks do not depend on the number of threads. */
export const BA_SHARDS = 16

function workerModule(): URL {
  const here = new URL('./ba-worker.js', import.meta.url)
  if (existsSync(fileURLToPath(here))) return here
  return new URL('../../dist/parallel/ba-worker.js', import.meta.url)
}

export interface BaParallel {
  run(): BaSparseJacobian
  /** Runs every range `rounds` times on every thread (JIT warm-up; see `Pool.warmUp`). */
  warmUp(rounds?: number): void
  readonly threads: number
  close(): Promise<void>
}

/** A parallel BA Jacobian for one instance (the instance is sent to every worker once). */
export async function createBaParallel(inst: BaInstance, workers: number): Promise<BaParallel> {
  const empty = createBaJacobian(inst)
  const J: BaSparseJacobian = { ...empty, vals: sharedArray(empty.vals.length) }
  const pool: Pool = await createPool({ module: workerModule(), init: { inst, vals: J.vals }, workers })
  const per = Math.ceil(inst.p / BA_SHARDS)
  const tasks: BaTask[] = []
  for (let i0 = 0; i0 < inst.p; i0 += per) tasks.push({ i0, i1: Math.min(inst.p, i0 + per) })
  return {
    threads: pool.workers + 1,
    run() {
      pool.map(tasks, 0)
      baWeightRows(inst, J.vals)
      return J
    },
    warmUp: (rounds) => pool.warmUp(tasks, 0, rounds),
    close: () => pool.close(),
  }
}
