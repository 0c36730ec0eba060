/**
 * Gradients of one Tenet function over data shards, in parallel: every worker compiles the
 * function once; each shard (an argument list) is one task; the loss and the gradients are
 * summed over the shards in shard order (deterministic). This is how a data term Σᵢ ℓ(θ, xᵢ)
 * spreads over cores: shard the points, keep θ the same in every shard, add the gradients.
 */
import { grad, rev, TenetError } from 'tenet'
import { builtFile, createPool, type Pool } from './pool.js'
import type { TenetGradientInit } from './tenet-worker.js'

/** A gradient in the shape `gradient` of `tenet` returns: a number, an array, or null per argument. */
export type ShardGradient = Array<number | Float64Array | null>

/** A pool that differentiates one Tenet function on shards. */
export interface GradientPool {
  readonly workers: number
  /**
   * The loss and the gradient summed over the shards (in shard order). Sums of data arguments'
   * gradients mix unrelated shards: read those with `shardGradients`.
   */
  gradient(shards: readonly unknown[][]): { loss: number; gradient: ShardGradient }
  /** The loss and gradient of each shard. */
  shardGradients(shards: readonly unknown[][]): Array<{ loss: number; gradient: ShardGradient }>
  close(): Promise<void>
}

/** Options of `tenetGradientPool` (the function and its loss, and the pool's size). */
export interface GradientPoolOptions extends TenetGradientInit {
  workers?: number
}

/**
 * Starts a pool whose workers each compile `source` and differentiate `entry` with respect to
 * its float arguments (loss: the scalar argument `loss`). All shards must have the same shapes
 * (argument types and array lengths). Arrays made with `sharedArray` cross to the workers
 * without being copied; others are copied per call.
 */
export async function tenetGradientPool(options: GradientPoolOptions): Promise<GradientPool> {
  const { workers, ...init } = options
  // the layout of the outputs, from a gradient computed here
  const m = rev.with({ backend: init.backend === 'wasm' ? 'cpu' : (init.backend ?? 'cpu') })([init.source] as unknown as TemplateStringsArray)
  const f = m[init.entry]
  if (!f) throw new TenetError('parallel/entry', `no function \`${init.entry}\` in the source (it has: ${Object.keys(m).join(', ')})`)
  const pool: Pool = await createPool({ module: builtFile('tenet-worker.js'), init, ...(workers !== undefined ? { workers } : {}) })
  let layout: { sizes: Array<number | null>; total: number; key: string } | undefined
  const layoutOf = (shard: unknown[]) => {
    const key = shard.map((a) => (ArrayBuffer.isView(a) ? `a${(a as Float64Array).length}` : typeof a)).join(',')
    if (layout?.key !== key) {
      const g = grad(f, { loss: init.loss })(...shard)
      const sizes = g.map((v) => (v === null ? null : typeof v === 'number' ? 0 : (v as Float64Array).length))
      layout = { sizes, total: 1 + sizes.reduce<number>((s, n) => s + (n === null ? 0 : Math.max(1, n)), 0), key }
    }
    return layout
  }
  const unflatten = (row: Float64Array, sizes: Array<number | null>): { loss: number; gradient: ShardGradient } => {
    let o = 1
    const gradient = sizes.map((n) => {
      if (n === null) return null
      if (n === 0) return row[o++]!
      const a = row.slice(o, o + n)
      o += n
      return a
    })
    return { loss: row[0]!, gradient }
  }
  const check = (shards: readonly unknown[][]) => {
    if (!shards.length) throw new TenetError('parallel/argument', 'no shards')
    const l = layoutOf(shards[0]!)
    for (const s of shards) if (layoutOf(s).key !== l.key) throw new TenetError('parallel/argument', 'every shard must have the same argument types and array lengths')
    return l
  }
  return {
    workers: pool.workers,
    gradient(shards) {
      const l = check(shards)
      return unflatten(pool.sum(shards, l.total), l.sizes)
    },
    shardGradients(shards) {
      const l = check(shards)
      const rows = pool.map(shards, l.total)
      return shards.map((_, t) => unflatten(rows.subarray(t * l.total, (t + 1) * l.total), l.sizes))
    },
    close: () => pool.close(),
  }
}
