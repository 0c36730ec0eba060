import { parse, printFunction, TenetError, type FunctionDef } from '@tenet/ir'
import { describe, expect, it } from 'vitest'
import { batchOverBlocks, renameLocals, scalarizeArrays } from './block-batch.js'

const fnOf = (text: string): FunctionDef => parse({ text, name: 'test' }).functions[0]!
const squash = (s: string) => s.replace(/\s+/g, ' ').trim()

describe('blocked-program rewrites (printed IR before and after)', () => {
  it('batchOverBlocks: arrays read at b·size + e, float scalars at [b], len(x) the block size, shared scalars as they are', () => {
    const f = fnOf(`fn g(r: f64[], x: f64[], s: f64, k: i32) {
      for j in 0..len(x) { r[0] += x[j] * s + f64(k) }
      s += r[0]
    }`)
    const b = batchOverBlocks(
      f,
      [{ kind: 'array', length: 2 }, { kind: 'array', length: 3 }, { kind: 'scalar' }, { kind: 'shared' }],
      'g$blocks',
    )
    expect(squash(printFunction(b))).toBe(
      squash(`fn g$blocks($n: i32, r: f64[], x: f64[], s: f64[], k: i32) {
        for $b in 0..$n {
          $o$r: i32 <- $b * 2
          $o$x: i32 <- $b * 3
          for j in 0..3 {
            r[$o$r + 0] += x[$o$x + j] * s[$b] + f64(k)
          }
          s[$b] += r[$o$r + 0]
          $o$x -> $b * 3
          $o$r -> $b * 2
        }
      }`),
    )
  })

  it('batchOverBlocks rejects a whole block array passed to a call (ad/unsupported)', () => {
    const f = fnOf('fn g(r: f64[], x: f64[]) { h(r, x) }')
    let code = ''
    try {
      batchOverBlocks(
        f,
        [
          { kind: 'array', length: 2 },
          { kind: 'array', length: 2 },
        ],
        'g$blocks',
      )
    } catch (e) {
      code = TenetError.isInstance(e) ? e.code : String(e)
    }
    expect(code).toBe('ad/unsupported')
  })

  it('scalarizeArrays: literal-indexed arrays and named scalars become ancillas; others stay', () => {
    const f = fnOf(`fn g(r: f64[], ws: f64[], v: f64[], t: f64) {
      ws[0] += r[0] * 2.0
      ws[1 * 2 + 1] += sin(ws[0])
      v[len(v) - 1] += ws[3]
      t += ws[3]
      r[1] += t
    }`)
    const { f: g, replaced } = scalarizeArrays(
      f,
      new Map([
        ['ws', 4],
        ['v', 2],
      ]),
      new Set(['t']),
    )
    expect([...replaced].sort()).toEqual(['t', 'ws'])
    expect(squash(printFunction(g))).toBe(
      squash(`fn g(r: f64[], ws: f64[], v: f64[], t: f64) {
        $s$t$0: f64 <- 0.0
        $s$ws$0: f64 <- 0.0
        $s$ws$3: f64 <- 0.0
        $s$ws$0 += r[0] * 2.0
        $s$ws$3 += sin($s$ws$0)
        v[len(v) - 1] += $s$ws$3
        $s$t$0 += $s$ws$3
        r[1] += $s$t$0
        $s$ws$3 -> 0.0
        $s$ws$0 -> 0.0
        $s$t$0 -> 0.0
      }`),
    )
  })

  it('renameLocals renames ancillas and loop variables, not parameters', () => {
    const f = fnOf(`fn g(r: f64[], x: f64) {
      a <- 0.0
      a += x
      for i in 0..2 { r[i] += a }
      a -= x
      a -> 0.0
    }`)
    expect(squash(printFunction({ ...f, body: renameLocals(f.body, '$f$') }))).toBe(
      squash(`fn g(r: f64[], x: f64) {
        $f$a <- 0.0
        $f$a += x
        for $f$i in 0..2 { r[$f$i] += $f$a }
        $f$a -= x
        $f$a -> 0.0
      }`),
    )
  })
})
