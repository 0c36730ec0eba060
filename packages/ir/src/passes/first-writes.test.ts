/**
 * Pass `first-writes` on its own, on programs as it meets them (with checks off, after
 * `dead-ancillas` dropped the uncomputes): the printed IR is unchanged (the pass sets hints only, which the
 * printer does not show), so each case prints the body and lists the marks — the allocations
 * marked `overwritten` and the updates marked `init`. The compiled programs are checked against
 * the interpreter, stale pooled arrays included, in `first-writes-programs.test.ts` of the cpu
 * backend.
 */
import { describe, expect, it } from 'vitest'
import { check, createRegistry, parse, printFunction, printStmt, type FunctionDef, type Stmt } from '../index.js'
import { firstWrites, indexPolynomial } from './first-writes.js'
import { disabledPasses, optimize } from './index.js'

const fn = (text: string): FunctionDef => check(parse(text).functions, [], createRegistry()).functions.get('f')!

/** The marks of a function: `overwritten a` for an allocation, `init …` for an update, in program order. */
function marks(body: Stmt[], out: string[] = []): string[] {
  for (const s of body) {
    if (s.kind === 'alloc' && s.overwritten) out.push(`overwritten ${s.name}`)
    if (s.kind === 'update' && s.init) out.push(`init ${printStmt(s, 0).trim()}`)
    if (s.kind === 'if') marks([...s.then, ...s.else], out)
    if (s.kind === 'for' || s.kind === 'while' || s.kind === 'unchecked') marks(s.body, out)
  }
  return out
}

const run = (text: string) => {
  const f = fn(text)
  const after = firstWrites(f)
  // hints only: the program prints as it did
  expect(printFunction(after)).toBe(printFunction(f))
  return marks(after.body)
}

