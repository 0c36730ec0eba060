import { describe, expect, it } from 'vitest'
import { Keys, reroll, type Item } from './reroll.js'

const ins = (keys: Keys, key: string, params: number[]): Item<null> => ({
  kind: 'ins',
  key: keys.id(key),
  params,
  tmpl: null,
})

/** Expands rerolled items back into the instruction sequence they stand for. */
function unroll(items: Item<null>[], shift: number[] = []): Array<[number, number[]]> {
  const out: Array<[number, number[]]> = []
  for (const it of items) {
    if (it.kind === 'ins') {
      out.push([it.key, it.params.map((p, m) => p + (shift[m] ?? 0))])
      continue
    }
    for (let k = 0; k < it.count; k++) {
      let m = 0
      for (const b of it.body) {
        const sub = b.params.map((_, q) => (shift[m + q] ?? 0) + k * it.deltas[m + q]!)
        out.push(...unroll([b], sub))
        m += b.params.length
      }
    }
  }
  return out
}

describe('loop rerolling', () => {
  it('a dot product written as mul/add pairs becomes one loop after the peeled first product', () => {
    const keys = new Keys()
    const items: Item<null>[] = [ins(keys, 'mul', [2000, 0, 1000])]
    for (let i = 1; i < 1000; i++)
      items.push(
        ins(keys, 'mul', [2000 + 2 * i - 1, i, 1000 + i]),
        ins(keys, 'add', [2000 + 2 * i, 2000 + 2 * i - 2, 2000 + 2 * i - 1]),
      )
    const rolled = reroll(items, keys)
    expect(rolled.map((r) => r.kind)).toEqual(['ins', 'loop'])
    const loop = rolled[1]!
    expect(loop.kind === 'loop' && loop.count).toBe(999)
    expect(unroll(rolled)).toEqual(unroll(items))
  })

  it('nested loops (rows of a matrix–vector product) and non-affine parameters that stay unrolled', () => {
    const keys = new Keys()
    const items: Item<null>[] = []
    let id = 100
    for (let i = 0; i < 6; i++) {
      items.push(ins(keys, 'start', [id++, 10 * i]))
      for (let j = 1; j < 10; j++) {
        items.push(ins(keys, 'mul', [id, 10 * i + j, 90 + j]), ins(keys, 'add', [id + 1, id - 1, id]))
        id += 2
      }
    }
    // then three instructions whose parameters are not affine
    items.push(ins(keys, 'mul', [id, 1, 2]), ins(keys, 'mul', [id + 1, 5, 3]), ins(keys, 'mul', [id + 2, 4, 9]))
    const rolled = reroll(items, keys)
    expect(rolled[0]!.kind).toBe('loop')
    const outer = rolled[0]!
    expect(outer.kind === 'loop' && outer.count).toBe(6)
    expect(outer.kind === 'loop' && outer.body.some((b) => b.kind === 'loop')).toBe(true)
    expect(rolled.slice(1).every((r) => r.kind === 'ins')).toBe(true)
    expect(unroll(rolled)).toEqual(unroll(items))
  })
})
