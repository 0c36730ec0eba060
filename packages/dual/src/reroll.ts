/**
 * Loop rerolling of a recorded instruction sequence. A trace of a program with loops is the loop
 * body unrolled: `mul(0, 1000) add(…) mul(1, 1001) add(…) …`. Each item here has a structural key
 * (its operation and everything that must be identical across iterations) and integer parameters
 * (node ids, constant-pool indices). A run of `count` consecutive groups of `p` items whose keys
 * repeat and whose parameters advance by the same vector every group is one loop: its parameters are
 * those of the first group, and the advance per iteration (`deltas`) becomes part of its key. Loops
 * are items too, so passes repeat and nest (a matrix–vector product becomes a loop over rows of a
 * loop over columns). Generated code is then proportional to the program text, not to its run.
 */

/** One recorded instruction: `tmpl` says what to emit, `params` fill it in. */
export interface Ins<T> {
  readonly kind: 'ins'
  readonly key: number
  readonly params: number[]
  readonly tmpl: T
}

/** A rerolled loop: `count` iterations of `body`, parameters advancing by `deltas` per iteration. */
export interface Loop<T> {
  readonly kind: 'loop'
  readonly key: number
  /** The body's parameters in its first iteration, concatenated in body order. */
  readonly params: number[]
  readonly deltas: number[]
  readonly count: number
  readonly body: Item<T>[]
  /** Instructions executed by one run of the loop. */
  readonly weight: number
}

export type Item<T> = Ins<T> | Loop<T>

/** Interns structural keys as small integers (cheap to compare). */
export class Keys {
  private readonly map = new Map<string, number>()
  /** The integer for a key string. */
  id(key: string): number {
    let k = this.map.get(key)
    if (k === undefined) {
      k = this.map.size
      this.map.set(key, k)
    }
    return k
  }
}

const weightOf = <T>(it: Item<T>): number => (it.kind === 'ins' ? 1 : it.weight)

/**
 * One left-to-right pass: at each position, the period `p ≤ maxPeriod` whose loop covers the most
 * instructions (ties: the shortest period) becomes a loop; otherwise the item is kept.
 */
function pass<T>(items: Item<T>[], maxPeriod: number, keys: Keys): Item<T>[] {
  const out: Item<T>[] = []
  const n = items.length
  let i = 0
  while (i < n) {
    let bestP = 0,
      bestCount = 0,
      bestCover = 0
    let bestDeltas: number[] | undefined
    const lim = Math.min(maxPeriod, (n - i) >> 1)
    for (let p = 1; p <= lim; p++) {
      if (items[i + p]!.key !== items[i]!.key) continue
      let same = true
      for (let j = 1; j < p; j++)
        if (items[i + j]!.key !== items[i + p + j]!.key) {
          same = false
          break
        }
      if (!same) continue
      const deltas: number[] = []
      let groupWeight = 0
      for (let j = 0; j < p; j++) {
        const a = items[i + j]!.params,
          b = items[i + p + j]!.params
        for (let m = 0; m < a.length; m++) deltas.push(b[m]! - a[m]!)
        groupWeight += weightOf(items[i + j]!)
      }
      let count = 2
      for (; i + (count + 1) * p <= n; count++) {
        let ok = true,
          m = 0
        for (let j = 0; j < p && ok; j++) {
          const first = items[i + j]!,
            it = items[i + count * p + j]!
          if (it.key !== first.key) {
            ok = false
            break
          }
          const a = first.params,
            b = it.params
          for (let q = 0; q < a.length; q++, m++)
            if (b[q] !== a[q]! + count * deltas[m]!) {
              ok = false
              break
            }
        }
        if (!ok) break
      }
      // short loops of small bodies run faster unrolled
      if (count < 3 && groupWeight < 32) continue
      const cover = count * groupWeight
      if (cover > bestCover) {
        bestP = p
        bestCount = count
        bestCover = cover
        bestDeltas = deltas
      }
    }
    if (bestP === 0) {
      out.push(items[i]!)
      i++
      continue
    }
    const body = items.slice(i, i + bestP)
    const params: number[] = []
    for (const it of body) params.push(...it.params)
    const key = keys.id(`L${bestCount}(${bestDeltas!.join(',')}){${body.map((b) => b.key).join(';')}}`)
    out.push({ kind: 'loop', key, params, deltas: bestDeltas!, count: bestCount, body, weight: bestCover })
    i += bestP * bestCount
  }
  return out
}

/**
 * Rerolls `items` into loops: passes with growing maximal periods (short periods first, so inner
 * loops form before the outer ones that repeat them), each repeated until nothing changes.
 */
export function reroll<T>(items: Item<T>[], keys: Keys): Item<T>[] {
  for (const maxPeriod of [4, 16, 64]) {
    for (;;) {
      const next = pass(items, maxPeriod, keys)
      if (next.length === items.length) break
      items = next
    }
  }
  return items
}
