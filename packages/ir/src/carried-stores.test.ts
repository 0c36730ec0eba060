/**
 * The analysis of pass `carried-stores` (`deadCarriedStores`) on its own, on programs as the code
 * generators meet them with checks off (after `first-writes` marked the first writes): which
 * loops may keep a carried element in its local only, and the element their last iteration
 * writes. The generated code, against the interpreter, is in `carried-stores-programs.test.ts`
 * of the cpu and wasm backends.
 */
import { describe, expect, it } from 'vitest'
import { check, createRegistry, parse, printExpr, type FunctionDef, type Stmt } from './index.js'
import { deadCarriedStores } from './carried-stores.js'
import { firstWrites } from './passes/first-writes.js'

const fn = (text: string): FunctionDef => check(parse(text).functions, [], createRegistry()).functions.get('f')!

/** Every block's loops whose stores are dead: `for v in start..stop: array @ key` (keys of `lastKey`). */
function dead(text: string, params: string[] = []): string[] {
  const out: string[] = []
  const visit = (body: Stmt[]) => {
    for (const [loop, arrays] of deadCarriedStores(body, new Set(), new Set(params)))
      for (const [array, key] of arrays)
        out.push(`for ${loop.variable} in ${printExpr(loop.start)}..${printExpr(loop.stop)}: ${array} @ ${key}`)
    for (const s of body) {
      if (s.kind === 'if') {
        visit(s.then)
        visit(s.else)
      }
      if (s.kind === 'for' || s.kind === 'while' || s.kind === 'unchecked') visit(s.body)
    }
  }
  visit(firstWrites(fn(text)).body)
  return out
}

const horner = (after: string) => `
fn f(y: f64, c: f64[], x: f64) {
  a: f64[] <- zeros(len(c))
  a[len(c) - 1] += c[len(c) - 1]
  for k in len(c) - 2..=0 by -1 { a[k] += a[k + 1] * x + c[k] }
  ${after}
  a -> zeros(len(c))
}`

describe('pass `carried-stores` (the analysis)', () => {
  it('Horner’s accumulator: only the last element, a[0], is read after the loop', () => {
    expect(dead(horner('y += a[0] * a[0]'))).toEqual(['for k in len(c) - 2..0: a @ '])
  })

  it('inside a loop over points, as the workload writes it', () => {
    expect(
      dead(`
fn f(y: f64, c: f64[], xs: f64[]) {
  for j in 0..len(xs) {
    a: f64[] <- zeros(len(c))
    a[len(c) - 1] += c[len(c) - 1]
    for k in len(c) - 2..=0 by -1 { a[k] += a[k + 1] * xs[j] + c[k] }
    y += a[0] * a[0]
    a -> zeros(len(c))
  }
}`),
    ).toEqual(['for k in len(c) - 2..0: a @ '])
  })

  it('refuses where another element is read after the loop, or the last one in a loop, or the array whole', () => {
    expect(dead(horner('y += a[0] * a[1]'))).toEqual([])
    expect(dead(horner('for i in 0..1 { y += a[0] }'))).toEqual([])
    expect(dead(`fn g(b: f64[], z: f64) { z += b[0] }\n${horner('y += a[0]\n  g(a, y)')}`)).toEqual([])
    expect(dead(horner('a[0] += 1.0'))).toEqual([])
  })

  it('a running maximum going up, read at its last element under a condition; an ascending exclusive end', () => {
    expect(
      dead(`
fn f(y: f64, z: f64[], C: i32) {
  ms: f64[] <- zeros(C)
  ms[0] += z[0]
  for i in 1..C { ms[i] += max(ms[i - 1], z[i]) }
  if (C > 0, ~) { y += ms[C - 1] }
  ms -> zeros(C)
}`),
    ).toEqual(['for i in 1..C: ms @ -1+1*C'])
  })

  it('refuses where a name of the last index is written between the loop and the read', () => {
    expect(
      dead(`
fn f(y: f64, z: f64[], C: i32) {
  ms: f64[] <- zeros(len(z))
  ms[0] += z[0]
  for i in 1..C { ms[i] += ms[i - 1] + z[i] }
  C += 1
  y += ms[C - 1]
  ms -> zeros(len(z))
}`),
    ).toEqual([])
  })

  it('a reversed loop ends at its start: the adjoint sweep of a Horner accumulator', () => {
    expect(
      dead(`
fn f(y: f64, g: f64[], c: f64[], x: f64) {
  a: f64[] <- zeros(len(c))
  a[0] += y
  for k in reverse len(c) - 2..=0 by -1 { a[k + 1] += a[k] * x }
  g[len(c) - 1] += a[len(c) - 1]
  a -> zeros(len(c))
}`),
    ).toEqual(['for k in len(c) - 2..0: a @ -1+1*len(c)'])
  })

  it('an offset index: the element of the last iteration is v_last + 1', () => {
    expect(
      dead(`
fn f(y: f64, n: i32) {
  h: f64[] <- zeros(n + 1)
  h[0] += 1.0
  for t in 0..n { h[t + 1] += h[t] * 0.5 }
  y += h[n]
  h -> zeros(n + 1)
}`),
    ).toEqual(['for t in 0..n: h @ 1*n'])
    // (h[n - 1] is another element)
    expect(
      dead(`
fn f(y: f64, n: i32) {
  h: f64[] <- zeros(n + 1)
  h[0] += 1.0
  for t in 0..n { h[t + 1] += h[t] * 0.5 }
  y += h[n - 1]
  h -> zeros(n + 1)
}`),
    ).toEqual([])
  })

  it('refuses an array parameter, a write that is not a first write, and two writes of the array in the loop', () => {
    expect(dead('fn f(a: f64[], x: f64[]) {\n  for i in 1..len(x) { a[i] += a[i - 1] + x[i] }\n}', ['a', 'x'])).toEqual(
      [],
    )
    // (a[k] was written before the loop: not a first write)
    expect(
      dead(`
fn f(y: f64, c: f64[], x: f64) {
  a: f64[] <- zeros(len(c))
  for k in 0..len(c) { a[k] += c[k] }
  for k in 1..len(c) { a[k] += a[k - 1] * x }
  y += a[len(c) - 1]
  a -> zeros(len(c))
}`),
    ).toEqual([])
    expect(
      dead(`
fn f(y: f64, c: f64[], x: f64) {
  a: f64[] <- zeros(2 * len(c) + 2)
  a[0] += 1.0
  for k in 1..len(c) {
    a[k] += a[k - 1] * x
    a[k + len(c) + 1] += x
  }
  y += a[len(c) - 1]
  a -> zeros(2 * len(c) + 2)
}`),
    ).toEqual([])
  })

  it('refuses where the array is read inside a nested loop of the body (its promotions load elements)', () => {
    expect(
      dead(`
fn f(y: f64, c: f64[], x: f64) {
  a: f64[] <- zeros(len(c))
  a[0] += 1.0
  for k in 1..len(c) {
    a[k] += a[k - 1] * x
    for i in 0..2 { y += a[k - 1] }
  }
  y += a[len(c) - 1]
  a -> zeros(len(c))
}`),
    ).toEqual([])
  })
})
