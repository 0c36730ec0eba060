/**
 * Seeded randomness: a small, fast PRNG (mulberry32) so that every generated program and
 * argument list is reproducible from its seed alone.
 */
/**
 * mulberry32 seeded with `seed` itself (no mixing, unlike {@link Random}): a function that returns
 * the next float in [0, 1) of the stream. The tests' small generator of random arguments.
 */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

export class Random {
  private state: number

  constructor(seed: number) {
    // mix the seed so that neighbouring seeds give unrelated streams
    let s = (seed | 0) ^ 0x9e3779b9
    s = Math.imul(s ^ (s >>> 16), 0x85ebca6b)
    s = Math.imul(s ^ (s >>> 13), 0xc2b2ae35)
    this.state = (s ^ (s >>> 16)) >>> 0
  }

  /** A float in [0, 1). */
  next(): number {
    let t = (this.state = (this.state + 0x6d2b79f5) >>> 0)
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }

  /** An integer in [lo, hi] (both inclusive). */
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1))
  }

  /** True with probability `p`. */
  chance(p: number): boolean {
    return this.next() < p
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new Error('Random.pick: empty list')
    return items[Math.floor(this.next() * items.length)]!
  }

  /** Picks by weight; entries with weight 0 are never chosen. */
  weighted<T>(entries: ReadonlyArray<readonly [T, number]>): T {
    const total = entries.reduce((s, [, w]) => s + w, 0)
    if (total <= 0) throw new Error('Random.weighted: no positive weight')
    let r = this.next() * total
    for (const [v, w] of entries) {
      if ((r -= w) < 0) return v
    }
    return entries[entries.length - 1]![0]
  }

  /** A 32-bit signed integer, biased towards small values and the interesting edges. */
  int32(): number {
    return this.weighted<() => number>([
      [() => this.int(-9, 9), 5],
      [() => this.int(-1000, 1000), 2],
      [() => (this.next() * 4294967296) | 0, 2],
      [() => this.pick([0, 1, -1, 2147483647, -2147483648, 65536, -65536]), 1],
    ])()
  }
}
