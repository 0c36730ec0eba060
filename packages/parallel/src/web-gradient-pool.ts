/**
 * Gradients of one Tenet function over data shards on Web Workers: the browser twin of
 * `tenetGradientPool`. Every worker compiles the function once; each shard is one task; loss and
 * gradients are summed in shard order, so the result has the same bits as the Node pool's.
 */
import { rev, TenetError } from 'tenet'
import { rowLayouts, unflattenRow, type ShardGradient } from './layout.js'
import type { TenetGradientInit } from './tenet-worker.js'
import { createWebPool, type WebPool } from './web-pool.js'

/** A browser pool that differentiates one Tenet function on shards. */
export interface WebGradientPool {
  readonly workers: number
  /** The loss and the gradient summed over the shards (in shard order). */
  gradient(shards: readonly unknown[][]): Promise<{ loss: number; gradient: ShardGradient }>
  /** The loss and gradient of each shard. */
  shardGradients(shards: readonly unknown[][]): Promise<Array<{ loss: number; gradient: ShardGradient }>>
  /**
   * Differentiates every shard `rounds` times (default 3) on every worker, results dropped, so
   * that each worker's JIT has compiled the gradient before the calls that count (see
   * `WebPool.warmUp`).
   */
  warmUp(shards: readonly unknown[][], rounds?: number): Promise<void>
  close(): void
}

/** Options of `webGradientPool`: the function, its loss, and the pool's size and file locations. */
export interface WebGradientPoolOptions extends TenetGradientInit {
  workers?: number
  /** The URL of this package's `tenet-worker.js` (default: beside this module; set it when a bundler moves files). */
  workerModule?: string | URL
  /** The URL of this package's `web-worker-entry.js` (default: beside `web-pool.js`). */
  workerEntry?: string | URL
}

/**
 * Starts Web Workers that each compile `source` and differentiate `entry` with respect to its
 * float arguments (loss: the scalar argument `loss`). The page must let the workers import
 * `tenet` (a bundler, or an import map the workers see). All shards must have the same shapes.
 */
export async function webGradientPool(options: WebGradientPoolOptions): Promise<WebGradientPool> {
  const { workers, workerModule, workerEntry, ...init } = options
  // the layout of the rows, from a gradient computed here (the interpreter where code generation is blocked)
  const m = rev.with({ backend: init.backend === 'wasm' ? 'cpu' : (init.backend ?? 'cpu') })([
    init.source,
  ] as unknown as TemplateStringsArray)
  const f = m[init.entry]
  if (!f)
    throw new TenetError(
      'parallel/entry',
      `no function \`${init.entry}\` in the source (it has: ${Object.keys(m).join(', ')})`,
    )
  const pool: WebPool = await createWebPool({
    module: workerModule ?? new URL('./tenet-worker.js', import.meta.url),
    init,
    ...(workers !== undefined ? { workers } : {}),
    ...(workerEntry !== undefined ? { workerEntry } : {}),
  })
  const layouts = rowLayouts(f, init.loss)
  return {
    workers: pool.workers,
    async gradient(shards) {
      const l = layouts.check(shards)
      return unflattenRow(await pool.sum(shards, l.total), l.sizes)
    },
    async shardGradients(shards) {
      const l = layouts.check(shards)
      const rows = await pool.map(shards, l.total)
      return shards.map((_, t) => unflattenRow(rows.subarray(t * l.total, (t + 1) * l.total), l.sizes))
    },
    warmUp(shards, rounds) {
      return pool.warmUp(shards, layouts.check(shards).total, rounds)
    },
    close: () => pool.close(),
  }
}
