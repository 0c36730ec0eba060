/**
 * The BA Jacobian over threads: the observations are cut into ranges, each range's rows (its
 * observation rows and its weight rows) are one task of a `@tenet/parallel` pool (the calling
 * thread takes a share; nothing is left to run on it alone), and every task writes its rows
 * straight into ADBench's CSR values, which live in shared memory (no reduction and no copy: every
 * value is written by exactly one task, so the result is the single-threaded one, to the bit,
 * however the observations are cut). The task list is fixed once (`Pool.taskList`), so a call
 * sends no message, only a wake-up.
 */
import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { createPool, sharedArray, type Pool } from '@tenet/parallel'
import type { BaInstance } from '../data/ba-data.js'
import { createBaJacobian, type BaSparseJacobian } from '../objectives/ba.js'
import type { BaTask } from './ba-worker.js'

/**
 * About this many ranges of observations: many, so that when one thread finishes its last range
 * the other has little left of its own (measured on one thread, ranges of 256 observations cost
 * no more CPU in all than one range of every observation).
 */
export const BA_SHARDS = 128
/** A range is a whole number of `blockJacobian`'s chunks (256 blocks per compiled call). */
const BA_RANGE_UNIT = 256

/** The observation ranges of the tasks: about `BA_SHARDS` of them, whole chunks each. */
export function baRanges(p: number, shards = BA_SHARDS): BaTask[] {
  const per = Math.max(1, Math.ceil(p / shards / BA_RANGE_UNIT)) * BA_RANGE_UNIT
  const tasks: BaTask[] = []
  for (let i0 = 0; i0 < p; i0 += per) tasks.push({ i0, i1: Math.min(p, i0 + per) })
  return tasks
}

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
  const tasks = pool.taskList(baRanges(inst.p))
  return {
    threads: pool.workers + 1,
    run() {
      pool.map(tasks, 0)
      return J
    },
    warmUp: (rounds) => pool.warmUp(tasks, 0, rounds),
    close: () => pool.close(),
  }
}
