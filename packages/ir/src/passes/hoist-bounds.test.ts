/**
 * Pass `hoist-bounds` on loop nests: the test of a versioned inner loop hoisted over the loop
 * around it (one test for the nest, the nest as written where it fails), printed before and after.
 * (The single-loop forms are tested in `insert-checks.test.ts`; the errors of programs that fail,
 * against the interpreter, in `tenet`'s `nested-guards.test.ts`.)
 */
import { describe, expect, it } from 'vitest'
import { check, createRegistry, type FunctionDef, parse, printStmts, type Program } from '../index.js'
import { hoistBoundsFunction, insertChecksFunction } from './index.js'

const checked = (text: string): Program => check(parse(text, []).functions, [], createRegistry())
const body = (f: FunctionDef): string => printStmts(f.body, 0)
const hoisted = (text: string): string => {
  const p = checked(text)
  return body(hoistBoundsFunction(insertChecksFunction(p.functions.get('f')!, p), p))
}
/** The number of `if`s in a printed body (each a versioned loop). */
const ifs = (printed: string): number => printed.split('\n').filter((l) => /^\s*if \(/.test(l)).length

describe('pass `hoist-bounds`: nests', () => {
  it('hoists an inner loop’s test over the loop around it: one test, the nest as written where it fails', () => {
    const out = hoisted(
      'fn f(y: f64[], x: f64[], n: i32, m: i32) { for i in 0..n { for j in 0..m { y[i] += x[i * m + j] } } }',
    )
    expect(out).toBe(
      `if (!(0 < n) || (!(0 < m) || $inrange(0, len(y)) && $inrange(n - 1, len(y)) && $inrange(0, len(x)) && $inrange((n - 1) * m, len(x)) && (0.0 - f64(len(x)) < f64(m) * f64(n - 1) && f64(m) * f64(n - 1) < f64(len(x))) && $inrange(m - 1, len(x)) && $inrange((n - 1) * m + (m - 1), len(x)) && f64(m - 1) < f64(len(x))), ~) {
  for i in 0..n {
    for j in 0..m {
      y[i] += x[i * m + j]
    }
  }
} else {
  for i in 0..n {
    for j in 0..m {
      assert outOfBounds($inrange(i, len(y))) else ("y", i, len(y))
      assert outOfBounds($inrange(i * m + j, len(x))) else ("x", i * m + j, len(x))
      y[i] += x[i * m + j]
    }
  }
}`,
    )
  })

  it('hoists through three levels (the tanh RNN’s shape), one test for the nest', () => {
    const out = hoisted(`fn f(pre: f64[], W: f64[], hs: f64[], H: i32, T: i32) {
  for t in 0..T { for i in 0..H {
    for j in 0..H { pre[t * H + i] += W[i * H + j] * hs[t * H + j] }
    hs[(t + 1) * H + i] += pre[t * H + i]
  } }
}`)
    expect(ifs(out)).toBe(1)
    // the fast version has no assert; the slow one is the nest as written
    const [fast, slow] = out.split('} else {')
    expect(fast).not.toContain('assert')
    expect(slow!.match(/assert/g)!.length).toBe(5)
  })

  it('keeps the inner test where it reads what the loop around it changes, or a bound that moves with it', () => {
    // a triangular nest: the inner loop's range reads i (its idle test is not invariant)
    const tri = hoisted('fn f(y: f64[], x: f64[], n: i32) { for i in 0..n { for j in 0..i { y[i] += x[j] } } }')
    expect(ifs(tri)).toBe(1)
    expect(tri.split('\n')[0]).toBe('for i in 0..n {')
    // an offset the body writes
    const moved = hoisted(
      'fn f(y: f64[], x: f64[], n: i32, k: i32) { for i in 0..n { for j in 0..n { y[j] += x[j + k] }\n k += 1 } }',
    )
    expect(ifs(moved)).toBe(1)
    expect(moved.split('\n')[0]).toBe('for i in 0..n {')
    // an array the body reallocates
    const realloc = hoisted(`fn f(y: f64[], n: i32) {
  for i in 0..n {
    a: f64[] <- zeros(i + 1)
    for j in 0..n { y[j] += 1.0 }
    for j in 0..i + 1 { a[j] += 0.0 }
    a -> zeros(i + 1)
  }
}`)
    // (the loop over y hoisted, the loop over a not: its range reads i and a is reallocated)
    expect(realloc.split('\n')[0]).toBe(
      'if (!(0 < n) || (!(0 < n) || $inrange(0, len(y)) && $inrange(n - 1, len(y))), ~) {',
    )
    expect(ifs(realloc)).toBe(2)
  })

  it('leaves the nest alone with versions off (the inner tests are not asserts)', () => {
    const p = checked(
      'fn f(y: f64[], x: f64[], n: i32, m: i32) { for i in 0..n { for j in 0..m { y[i] += x[i * m + j] } } }',
    )
    const out = body(hoistBoundsFunction(insertChecksFunction(p.functions.get('f')!, p), p, false))
    expect(out).not.toContain('if (')
    expect(out).toContain('assert outOfBounds(!(0 < m) || $inrange(i * m, len(x)))')
  })
})
