/**
 * Gradients of one Tenet function over data shards, in parallel: every worker compiles the
 * function once; each shard (an argument list) is one task; the loss and the gradients are
 * summed over the shards in shard order (deterministic). This is how a data term Σᵢ ℓ(θ, xᵢ)
 * spreads over cores: shard the points, keep θ the same in every shard, add the gradients.
 */
import { rev, TenetError } from 'tenet'
import { rowLayouts, unflattenRow, type ShardGradient } from './layout.js'
import { builtFile, createPool, type Pool } from './pool.js'
import type { TenetGradientInit } from './tenet-worker.js'

export type { ShardGradient }

/** A pool that differentiates one Tenet function on shards. */
export interface GradientPool {
  readonly workers: number
  /**
   * The loss and the gradient summed over the shards (in shard order). Sums of data arguments'
   * gradients mix unrelated shards: read those with `shardGradients`.
   */
  gradient(shards: readonly unknown[][]): { loss: number; gradient: ShardGradient }
  /**
   * The loss and gradient of each shard. Its arrays are views of one block: made for this call,
   * or with `reuse`, a block the pool keeps and overwrites on the next `reuse` call (nothing large
   * allocated per call; copy what must outlive it).
   */
  shardGradients(shards: readonly unknown[][], reuse?: boolean): Array<{ loss: number; gradient: ShardGradient }>
  /**
   * Differentiates every shard `rounds` times (default 3) on every thread, results dropped, so
   * that each thread's JIT has compiled the gradient before the calls that count (see
   * `Pool.warmUp`).
   */
  warmUp(shards: readonly unknown[][], rounds?: number): void
  close(): Promise<void>
}

/** Options of `tenetGradientPool` (the function and its loss, and the pool's size). */
export interface GradientPoolOptions extends TenetGradientInit {
  workers?: number
  /** How waiting threads spin before they sleep (see `PoolOptions.spinMicroseconds`; default 0). */
  spinMicroseconds?: number | 'auto'
}

/**
 * Starts a pool whose workers each compile `source` and differentiate `entry` with respect to
 * its float arguments (loss: the scalar argument `loss`). All shards must have the same shapes
 * (argument types and array lengths). Arrays made with `sharedArray` cross to the workers
 * without being copied; others are copied per call.
 */
export async function tenetGradientPool(options: GradientPoolOptions): Promise<GradientPool> {
  const { workers, spinMicroseconds, ...init } = options
  // the layout of the outputs, from a gradient computed here
  const m = rev.with({ backend: init.backend === 'wasm' ? 'cpu' : (init.backend ?? 'cpu') })([
    init.source,
  ] as unknown as TemplateStringsArray)
  const f = m[init.entry]
  if (!f)
    throw new TenetError(
      'parallel/entry',
      `no function \`${init.entry}\` in the source (it has: ${Object.keys(m).join(', ')})`,
    )
  const pool: Pool = await createPool({
    module: builtFile('tenet-worker.js'),
    init,
    ...(workers !== undefined ? { workers } : {}),
    ...(spinMicroseconds !== undefined ? { spinMicroseconds } : {}),
  })
  const layouts = rowLayouts(f, init.loss)
  /** The rows block of `shardGradients(…, true)`, kept between calls. */
  let kept = new Float64Array(0)
  return {
    workers: pool.workers,
    gradient(shards) {
      const l = layouts.check(shards)
      return unflattenRow(pool.sum(shards, l.total), l.sizes)
    },
    shardGradients(shards, reuse = false) {
      const l = layouts.check(shards)
      const size = shards.length * l.total
      if (reuse && kept.length !== size) kept = new Float64Array(size)
      const rows = reuse ? pool.map(shards, l.total, kept) : pool.map(shards, l.total)
      // (the rows are this call's own copy: the shards' arrays are views of it, not copied again)
      return shards.map((_, t) => unflattenRow(rows.subarray(t * l.total, (t + 1) * l.total), l.sizes, true))
    },
    warmUp(shards, rounds) {
      pool.warmUp(shards, layouts.check(shards).total, rounds)
    },
    close: () => pool.close(),
  }
}
