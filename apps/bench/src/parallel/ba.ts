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
import { createPool, sharedArray, splitRange, type Pool } from '@tenet/parallel'
import type { BaInstance } from '../data/ba-data.js'
import { createBaJacobian, type BaSparseJacobian } from '../objectives/ba.js'
import type { BaTask } from './ba-worker.js'

/**
 * At most this many ranges of observations: many, so that when one thread finishes its last range
 * the other has little left of its own.
 */
export const BA_SHARDS = 128
/** A range is a whole number of `blockJacobian`'s chunks (256 blocks per compiled call). */
const BA_RANGE_UNIT = 256
/**
 * At least two chunks a range: a task costs about 0.8 µs besides its work on one thread (the
 * claim, the views of its data, the driver's checks; measured: ba1's Jacobian as 125 one-chunk
 * ranges took 2% longer than as one range), 2% of a one-chunk range (about 38 µs at ba1 size on
 * the development machine). Only ba1 (125 chunks) had one-chunk ranges; ba2–ba5 cut as before.
 */
const BA_MIN_CHUNKS = 2

/**
 * The last ranges are cut finer (`splitRange`'s taper): when one thread runs out of ranges the
 * other is within a small one, down to one chunk (about 33 µs at ba1 size on the development
 * machine, instead of half a two-chunk range on average with ranges of equal size).
 */
export const BA_TAPER = 2

/**
 * The observation ranges of the tasks: at most `BA_SHARDS` of them, of at least two whole chunks
 * each, then a few smaller ones at the end (`splitRange` with a taper of `BA_TAPER`).
 */
export function baRanges(p: number, shards = BA_SHARDS): BaTask[] {
  return splitRange(p, { unit: BA_RANGE_UNIT, minUnits: BA_MIN_CHUNKS, maxTasks: shards, taper: BA_TAPER })
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

/** A parallel BA Jacobian for one instance (the instance is sent to every worker once); `spinMicroseconds` as `createPool`'s. */
export async function createBaParallel(
  inst: BaInstance,
  workers: number,
  spinMicroseconds: number | 'auto' = 0,
): Promise<BaParallel> {
  const empty = createBaJacobian(inst)
  const J: BaSparseJacobian = { ...empty, vals: sharedArray(empty.vals.length) }
  const pool: Pool = await createPool({
    module: workerModule(),
    init: { inst, vals: J.vals },
    workers,
    spinMicroseconds,
  })
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
