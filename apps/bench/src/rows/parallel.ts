/**
 * Tenet on several threads (`@tenet/parallel`), a pool of worker threads plus the calling thread:
 * - the GMM gradient with its points sharded, the shard gradients added in shard order
 *   (deterministic: the same bits for any number of threads);
 * - the BA Jacobian with its observations in ranges, each range's rows written by one task;
 * - the batched Bessel gradient (J′ at 10⁵ z) with the z in shards, through
 *   `tenetGradientPool` (each shard's gradient is its own slice of J′: no reduction).
 * Every row warms its pool up in setup (each thread runs every task a few times), so that the
 * workers' JIT has compiled the task before the row is checked and timed. The rows are timed on
 * the wall clock (`clock: 'wall'`: the run clock reads the calling thread alone, see
 * `run-clock.ts`), and their speed-up over the single-thread `Tenet (cpu)` row is reported from
 * both rows' wall-clock medians (`speedUpOver`).
 */
import { availableParallelism } from 'node:os'
import { checkClose, TOLERANCE } from '../harness/check.js'
import { defineRowFamily } from '../harness/registry.js'
import { createGmmParallel } from '../parallel/gmm.js'
import { createBaParallel } from '../parallel/ba.js'
import { sharedArray, tenetGradientPool } from '@tenet/parallel'
import { besselBatchSource } from '../tenet/programs.js'
import { checkBaJacobian } from '../workloads/ba.js'
import { TENET_ROW } from './tenet.js'

/** Shards of the Bessel batch (fixed, so the work per task does not depend on the thread count). */
const BESSEL_SHARDS = 16

const threads = Math.max(2, availableParallelism())
/** Warm-up rounds of each pool in setup (a fresh worker's first call is about 3× slower than its third). */
const WARM_UP_ROUNDS = 3
/**
 * How the pools' threads wait (`spinMicroseconds`): from the environment variable
 * `TENET_POOL_SPIN`, `'auto'` (spins bounded by the work) or microseconds; unset, 0 (sleep at
 * once). On the loaded development machine `'auto'` cost 5–10% more CPU per BA call at ba1 size
 * and saved nothing measurable; on a quiet machine it may save a wake-up per call (a sleeping
 * calling thread resumed a median 33 µs after the worker's notify there, a spinning one 1 µs).
 */
export function poolSpin(env = process.env.TENET_POOL_SPIN): number | 'auto' {
  if (env === undefined || env === '') return 0
  if (env === 'auto') return 'auto'
  const us = Number(env)
  if (!(us >= 0)) throw new Error(`TENET_POOL_SPIN must be 'auto' or a non-negative number of microseconds, got ${env}`)
  return us
}

export const parallelRows = defineRowFamily({
  family: 'Tenet (threads)',
  rows: {
    gmm: [
      {
        name: `Tenet (cpu, ${threads} threads)`,
        clock: 'wall',
        speedUpOver: TENET_ROW,
        kind: 'gradient',
        async setup(c) {
          const p = await createGmmParallel(c.inst, threads - 1, undefined, poolSpin())
          p.warmUp(WARM_UP_ROUNDS)
          const out = new Float64Array(c.gradient().length)
          return {
            run: () => void p.gradient(c.inst, out),
            check: () => checkClose(p.gradient(c.inst, out), c.gradient(), TOLERANCE.f64, 'gradient'),
            dispose: () => void p.close(),
          }
        },
      },
    ],
    ba: [
      {
        name: `Tenet (cpu, ${threads} threads)`,
        clock: 'wall',
        speedUpOver: TENET_ROW,
        kind: 'jacobian',
        async setup(c) {
          const p = await createBaParallel(c.inst, threads - 1, poolSpin())
          p.warmUp(WARM_UP_ROUNDS)
          return {
            run: () => void p.run(),
            check: () => checkBaJacobian(c, p.run().vals, TOLERANCE.f64),
            dispose: () => void p.close(),
          }
        },
      },
    ],
    bessel: [
      {
        name: `Tenet (cpu, ${threads} threads)`,
        clock: 'wall',
        speedUpOver: TENET_ROW,
        kind: 'gradient',
        async setup(c) {
          const b = c.batch
          if (!b) return { na: 'one z: nothing to share out (the batch case has the threads row)' }
          const pool = await tenetGradientPool({
            source: besselBatchSource,
            entry: 'ibesselj_sum',
            loss: 0,
            checks: false,
            workers: threads - 1,
            spinMicroseconds: poolSpin(),
          })
          const n = b.zs.length,
            per = Math.ceil(n / BESSEL_SHARDS)
          const shards: unknown[][] = []
          for (let i0 = 0; i0 < n; i0 += per) {
            const i1 = Math.min(n, i0 + per)
            shards.push([0, sharedArray(i1 - i0), c.nu, sharedArray(b.zs.subarray(i0, i1))])
          }
          pool.warmUp(shards, WARM_UP_ROUNDS)
          const dz = new Float64Array(n)
          const run = () => {
            let o = 0
            // (views of a block the pool keeps: nothing large allocated per call)
            for (const r of pool.shardGradients(shards, true)) {
              const g = r.gradient[3] as Float64Array
              dz.set(g, o)
              o += g.length
            }
            return dz
          }
          return {
            run: () => void run(),
            check: () => checkClose(run(), b.derivative(), 1e-7, 'dJ/dz'),
            dispose: () => void pool.close(),
          }
        },
      },
    ],
  },
})