describe('pass `first-writes`', () => {
  it('Horner’s accumulator, written from its last element down, then read at 0', () => {
    expect(
      run(`
fn f(y: f64, c: f64[], x: f64) {
  a: f64[] <- zeros(len(c))
  a[len(c) - 1] += c[len(c) - 1]
  for k in len(c) - 2..=0 by -1 { a[k] += a[k + 1] * x + c[k] }
  y += a[0] * a[0]
  a -> zeros(len(c))
}`),
    ).toEqual(['overwritten a', 'init a[len(c) - 1] += c[len(c) - 1]', 'init a[k] += a[k + 1] * x + c[k]'])
  })

  it('a running maximum going up, read after the loop in a branch and in a loop at an index bound outside it', () => {
    expect(
      run(`
fn f(y: f64, z: f64[], C: i32) {
  ms: f64[] <- zeros(C)
  ms[0] += z[0]
  for i in 1..C { ms[i] += max(ms[i - 1], z[i]) }
  if (C > 0, ~) { y += ms[C - 1] }
  for i in 0..C { y += exp(z[i] - ms[C - 1]) + ms[0] }
  ms -> zeros(C)
}`),
    ).toEqual(['overwritten ms', 'init ms[0] += z[0]', 'init ms[i] += max(ms[i - 1], z[i])'])
  })

  it('two first elements and a two-term recurrence; a second write of a written element is an ordinary update', () => {
    expect(
      run(`
fn f(y: f64, n: i32, x: f64) {
  h: f64[] <- zeros(n + 2)
  h[0] += x
  h[1] += h[0] * x
  h[0] += 1.0
  for t in 2..n + 2 {
    h[t] += h[t - 1] * x - h[t - 2]
    y += h[t] * h[t - 1]
  }
  y += h[n + 1]
  h -> zeros(n + 2)
}`),
    ).toEqual(['overwritten h', 'init h[0] += x', 'init h[1] += h[0] * x', 'init h[t] += h[t - 1] * x - h[t - 2]'])
  })

  it('a gradient’s shape: the forward in order, a loop updating only written elements, an adjoint array written one ahead of its loop variable', () => {
    expect(
      run(`
fn f(y: f64, c: f64[], gc: f64[], x: f64) {
  a: f64[] <- zeros(len(c))
  g: f64[] <- zeros(len(c))
  a[len(c) - 1] += c[len(c) - 1]
  for k in len(c) - 2..=0 by -1 { a[k] += a[k + 1] * x + c[k] }
  y += a[0]
  g[0] += 2.0 * a[0]
  for k in 0..=len(c) - 2 {
    a[k] -= a[k + 1] * x + c[k]
    g[k + 1] += g[k] * x
    gc[k] += g[k]
  }
  for k in 0..len(c) { y += a[k] * g[k] }
  gc[len(c) - 1] += g[len(c) - 1]
  g -> zeros(len(c))
  a -> zeros(len(c))
}`),
    ).toEqual([
      'overwritten a',
      'overwritten g',
      'init a[len(c) - 1] += c[len(c) - 1]',
      'init a[k] += a[k + 1] * x + c[k]',
      'init g[0] += 2.0 * a[0]',
      'init g[k + 1] += g[k] * x',
    ])
  })

  it('leaves alone: a read of an element nothing wrote, a gap, a loop reading ahead, the wrong direction, a write it cannot follow', () => {
    const cases = [
      // a[n - 1] is never written (the loop stops before it)
      `a[0] += x
  for k in 1..n - 1 { a[k] += a[k - 1] * x }
  y += a[n - 1]`,
      // a gap: the loop starts two past the written element
      `a[0] += x
  for k in 2..n { a[k] += a[k - 2] * x }`,
      // reading ahead of the writes
      `a[0] += x
  for k in 1..n { a[k] += a[k + 1] * x }`,
      // the loop runs its range backwards, away from the written element
      `a[0] += x
  for k in reverse 1..n { a[k] += a[k - 1] * x }`,
      // the element of this iteration read before its write
      `a[0] += x
  for k in 1..n {
    y += a[k]
    a[k] += a[k - 1] * x
  }`,
      // a write at a computed index, and the array passed to a call
      `a[0] += x
  a[m] += x`,
      `a[0] += x
  g(a, x)`,
      // an index that changes in the region
      `a[m] += x
  m += 1
  a[m] += x`,
      // a loop updating elements past the written ones
      `a[0] += x
  for k in 1..n - 1 { a[k] += a[k - 1] * x }
  for k in 0..n - 1 { a[k + 1] += x }`,
      // a read-only loop reaching past the written elements
      `a[0] += x
  for k in 1..n - 1 { a[k] += a[k - 1] * x }
  for k in 0..n { y += a[k] }`,
      // a second write in the loop's body
      `a[0] += x
  for k in 1..n {
    a[k] += a[k - 1] * x
    a[k - 1] += x
  }`,
    ]
    for (const c of cases)
      expect(
        run(`
fn g(a: f64[], x: f64) { a[0] += x }
fn f(y: f64, n: i32, m: i32, x: f64) {
  a: f64[] <- zeros(n)
  ${c}
  a -> zeros(n)
}`),
        c,
      ).toEqual([])
  })

  it('runs with run-time checks off only (the deallocation check reads every element)', () => {
    const text = `
fn f(y: f64, c: f64[], xs: f64[]) {
  for j in 0..len(xs) {
    a: f64[] <- zeros(len(c))
    a[len(c) - 1] += c[len(c) - 1]
    for k in len(c) - 2..=0 by -1 { a[k] += a[k + 1] * xs[j] + c[k] }
    y += a[0]
    for k in 0..=len(c) - 2 { a[k] -= a[k + 1] * xs[j] + c[k] }
    a[len(c) - 1] -= c[len(c) - 1]
    a -> zeros(len(c))
  }
}`
    const p = check(parse(text).functions, [], createRegistry())
    const on = optimize(p, new Map(), { checks: true, tolerance: 0 } as never).program.functions.get('f')!
    // (without \`jam-iterations\`, which would run the loop in pairs: each copy marked alike)
    disabledPasses.add('jam-iterations')
    let off: FunctionDef
    try {
      off = optimize(p, new Map(), { checks: false, tolerance: 0 } as never).program.functions.get('f')!
    } finally {
      disabledPasses.delete('jam-iterations')
    }
    expect(marks(on.body)).toEqual([])
    // (after \`hoist-invariants\`: c[len(c) − 1] and xs[j] computed before the loops)
    expect(marks(off.body)).toEqual([
      'overwritten a',
      'init a[len(c) - 1] += j$inv2',
      'init a[k] += a[k + 1] * k$inv0 + c[k]',
    ])
  })

  it('index polynomials: lengths are atoms, products expand', () => {
    const f = fn(`fn f(y: f64, c: f64[], n: i32) { y += c[(n + 1) * 2 - len(c)] }`)
    const u = f.body[0] as Extract<Stmt, { kind: 'update' }>
    const index = (u.value as { index: Parameters<typeof indexPolynomial>[0] }).index
    expect([...indexPolynomial(index)!]).toEqual([
      ['n', 2],
      ['', 2],
      ['len(c)', -1],
    ])
  })
})
