/**
 * The row layout shared by the Node and the browser gradient pools: a shard's output row is the
 * loss followed by the gradient of every float argument, flattened in argument order (scalars one
 * number, arrays their elements). The layout is read once per argument shape from a gradient
 * computed on the calling thread.
 */
import { grad, TenetError, type TenetFunction } from 'tenet'

/** A gradient in the shape `gradient` of `tenet` returns: a number, an array, or null per argument. */
export type ShardGradient = Array<number | Float64Array | null>

/** Per argument: null (no gradient), 0 (a scalar) or the array length; `total` = row length. */
export interface RowLayout {
  sizes: Array<number | null>
  total: number
  key: string
}

/** The layout of one function's rows, cached per argument shape. */
export function rowLayouts(f: TenetFunction, loss: number) {
  let layout: RowLayout | undefined
  const layoutOf = (shard: unknown[]): RowLayout => {
    const key = shard.map((a) => (ArrayBuffer.isView(a) ? `a${(a as Float64Array).length}` : typeof a)).join(',')
    if (layout?.key !== key) {
      const g = grad(f, { loss })(...shard)
      const sizes = g.map((v) => (v === null ? null : typeof v === 'number' ? 0 : (v as Float64Array).length))
      layout = { sizes, total: 1 + sizes.reduce<number>((s, n) => s + (n === null ? 0 : Math.max(1, n)), 0), key }
    }
    return layout
  }
  return {
    /** Checks that every shard has the shapes of the first; returns their layout. */
    check(shards: readonly unknown[][]): RowLayout {
      if (!shards.length) throw new TenetError('parallel/argument', 'no shards')
      const l = layoutOf(shards[0]!)
      for (const s of shards)
        if (layoutOf(s).key !== l.key)
          throw new TenetError('parallel/argument', 'every shard must have the same argument types and array lengths')
      return l
    },
  }
}

/**
 * One row back in the shape of `gradient`'s result: arrays are copies of the row's parts, or, with
 * `views`, subarrays of `row` (for a row the caller owns: no second copy).
 */
export function unflattenRow(
  row: Float64Array,
  sizes: Array<number | null>,
  views = false,
): { loss: number; gradient: ShardGradient } {
  let o = 1
  const gradient = sizes.map((n) => {
    if (n === null) return null
    if (n === 0) return row[o++]!
    const a = views ? row.subarray(o, o + n) : row.slice(o, o + n)
    o += n
    return a
  })
  return { loss: row[0]!, gradient }
}

/**
 * Adds the rows of `block` (task-major, row t from t × `stride`) into `out` in task order: the
 * bits do not depend on who ran what.
 */
export function sumRows(
  block: Float64Array,
  tasks: number,
  outLength: number,
  out: Float64Array,
  stride = outLength,
): Float64Array {
  out.fill(0)
  for (let t = 0; t < tasks; t++) for (let j = 0; j < outLength; j++) out[j] += block[t * stride + j]!
  return out
}
