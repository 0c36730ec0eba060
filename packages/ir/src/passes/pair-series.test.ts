/**
 * Pass `pair-series` on printed IR before and after, and the loops it must leave as they are.
 * The compiled programs are checked against the interpreter (random map loops of series, checks
 * on and off, forwards and backwards) in `@tenet/backend-cpu`'s `pair-series-programs.test.ts`.
 */
import { describe, expect, it } from 'vitest'
import { check, createRegistry, type FunctionDef, parse, printFunction, printStmts, type Program } from '../index.js'
import { hoistBounds, insertChecks, PAIR_SERIES_MAX_STATEMENTS, pairSeries } from './index.js'

const registry = createRegistry()
const programOf = (text: string): Program => check(parse(text, []).functions, [], registry)
const body = (f: FunctionDef): string => printStmts(f.body, 0)
const paired = (text: string, name = 'batch', unrollSwaps = false, lanes = 2): string =>
  body(pairSeries(programOf(text), new Map(), { unrollSwaps, lanes }).program.functions.get(name)!)
const unchanged = (text: string, name = 'batch'): boolean => {
  const p = programOf(text)
  return printFunction(pairSeries(p, new Map()).program.functions.get(name)!) === printFunction(p.functions.get(name)!)
}

/** A series in the shape of paper 001's (after `imul` is inlined): one `while` at the top level. */
const series = `fn term(out: f64, nu: i32, z: f64) {
  k: i32 <- 0
  s <- 0.0
  anc <- 0.0
  s += z / 2.0
  while (abs(s) > 1e-8 && abs(anc) < 1e-8, k != 0) {
    k += 1
    anc += s * z
    s -= anc / z
    SWAP(s, anc)
    out += identity(s)
  }
  @unchecked { s -> 0.0 }
  @unchecked { anc -> 0.0 }
  @unchecked { k -> 0 }
}
`

