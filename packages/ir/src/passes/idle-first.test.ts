/**
 * Pass `idle-first` on its own, on printed IR before and after. The compiled programs are
 * checked against the interpreter (checks on and off, the trip counts around the first value) in
 * `idle-first-programs.test.ts` and `idle-first-random.test.ts` (200 random loops, with the pass
 * and without) of the cpu backend, and `peel-ones.test.ts` of the wasm backend (its factorial,
 * started at 2 with checks off, peeled there).
 */
import { describe, expect, it } from 'vitest'
import { check, createRegistry, type FunctionDef, parse, printStmts, type Program } from '../index.js'
import { idleFirst, optimize } from './index.js'

const checked = (text: string): Program => check(parse(text).functions, [], createRegistry())
const body = (f: FunctionDef): string => printStmts(f.body, 0)
const run = (text: string, name = 'f') => {
  const p = checked(text)
  const f = p.functions.get(name)!
  return { before: body(f), after: body(idleFirst(f)) }
}
/** The loop headers (`for … {`) of the program after the pass. */
const headers = (text: string): string[] => run(text).after.match(/^ *for .*\{$/gm) ?? []

describe('pass `idle-first`', () => {
  it('starts the factorial by the approximate multiplier (zero ancilla) at 2', () => {
    const { before, after } = run(`
fn f(out: i32, n: i32) {
  anc: i32 <- 0
  out += 1
  for i in 1..=n {
    anc += out * i
    out -= div(anc, i)
    SWAP(out, anc)
  }
  anc -> 0
}`)
    expect(before).toBe(`anc: i32 <- 0
out += 1
for i in 1..=n {
  anc += out * i
  out -= div(anc, i)
  SWAP(out, anc)
}
anc -> 0`)
    expect(after).toBe(`anc: i32 <- 0
out += 1
for i in 2..=n {
  anc += out * i
  out -= div(anc, i)
  SWAP(out, anc)
}
anc -> 0`)
  })

  it('leaves the factorial alone where the ancilla is not known to be zero', () => {
    expect(
      headers(`
fn f(out: i32, n: i32, anc: i32) {
  for i in 1..=n {
    anc += out * i
    out -= div(anc, i)
    SWAP(out, anc)
  }
}`),
    ).toEqual(['for i in 1..=n {'])
    // (zero, but then changed before the loop)
    expect(
      headers(`
fn f(out: i32, n: i32) {
  anc: i32 <- 0
  anc += n
  for i in 1..=n {
    anc += out * i
    out -= div(anc, i)
    SWAP(out, anc)
  }
  anc -= n
  anc -> 0
}`),
    ).toEqual(['for i in 1..=n {'])
  })

  it('f64: a product by f64(i) from 1, a difference of f64(i) from 0; not a sum (−0 + 0 is +0)', () => {
    expect(headers(`fn f(p: f64, n: i32) { for i in 1..=n { p *= f64(i) } }`)).toEqual(['for i in 2..=n {'])
    expect(headers(`fn f(p: f64, n: i32) { for i in 1..n { p /= f64(i) } }`)).toEqual(['for i in 2..n {'])
    expect(headers(`fn f(y: f64, n: i32) { for i in 0..n { y -= f64(i) } }`)).toEqual(['for i in 1..n {'])
    expect(headers(`fn f(y: f64, n: i32) { for i in 0..n { y += f64(i) } }`)).toEqual(['for i in 0..n {'])
    // 0 · x is not 0 for an infinite or NaN x
    expect(headers(`fn f(y: f64, x: f64, n: i32) { for i in 0..n { y -= f64(i) * x } }`)).toEqual(['for i in 0..n {'])
    expect(headers(`fn f(p: f64, n: i32) { for i in 2..=n { p *= f64(i) } }`)).toEqual(['for i in 2..=n {'])
  })

  it('i32: sums from 0, wrapping products, a start known from an ancilla; ancillas of the body', () => {
    expect(headers(`fn f(s: i32, n: i32) { for i in 0..n { s += i * 3 } }`)).toEqual(['for i in 1..n {'])
    expect(headers(`fn f(s: i32, n: i32) { for i in 0..n { s -= i } }`)).toEqual(['for i in 1..n {'])
    // (i + 65536) · 65536 at i = 0 is 2³², which wraps to 0
    expect(headers(`fn f(s: i32, n: i32) { for i in 0..n { s += (i + 65536) * 65536 } }`)).toEqual(['for i in 1..n {'])
    expect(headers(`fn f(s: i32, n: i32) { for i in 0..n { s += (i + 65535) * 65536 } }`)).toEqual(['for i in 0..n {'])
    expect(
      headers(`
fn f(s: i32, n: i32) {
  a: i32 <- 0
  for i in a..n by 2 { s += i }
  a -> 0
}`),
    ).toEqual(['for i in 2..n by 2 {'])
    // an ancilla allocated and deallocated in the body, and exchanged values that come back
    expect(
      headers(`
fn f(s: i32, t: i32, n: i32) {
  for i in 1..=n {
    u: i32 <- 0
    u += i - 1
    s += u
    SWAP(s, t)
    SWAP(t, s)
    u -= i - 1
    u -> 0
  }
}`),
    ).toEqual(['for i in 2..=n {'])
  })

  it('leaves loops whose first iteration changes something, or that it cannot evaluate', () => {
    expect(headers(`fn f(s: i32, n: i32) { for i in 1..=n { s += i } }`)).toEqual(['for i in 1..=n {'])
    // an array, a call, a reverse loop, a start that is not known, f32
    expect(headers(`fn f(x: f64[], n: i32) { for i in 0..n { x[i] += f64(i) } }`)).toEqual(['for i in 0..n {'])
    expect(headers(`fn f(y: f64, n: i32) { for i in 1..=n { y *= exp(f64(i - 1)) } }`)).toEqual(['for i in 1..=n {'])
    expect(headers(`fn f(s: i32, n: i32) { for i in reverse 0..n { s += i } }`)).toEqual(['for i in reverse 0..n {'])
    expect(headers(`fn f(s: i32, a: i32, n: i32) { for i in a..n { s += i } }`)).toEqual(['for i in a..n {'])
    expect(headers(`fn f(y: f32, n: i32) { for i in 0..n { y -= f32(i) } }`)).toEqual(['for i in 0..n {'])
    // an idle first iteration whose next value is no i32 stays
    expect(headers(`fn f(s: i32, n: i32) { for i in 2147483647..=n { s += i - 2147483647 } }`)).toEqual([
      'for i in 2147483647..=n {',
    ])
    // a SWAP that leaves two different values exchanged
    expect(headers(`fn f(s: i32, t: i32, n: i32) { for i in 1..=n { SWAP(s, t) } }`)).toEqual(['for i in 1..=n {'])
  })

  it('nested loops: an inner loop whose ancilla the outer body allocates at zero', () => {
    const { after } = run(`
fn f(y: f64[], n: i32) {
  for j in 0..len(y) {
    out: i32 <- 1
    anc: i32 <- 0
    for i in 1..=n {
      anc += out * i
      out -= div(anc, i)
      SWAP(out, anc)
    }
    y[j] += f64(out)
    for i in reverse 1..=n {
      SWAP(out, anc)
      out += div(anc, i)
      anc -= out * i
    }
    anc -> 0
    out -> 1
  }
}`)
    expect(after.match(/^ *for .*\{$/gm)).toEqual([
      'for j in 0..len(y) {',
      '  for i in 2..=n {',
      '  for i in reverse 1..=n {',
    ])
  })

  it('runs in optimize with checks off only', () => {
    const text = `
fn f(out: i32, n: i32) {
  anc: i32 <- 0
  for i in 1..=n {
    anc += out * i
    out -= div(anc, i)
    SWAP(out, anc)
  }
  anc -> 0
}`
    const p = checked(text)
    const inverses = new Map<string, FunctionDef>()
    const opt = (checks: boolean) =>
      body(optimize(p, inverses, { checks, tolerance: 0 } as never, ['idle-first']).program.functions.get('f')!)
    expect(opt(false)).toContain('for i in 2..=n {')
    expect(opt(true)).toContain('for i in 1..=n {')
  })
})
