/**
 * Pass `proven-bounds` on printed IR: the bounds asserts `insert-checks` places (checks on) and
 * those the pass leaves out — Horner's history array over `for k in len(c) - 2..=0 by -1`, a
 * running maximum over `for i in 1..C` — and the cases that must keep theirs (an index past the
 * end, a length that may wrap, an array reallocated in the loop, a parameter the function writes,
 * two different lengths, a step of 2). The compiled programs fail as the reference interpreter
 * does, cpu and wasm, on random loops: backend-wasm's `proven-bounds-programs.test.ts`.
 */
import { describe, expect, it } from 'vitest'
import { check, createRegistry, type FunctionDef, parse, printStmts } from '../index.js'
import { insertChecks, provenBounds } from './index.js'

const registry = createRegistry()
const options = { checks: true, tolerance: 1e-8, backend: 'cpu' }

/** The bounds asserts of `f` of `text` after `insert-checks` (checks on), and after pass `proven-bounds` too. */
function passes(text: string): { before: string[]; after: string[]; printed: string } {
  const program = check(parse(text).functions, [], registry)
  const asserted = insertChecks(program, new Map(), options)
  const proved = provenBounds(asserted.program, asserted.inverses, options)
  const f = proved.program.functions.get('f')!
  return { before: bounds(asserted.program.functions.get('f')!), after: bounds(f), printed: printStmts(f.body, 0) }
}
/** The printed bounds asserts of a function's body (their conditions), in order. */
const bounds = (f: FunctionDef): string[] =>
  printStmts(f.body, 0)
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l.startsWith('assert outOfBounds'))
    .map((l) => l.replace(/^assert outOfBounds\((.*)\) else .*$/, '$1'))

