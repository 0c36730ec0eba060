/**
 * Cutting a range of work items (data points, observations) into the tasks of a pool. The cut
 * depends only on the number of items and the options, never on the threads or their timing, so
 * a sum over the tasks in task order is the same to the bit on any machine.
 */
import { TenetError } from '@tenet/ir'

/** Items [i0, i1) of a task. */
export interface ItemRange {
  i0: number
  i1: number
}

/** Options of `splitRange`. */
export interface SplitOptions {
  /** Tasks hold whole multiples of this many items (the last may hold fewer), e.g. a kernel's chunk (default 1). */
  unit?: number
  /**
   * The fewest units in a task (default 1): a task then has at least this much work, so that what
   * each task costs besides its work (claiming it, views of its data, the call) stays small beside it.
   */
  minUnits?: number
  /**
   * The most tasks (default 128): many more than threads, so that claiming evens out the threads'
   * speeds (when one thread runs out of tasks, another has at most one left to finish).
   */
  maxTasks?: number
  /**
   * How many tasks' worth of items at the end to cut finer (default 0: none). When one thread runs
   * out of tasks, the others are each somewhere in a task of their own: with tasks of equal size,
   * the wait at the end is half a task on average. With a taper, the last `taper` × (bulk task)
   * units are cut into tasks that shrink towards the end (each ⌈remaining / (taper + 1)⌉ units, down
   * to one unit, even below `minUnits`: they are few), so the threads finish closer together. Use
   * the number of threads − 1 you expect (1 for two threads); the cut still depends only on the
   * options, never on the threads. The taper adds a few tasks beyond `maxTasks`.
   */
  taper?: number
}

const natural = (name: string, v: number): number => {
  if (!Number.isInteger(v) || v < 0)
    throw new TenetError('parallel/argument', `\`${name}\` must be a non-negative integer, got ${String(v)}`)
  return v
}

const positive = (name: string, v: number): number => {
  if (!Number.isInteger(v) || v < 1)
    throw new TenetError('parallel/argument', `\`${name}\` must be a positive integer, got ${String(v)}`)
  return v
}

/**
 * Cuts items [0, n) into contiguous tasks in order: each a whole number of `unit`s (the last may
 * be shorter), at least `minUnits` units, and no more than `maxTasks` tasks — the fewest units per
 * task that keep within `maxTasks`, but never fewer than `minUnits` — then, with a `taper`, the
 * last tasks cut finer (see `SplitOptions.taper`).
 */
export function splitRange(n: number, options: SplitOptions = {}): ItemRange[] {
  if (!Number.isInteger(n) || n < 0)
    throw new TenetError('parallel/argument', `the number of items must be a non-negative integer, got ${String(n)}`)
  const unit = positive('unit', options.unit ?? 1)
  const minUnits = positive('minUnits', options.minUnits ?? 1)
  const maxTasks = positive('maxTasks', options.maxTasks ?? 128)
  const taper = natural('taper', options.taper ?? 0)
  const units = Math.ceil(n / unit)
  const per = Math.max(minUnits, Math.ceil(units / maxTasks))
  /** Bulk tasks of `per` units while at least this many units are left; then the taper. */
  const bulk = (taper + 1) * per
  const ranges: ItemRange[] = []
  for (let u = 0; u < units; ) {
    const left = units - u
    const size = left >= bulk || taper === 0 ? Math.min(per, left) : Math.ceil(left / (taper + 1))
    ranges.push({ i0: u * unit, i1: Math.min(n, (u + size) * unit) })
    u += size
  }
  return ranges
}