describe('pass `pair-series`', () => {
  it('prints the IR before and after: two copies of the callee, one joint loop, each copy finishing alone', () => {
    const text = `${series}fn batch(out: f64[], nu: i32, z: f64[]) {
  for i in 0..len(z) { term(out[i], nu, z[i]) }
}`
    expect(paired(text)).toMatchInlineSnapshot(`
      "if (0 < len(z) && (len(z) - 1 - 0 >= 1 && len(z) - 1 - 0 <= 1073741824), ~) {
        for i in 0..=len(z) - 1 - 1 by 2 {
          $pair0a$k: i32 <- 0
          $pair0a$s <- 0.0
          $pair0a$anc <- 0.0
          $pair0a$s += z[i] / 2.0
          $pair0b$k: i32 <- 0
          $pair0b$s <- 0.0
          $pair0b$anc <- 0.0
          $pair0b$s += z[i + 1] / 2.0
          while (abs($pair0a$s) > 1e-8 && abs($pair0a$anc) < 1e-8 && (abs($pair0b$s) > 1e-8 && abs($pair0b$anc) < 1e-8), $pair0a$k != 0 && $pair0b$k != 0) {
            $pair0a$k += 1
            $pair0a$anc += $pair0a$s * z[i]
            $pair0a$s -= $pair0a$anc / z[i]
            SWAP($pair0a$s, $pair0a$anc)
            out[i] += identity($pair0a$s)
            $pair0b$k += 1
            $pair0b$anc += $pair0b$s * z[i + 1]
            $pair0b$s -= $pair0b$anc / z[i + 1]
            SWAP($pair0b$s, $pair0b$anc)
            out[i + 1] += identity($pair0b$s)
          }
          while (abs($pair0a$s) > 1e-8 && abs($pair0a$anc) < 1e-8, $pair0a$k != 0) {
            $pair0a$k += 1
            $pair0a$anc += $pair0a$s * z[i]
            $pair0a$s -= $pair0a$anc / z[i]
            SWAP($pair0a$s, $pair0a$anc)
            out[i] += identity($pair0a$s)
          }
          while (abs($pair0b$s) > 1e-8 && abs($pair0b$anc) < 1e-8, $pair0b$k != 0) {
            $pair0b$k += 1
            $pair0b$anc += $pair0b$s * z[i + 1]
            $pair0b$s -= $pair0b$anc / z[i + 1]
            SWAP($pair0b$s, $pair0b$anc)
            out[i + 1] += identity($pair0b$s)
          }
          @unchecked {
            $pair0a$s -> 0.0
          }
          @unchecked {
            $pair0a$anc -> 0.0
          }
          @unchecked {
            $pair0a$k -> 0
          }
          @unchecked {
            $pair0b$s -> 0.0
          }
          @unchecked {
            $pair0b$anc -> 0.0
          }
          @unchecked {
            $pair0b$k -> 0
          }
        }
        for i in 0 + (len(z) - 1 - 0 + 1 - (len(z) - 1 - 0 + 1) % 2)..=len(z) - 1 by 1 {
          term(out[i], nu, z[i])
        }
      } else {
        for i in 0..len(z) {
          term(out[i], nu, z[i])
        }
      }"
    `)
  })

  it('unrolls the three loops by two where they swap (as `unroll-swaps`), when asked', () => {
    const text = `${series}fn batch(out: f64[], nu: i32, z: f64[]) {
  for i in 0..len(z) { term(out[i], nu, z[i]) }
}`
    const p = paired(text, 'batch', true)
    // each loop's body runs a second copy under an \`if\` on its condition, and no SWAP is left in a body
    expect(p.match(/^\s*while /gm)?.length).toBe(3)
    expect(p.match(/^\s*if \(/gm)?.length).toBe(4) // the range guard, and the three loops' second copies
  })

  it('runs three lanes (the default): one joint loop, then each lane alone, the iterations left in order', () => {
    const text = `${series}fn batch(out: f64[], nu: i32, z: f64[]) {
  for i in 0..len(z) { term(out[i], nu, z[i]) }
}`
    const p = paired(text, 'batch', false, 3)
    expect(p).toContain('for i in 0..=len(z) - 1 - 2 by 3 {')
    expect(p).toContain('while (abs($pair0a$s) > 1e-8 && abs($pair0a$anc) < 1e-8 && (abs($pair0b$s) > 1e-8')
    expect(p).toContain('out[i + 2] += identity($pair0c$s)')
    expect(p.match(/^\s*while /gm)?.length).toBe(4)
    expect(p).toContain('for i in 0 + (len(z) - 1 - 0 + 1 - (len(z) - 1 - 0 + 1) % 3)..=len(z) - 1 by 1 {')
  })

  it('pairs a reverse loop downwards (the inverse of a map loop): the second copy at i − 1', () => {
    const text = `${series}fn batch(out: f64[], nu: i32, z: f64[]) {
  for i in reverse 0..len(z) { term(out[i], nu, z[i]) }
}`
    const p = paired(text)
    expect(p).toContain('for i in len(z) - 1..=1 by -2 {')
    expect(p).toContain('for i in len(z) - 1 - (len(z) - 1 - 0 + 1 - (len(z) - 1 - 0 + 1) % 2)..=0 by -1 {')
    expect(p).toContain('out[i - 1]')
    expect(p).toContain('z[i - 1]')
  })

  it('leaves alone a callee too large to copy (more than PAIR_SERIES_MAX_STATEMENTS statements)', () => {
    const sized = (n: number) => `fn term(out: f64, z: f64) {
  k: i32 <- 0
  while (k < 3, k > 0) { k += 1 }
  ${Array.from({ length: n }, () => 'out += z * 0.5').join('\n  ')}
  @unchecked { k -> 3 }
}
fn batch(out: f64[], z: f64[]) {
  for i in 0..len(z) { term(out[i], z[i]) }
}`
    expect(unchanged(sized(10))).toBe(false)
    expect(unchanged(sized(PAIR_SERIES_MAX_STATEMENTS))).toBe(true)
  })

  it('leaves alone what it cannot prove independent, or where nothing pays', () => {
    // an outer scalar written by the callee
    expect(
      unchanged(`${series}fn batch(acc: f64, nu: i32, z: f64[]) {
  for i in 0..len(z) { term(acc, nu, z[i]) }
}`),
    ).toBe(true)
    // an element of a written array at another index than the loop's variable
    expect(
      unchanged(`${series}fn batch(out: f64[], nu: i32, z: f64[]) {
  for i in 0..len(z) - 1 { term(out[i + 1], nu, z[i]) }
}`),
    ).toBe(true)
    // a read-only array read at another index (it might be the written one)
    expect(
      unchanged(`${series}fn batch(out: f64[], nu: i32, z: f64[]) {
  for i in 1..len(z) { term(out[i], nu, z[i - 1]) }
}`),
    ).toBe(true)
    // a callee without a top-level while loop
    expect(
      unchanged(`fn sq(out: f64, z: f64) { out += z * z }
fn batch(out: f64[], z: f64[]) {
  for i in 0..len(z) { sq(out[i], z[i]) }
}`),
    ).toBe(true)
    // a body of more than one call, and a loop of step 2
    expect(
      unchanged(`${series}fn batch(out: f64[], nu: i32, z: f64[]) {
  for i in 0..len(z) { term(out[i], nu, z[i])
    term(out[i], nu, z[i]) }
}`),
    ).toBe(true)
    expect(
      unchanged(`${series}fn batch(out: f64[], nu: i32, z: f64[]) {
  for i in 0..len(z) by 2 { term(out[i], nu, z[i]) }
}`),
    ).toBe(true)
    // a callee that passes a whole array on, or pushes onto a stack
    expect(
      unchanged(`fn inner(out: f64, z: f64[]) {
  k: i32 <- 0
  while (k < len(z), k > 0) { k += 1 }
  out += identity(z[0])
  @unchecked { k -> len(z) }
}
fn outer(out: f64, z: f64[]) {
  k: i32 <- 0
  while (k < 2, k > 0) { k += 1 }
  inner(out, z)
  @unchecked { k -> 2 }
}
fn batch(out: f64[], z: f64[]) {
  for i in 0..len(z) { outer(out[i], z) }
}`),
    ).toBe(true)
  })
})

describe('pass `pair-series` with checks on (`checked`, after `insertChecks`)', () => {
  const options = { checks: true, tolerance: 1e-8 }
  const checkedSeries = series.replace(/@unchecked \{ (.*) \}/g, '$1')
  const pairedChecked = (text: string): { before: string; after: string } => {
    const p = programOf(text)
    const asserted = hoistBounds(
      ...(Object.values(insertChecks(p, new Map(), options)) as [Program, Map<string, FunctionDef>]),
      options,
    )
    const after = pairSeries(asserted.program, new Map(), { unrollSwaps: false, lanes: 2, checked: true })
    return {
      before: body(asserted.program.functions.get('batch')!),
      after: body(after.program.functions.get('batch')!),
    }
  }

  it('prints the IR after: each lane keeps its asserts, and ends (its loop, then the rest) before the next goes on', () => {
    const { after } = pairedChecked(`${checkedSeries}fn batch(out: f64[], nu: i32, z: f64[]) {
  for i in 0..len(z) { term(out[i], nu, z[i]) }
}`)
    expect(after).toMatchInlineSnapshot(`
      "if (!(0 < len(z)) || $inrange(0, len(out)) && $inrange(len(z) - 1, len(out)), ~) {
        if (0 < len(z) && (len(z) - 1 - 0 >= 1 && len(z) - 1 - 0 <= 1073741824), ~) {
          for i in 0..=len(z) - 1 - 1 by 2 {
            $pair0a$k: i32 <- 0
            $pair0a$s <- 0.0
            $pair0a$anc <- 0.0
            $pair0a$s += z[i] / 2.0
            assert postWhileStart(!($pair0a$k != 0)) else ("k != 0")
            $pair0b$k: i32 <- 0
            $pair0b$s <- 0.0
            $pair0b$anc <- 0.0
            $pair0b$s += z[i + 1] / 2.0
            assert postWhileStart(!($pair0b$k != 0)) else ("k != 0")
            while (abs($pair0a$s) > 1e-8 && abs($pair0a$anc) < 1e-8 && (abs($pair0b$s) > 1e-8 && abs($pair0b$anc) < 1e-8), $pair0a$k != 0 && $pair0b$k != 0) {
              $pair0a$k += 1
              $pair0a$anc += $pair0a$s * z[i]
              $pair0a$s -= $pair0a$anc / z[i]
              SWAP($pair0a$s, $pair0a$anc)
              out[i] += identity($pair0a$s)
              assert postWhileIteration($pair0a$k != 0) else ("k != 0")
              $pair0b$k += 1
              $pair0b$anc += $pair0b$s * z[i + 1]
              $pair0b$s -= $pair0b$anc / z[i + 1]
              SWAP($pair0b$s, $pair0b$anc)
              out[i + 1] += identity($pair0b$s)
              assert postWhileIteration($pair0b$k != 0) else ("k != 0")
            }
            while (abs($pair0a$s) > 1e-8 && abs($pair0a$anc) < 1e-8, $pair0a$k != 0) {
              $pair0a$k += 1
              $pair0a$anc += $pair0a$s * z[i]
              $pair0a$s -= $pair0a$anc / z[i]
              SWAP($pair0a$s, $pair0a$anc)
              out[i] += identity($pair0a$s)
              assert postWhileIteration($pair0a$k != 0) else ("k != 0")
            }
            assert dealloc($near($pair0a$s, 0.0)) else ("s", "0.0", $pair0a$s, 0.0)
            $pair0a$s -> 0.0
            assert dealloc($near($pair0a$anc, 0.0)) else ("anc", "0.0", $pair0a$anc, 0.0)
            $pair0a$anc -> 0.0
            assert dealloc($pair0a$k == 0) else ("k", "0", $pair0a$k, 0)
            $pair0a$k -> 0
            while (abs($pair0b$s) > 1e-8 && abs($pair0b$anc) < 1e-8, $pair0b$k != 0) {
              $pair0b$k += 1
              $pair0b$anc += $pair0b$s * z[i + 1]
              $pair0b$s -= $pair0b$anc / z[i + 1]
              SWAP($pair0b$s, $pair0b$anc)
              out[i + 1] += identity($pair0b$s)
              assert postWhileIteration($pair0b$k != 0) else ("k != 0")
            }
            assert dealloc($near($pair0b$s, 0.0)) else ("s", "0.0", $pair0b$s, 0.0)
            $pair0b$s -> 0.0
            assert dealloc($near($pair0b$anc, 0.0)) else ("anc", "0.0", $pair0b$anc, 0.0)
            $pair0b$anc -> 0.0
            assert dealloc($pair0b$k == 0) else ("k", "0", $pair0b$k, 0)
            $pair0b$k -> 0
          }
          for i in 0 + (len(z) - 1 - 0 + 1 - (len(z) - 1 - 0 + 1) % 2)..=len(z) - 1 by 1 {
            term(out[i], nu, z[i])
          }
        } else {
          for i in 0..len(z) {
            term(out[i], nu, z[i])
          }
        }
      } else {
        for i in 0..len(z) {
          assert outOfBounds($inrange(i, len(out))) else ("out", i, len(out))
          term(out[i], nu, z[i])
        }
      }"
    `)
  })

  it('leaves a loop alone whose lanes would run a `while` before the earlier lane ends', () => {
    const text = `${checkedSeries.replace('s += z / 2.0', 'wait(s, z)\n  s += z / 2.0')}fn wait(s: f64, z: f64) {
  j: i32 <- 0
  while (j < 3, j != 0) { j += 1 }
  s += z * f64(j)
  while (j != 0, j < 3) { j -= 1 }
  j -> 0
}
fn batch(out: f64[], nu: i32, z: f64[]) {
  for i in 0..len(z) { term(out[i], nu, z[i]) }
}`
    const { before, after } = pairedChecked(text)
    expect(after).toBe(before)
  })
  it('inlines the lanes’ small leaf calls, their locals named apart', () => {
    const text = `fn leaf(a: f64, x: f64) {
  t <- 0.0
  t += x
  a += t
  t -= x
  t -> 0.0
}
${checkedSeries.replace('s += z / 2.0', 'leaf(s, z)\n  s += z / 2.0')}fn batch(out: f64[], nu: i32, z: f64[]) {
  for i in 0..len(z) { term(out[i], nu, z[i]) }
}`
    const { before, after } = pairedChecked(text)
    expect(before).not.toContain('$leaf')
    expect(after).not.toMatch(/\bleaf\(/)
    for (const lane of ['a', 'b']) {
      expect(after).toContain(`$pair0${lane}$$leaf0$t <- 0.0`)
      expect(after).toContain(`assert dealloc($near($pair0${lane}$$leaf0$t, 0.0)) else ("t", "0.0"`)
    }
  })
})
