/**
 * Pass `fuse-loops` on printed IR before and after (an adjoint's spread of a per-element gradient,
 * the shape of the graph embedding's reverse sweep), and the cases its dependence test must
 * refuse. The compiled programs are checked against the interpreter (checks on and off, random
 * loop pairs) in `@tenet/backend-cpu`'s `fuse-loops-programs.test.ts`.
 */
import { describe, expect, it } from 'vitest'
import { check, createRegistry, type FunctionDef, parse, printStmts } from '../index.js'
import { fuseLoops } from './index.js'

const fn = (text: string): FunctionDef => check(parse(text).functions, [], createRegistry()).functions.get('f')!
/** The printed body of a function, one statement a line, without the signature. */
const body = (f: FunctionDef): string => printStmts(f.body, 0)
const unchanged = (text: string) => body(fuseLoops(fn(text))) === body(fn(text))

describe('pass `fuse-loops`', () => {
  it('prints the IR before and after: a later loop over the same range joins, past a loop it does not depend on', () => {
    const f = fn(`fn f(gx: f64[], x: f64[], gd: f64[], ge: f64[], d: f64[], e1: i32[], gs: f64, gt: f64, k: i32) {
  for e in reverse 0..len(d) {
    gd[e] += gs
  }
  for e in reverse 0..len(ge) {
    ge[e] += gt
  }
  for i in reverse 0..len(d) {
    a: i32 <- e1[i] * k
    for j in reverse 0..k {
      gx[a + j] += gd[i] * (0.5 / d[i]) * x[a + j]
    }
    a -> e1[i] * k
  }
}`)
    expect(body(fuseLoops(f))).toBe(`for e in reverse 0..len(d) {
  gd[e] += gs
  a: i32 <- e1[e] * k
  for j in reverse 0..k {
    gx[a + j] += gd[e] * (0.5 / d[e]) * x[a + j]
  }
  a -> e1[e] * k
}
for e in reverse 0..len(ge) {
  ge[e] += gt
}`)
  })

  it('refuses what a dependence forbids, and loops over other ranges', () => {
    const pair = (first: string, second: string, between = '', r1 = '0..n', r2 = '0..n') =>
      `fn f(a: f64[], b: f64[], c: f64[], s: f64, n: i32, m: i32) {
  for i in ${r1} { ${first} }
  ${between}
  for i in ${r2} { ${second} }
}`
    // the pair that fuses, as a control
    expect(unchanged(pair('a[i] += b[i]', 'c[i] += a[i] * 2.0'))).toBe(false)
    // another range, direction or step
    expect(unchanged(pair('a[i] += b[i]', 'c[i] += a[i]', '', '0..n', '0..m'))).toBe(true)
    expect(unchanged(pair('a[i] += b[i]', 'c[i] += a[i]', '', '0..n', 'reverse 0..n'))).toBe(true)
    expect(unchanged(pair('a[i] += b[i]', 'c[i] += a[i]', '', '0..n by 2', '0..n'))).toBe(true)
    // L2 reads an element L1 writes in a later iteration
    expect(unchanged(pair('a[i] += b[i]', 'c[i] += a[i + 1]', '', '0..n - 1', '0..n - 1'))).toBe(true)
    // L2 writes an element L1 reads at another index
    expect(unchanged(pair('c[i] += a[0]', 'a[i] += b[i]'))).toBe(true)
    // a scalar both touch, one writing it (a sum in another order)
    expect(unchanged(pair('s += a[i]', 'c[i] += s'))).toBe(true)
    expect(unchanged(pair('s += a[i]', 's += b[i]'))).toBe(true)
    // (a scalar both only read is fine)
    expect(unchanged(pair('a[i] += s * b[i]', 'c[i] += s * a[i]'))).toBe(false)
    // L2 cannot move before a statement between that it depends on, or that depends on it
    expect(unchanged(pair('a[i] += b[i]', 'c[i] += a[i] * s', 's += b[0]'))).toBe(true)
    expect(unchanged(pair('a[i] += b[i]', 'c[i] += a[i]', 's += c[0]'))).toBe(true)
    // ... and passes one it does not
    expect(unchanged(pair('a[i] += b[i]', 'c[i] += a[i]', 's += b[0]'))).toBe(false)
    // L2's range reads what the statements between write
    expect(
      unchanged(`fn f(a: f64[], c: f64[], n: i32, m: i32) {
  for i in 0..n { a[i] += 1.0 }
  m += 1
  for i in 0..n + m - m { c[i] += a[i] }
}`),
    ).toBe(true)
    // a function call in a body
    expect(
      unchanged(`fn g(x: f64) { x += 1.0 }
fn f(a: f64[], c: f64[], n: i32) {
  for i in 0..n { g(a[i]) }
  for i in 0..n { c[i] += a[i] }
}`),
    ).toBe(true)
    // both bodies bind the same name
    expect(
      unchanged(`fn f(a: f64[], c: f64[], n: i32) {
  for i in 0..n { t <- a[i] * 2.0
    c[i] += t
    t -> a[i] * 2.0 }
  for i in 0..n { t <- a[i]
    c[i] += t
    t -> a[i] }
}`),
    ).toBe(true)
  })
})