describe('pass `proven-bounds`', () => {
  it("Horner's history array: every check in the loop over len(c) - 2..=0 by -1 is left out", () => {
    const { before, after, printed } = passes(`
fn f(loss: f64, c: f64[], x: f64) {
  acc: f64[] <- zeros(len(c))
  acc[len(c) - 1] += c[len(c) - 1]
  for k in len(c) - 2..=0 by -1 { acc[k] += acc[k + 1] * x + c[k] }
  loss += acc[0]
  for k in 0..=len(c) - 2 { acc[k] -= acc[k + 1] * x + c[k] }
  acc[len(c) - 1] -= c[len(c) - 1]
  acc -> zeros(len(c))
}`)
    // (acc[len(c) − 1], c[len(c) − 1] and acc[0] stay: c may be empty)
    const kept = ['$inrange(len(c) - 1, len(c))', '$inrange(len(c) - 1, len(acc))', '$inrange(0, len(acc))']
    for (const k of kept) expect(after).toContain(k)
    for (const k of ['$inrange(k + 1, len(acc))', '$inrange(k, len(c))', '$inrange(k, len(acc))']) {
      expect(before).toContain(k)
      expect(after).not.toContain(k)
    }
    expect(after).toHaveLength(before.length - 6)
    // (the uncompute's loop too; the accesses keep their inBounds marks, nothing else changes)
    expect(printed).toContain('acc[k] += acc[k + 1] * x + c[k]')
  })

  it('a running maximum over 1..C with ms <- zeros(C): ms[i], ms[i - 1] and ms[C - 1] left out, z[i] kept', () => {
    const { before, after } = passes(`
fn f(loss: f64, z: f64[], C: i32) {
  ms: f64[] <- zeros(C)
  for i in 1..C { ms[i] += max(ms[i - 1], z[i]) }
  s <- 0.0
  for i in 0..C { s += exp(z[i] - ms[C - 1]) }
  loss += s
  for i in 0..C { s -= exp(z[i] - ms[C - 1]) }
  s -> 0.0
  for i in 1..C { ms[i] -= max(ms[i - 1], z[i]) }
  ms -> zeros(C)
}`)
    for (const k of ['$inrange(i, len(ms))', '$inrange(i - 1, len(ms))', '$inrange(C - 1, len(ms))']) {
      expect(before).toContain(k)
      expect(after).not.toContain(k)
    }
    expect(after).toEqual(Array(4).fill('$inrange(i, len(z))'))
  })

  it('keeps an index past the end, and one whose array has another length', () => {
    const { before, after } = passes(`
fn f(s: f64, a: f64[], b: f64[]) {
  for i in 0..len(a) { s += a[i + 1] + b[i] }
  for i in 1..=len(a) { s += a[i - 1] }
  for i in 0..len(a) by 2 { s += a[i] }
}`)
    expect(after).toEqual(before.filter((c) => c !== '$inrange(i - 1, len(a))'))
    expect(after).toEqual(['$inrange(i + 1, len(a))', '$inrange(i, len(b))', '$inrange(i, len(a))'])
  })

  it('keeps what it cannot prove: a length that may wrap, a reallocated array, a written parameter', () => {
    const { before, after } = passes(`
fn f(s: f64, a: f64[], n: i32, m: i32) {
  t: f64[] <- zeros(n + 1)
  for i in 0..n { s += t[i] }
  t -> zeros(n + 1)
  u: f64[] <- zeros(len(a))
  for j in 0..len(a) { s += u[j] }
  u -> zeros(len(a))
  u: f64[] <- zeros(1)
  for j in 0..len(a) { s += u[j] }
  s += u[0]
  u -> zeros(1)
  m += 1
  w: f64[] <- zeros(m)
  for i in 0..m { s += w[i] }
  w -> zeros(m)
}`)
    // (u[j] over 0..len(a) and u[0] proven while u is zeros(len(a)), and u[0] once it is zeros(1))
    expect(before).toEqual([
      '$inrange(i, len(t))',
      '$inrange(j, len(u))',
      '$inrange(j, len(u))',
      '$inrange(0, len(u))',
      '$inrange(i, len(w))',
    ])
    expect(after).toEqual(['$inrange(i, len(t))', '$inrange(j, len(u))', '$inrange(i, len(w))'])
  })

  it('uses that a loop ran: n - 1 is an index of zeros(n) in the body of 0..n', () => {
    const { before, after } = passes(`
fn f(s: f64, n: i32) {
  t: f64[] <- zeros(n)
  for i in 0..n { s += t[n - 1] + t[n - 1 - i] }
  s += t[n - 1]
  t -> zeros(n)
}`)
    expect(before).toEqual(['$inrange(n - 1, len(t))', '$inrange(n - 1 - i, len(t))', '$inrange(n - 1, len(t))'])
    // (after the loop, n may be 0)
    expect(after).toEqual(['$inrange(n - 1, len(t))'])
  })

  it("a heat stencil's alias checks: rows t·n and (t + 1)·n differ by n, n ± 1, none 0 where 1..n - 1 runs", () => {
    const text = (range: string) => `
fn f(u0: f64[], r: f64, n: i32, T: i32) {
  u: f64[] <- zeros((T + 1) * n)
  for i in 0..n { u[i] += u0[i] }
  for t in 0..T {
    for i in ${range} {
      u[(t + 1) * n + i] += u[t * n + i] + r * (u[t * n + i - 1] - 2.0 * u[t * n + i] + u[t * n + i + 1])
    }
  }
  for t in 0..T {
    for i in ${range} {
      u[(t + 1) * n + i] -= u[t * n + i] + r * (u[t * n + i - 1] - 2.0 * u[t * n + i] + u[t * n + i + 1])
    }
  }
  for i in 0..n { u[i] -= u0[i] }
  u -> zeros((T + 1) * n)
}`
    const aliases = (range: string): { before: string[]; after: string[] } => {
      const program = check(parse(text(range)).functions, [], registry)
      const asserted = insertChecks(program, new Map(), options)
      const proved = provenBounds(asserted.program, asserted.inverses, options)
      const of = (f: FunctionDef) =>
        printStmts(f.body, 0)
          .split('\n')
          .map((l) => l.trim())
          .filter((l) => l.startsWith('assert alias'))
          .map((l) => l.replace(/^assert alias\((.*)\) else .*$/, '$1'))
      return { before: of(asserted.program.functions.get('f')!), after: of(proved.program.functions.get('f')!) }
    }
    const { before, after } = aliases('1..n - 1')
    expect(before).toEqual(
      Array(2)
        .fill([
          '(t + 1) * n + i != t * n + i',
          '(t + 1) * n + i != t * n + i - 1',
          '(t + 1) * n + i != t * n + i',
          '(t + 1) * n + i != t * n + i + 1',
        ])
        .flat(),
    )
    expect(after).toEqual([])
    // over 0..n + 2, n = −1 runs the body and makes row t + 1's element i row t's element i + 1
    // (n = −2: i − 1; n = 0: i itself): every check stays
    expect(aliases('0..n + 2').after).toEqual(before)
    // over 0..n (n ≥ 1 where it runs): n − 1 may be 0, the check of u[t * n + i + 1] stays
    expect(aliases('0..n').after).toEqual(Array(2).fill('(t + 1) * n + i != t * n + i + 1'))
  })

  it('changes nothing with checks off', () => {
    const program = check(
      parse('fn f(s: f64, a: f64[]) {\n  for i in 1..len(a) { s += a[i - 1] }\n}').functions,
      [],
      registry,
    )
    const off = { ...options, checks: false }
    expect(provenBounds(program, new Map(), off).program).toBe(program)
  })
})
