import { describe, expect, it } from 'vitest'
import { blockElementPairs, type MapLanesPlan } from './map-lanes.js'
import { compile, expectSameForward, expectSameRuns, lastBlockPairs, lastMapLanes } from './test-util.js'

/**
 * Block-element pairs (see `blockElementPairs`): adjacent elements c, c + 1 of a map loop's
 * blocks are loaded for both lanes by one v128 load per block and two shuffles, and stored by
 * two shuffles and one v128 store per block, at the first statement that names either and after
 * the last that writes either. The results must be the scalar code's bits in every case.
 */
describe('block-element pairs', () => {
  const el = (array: string, c: number, written: boolean, alias = `${array}${c}`) => ({
    array,
    offset: 'o',
    c,
    alias,
    written,
  })
  const plan = (blockElements: MapLanesPlan['blockElements']) => ({ blockElements }) as MapLanesPlan
  const span = (first: number, last: number) => ({ first, last })

  it('pair adjacent elements of one block, both read or both written, each element once', () => {
    const els = [el('x', 0, false), el('x', 1, false), el('x', 2, false), el('y', 1, true), el('y', 2, true)]
    const spans = new Map(els.map((e, k) => [e.alias, span(k, e.written ? k : -1)]))
    const pairs = blockElementPairs(plan(els), spans)
    expect(pairs.map(([a, b]) => `${a.alias}+${b.alias}`)).toEqual(['x0+x1', 'y1+y2'])
  })

  it('leave alone a read element next to a written one, gaps, other blocks, and elements the body never names', () => {
    const els = [
      el('x', 0, false),
      el('x', 1, true),
      el('x', 3, false),
      el('x', 5, false),
      { ...el('z', 4, false), offset: 'p' },
      { ...el('x', 6, false), offset: 'p' },
      el('w', 0, false),
      el('w', 1, false),
    ]
    const spans = new Map(els.filter((e) => e.alias !== 'w1').map((e, k) => [e.alias, span(k, e.written ? k : -1)]))
    expect(blockElementPairs(plan(els), spans)).toEqual([])
  })

  // a block of 5 (odd: one element left single), elements first named far apart, a written
  // element next to one only read, one read after another is written, and the blocks of a
  // second array read only
  const text = `
fn f(n: i32, x: f64[], q: f64[], s: f64[]) {
  for b in 0..n {
    o: i32 <- b * 5
    p: i32 <- b * 4
    x[o] += q[p] * 0.5 + s[b]
    x[o + 1] -= x[o] * q[p + 1]
    t <- 0.0
    routine {
      t += x[o + 1] * x[o] + q[p + 2]
    }
    x[o + 2] += t * q[p + 3] - x[o + 4]
    ~routine
    t -> 0.0
    s[b] += x[o + 3] * x[o + 2]
    x[o + 4] += q[p] - x[o + 1] * 0.25
    p -> b * 4
    o -> b * 5
  }
}`

  it('give the scalar code’s bits, forwards and backwards, odd and even counts, checks on and off', () => {
    const lanes = compile(text, 'wasm')
    expect(lastMapLanes).toBe(2)
    expect(lastBlockPairs).toBeGreaterThanOrEqual(4)
    const scalar = compile(text, 'wasm', false, false)
    expect(lastBlockPairs).toBe(0)
    const cpu = compile(text, 'cpu')
    const interp = compile(text, 'interpreter', true)
    const checked = compile(text, 'wasm', true)
    for (const n of [0, 1, 2, 3, 6, 11]) {
      const r = rng(n * 17 + 3)
      const arr = (k: number) => Float64Array.from({ length: k }, () => r() * 2 - 0.8)
      const x = arr(5 * n),
        q = arr(4 * n),
        s = arr(n)
      expectSameForward([cpu, interp, scalar, lanes, checked], () => [n, x.slice(), q.slice(), s.slice()])
      expectSameRuns([cpu, scalar, lanes], () => [n, x.slice(), q.slice(), s.slice()])
    }
  })

  it('agree with the scalar code on random block programs (block sizes 2 to 6)', () => {
    let paired = 0
    for (let seed = 1; seed <= 24; seed++) {
      const r = rng(seed * 7919)
      const size = 2 + Math.floor(r() * 5)
      const qs = 1 + Math.floor(r() * 4)
      const pick = (k: number) => Math.floor(r() * k)
      const lines: string[] = []
      for (let k = 0; k < 3 + pick(6); k++) {
        const target = pick(size)
        // an expression of other elements of the block, of q's block and of constants
        const leaf = () => {
          const u = r()
          if (u < 0.45) {
            let c = pick(size)
            if (c === target) c = (c + 1) % size
            return `x[o + ${c}]`
          }
          if (u < 0.85) return `q[p + ${pick(qs)}]`
          return (r() * 2 - 1).toFixed(3)
        }
        const op = ['+', '-', '*'][pick(3)]
        lines.push(`    x[o + ${target}] ${r() < 0.5 ? '+=' : '-='} ${leaf()} ${op} ${leaf()}`)
      }
      const src = `
fn f(n: i32, x: f64[], q: f64[]) {
  for b in ${r() < 0.5 ? '' : 'reverse '}0..n {
    o: i32 <- b * ${size}
    p: i32 <- b * ${qs}
${lines.join('\n')}
    p -> b * ${qs}
    o -> b * ${size}
  }
}`
      const lanes = compile(src, 'wasm')
      if (lastMapLanes > 0 && lastBlockPairs > 0) paired++
      const scalar = compile(src, 'wasm', false, false)
      const cpu = compile(src, 'cpu')
      const checked = compile(src, 'wasm', true)
      for (const n of [3, 8]) {
        const d = rng(seed + n)
        const x = Float64Array.from({ length: size * n }, () => d() * 2 - 1),
          q = Float64Array.from({ length: qs * n }, () => d() * 2 - 1)
        expectSameForward([cpu, scalar, lanes, checked], () => [n, x.slice(), q.slice()])
        expectSameRuns([cpu, scalar, lanes], () => [n, x.slice(), q.slice()])
      }
    }
    // (most of the programs have pairs to load and store)
    expect(paired).toBeGreaterThanOrEqual(16)
  })
})

function rng(seed: number): () => number {
  let s = seed >>> 0 || 1
  return () => {
    s ^= s << 13
    s >>>= 0
    s ^= s >>> 17
    s ^= s << 5
    s >>>= 0
    return s / 4294967296
  }
}
