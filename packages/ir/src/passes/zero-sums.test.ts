/**
 * Pass `zero-sums` on printed IR: the first update of a float scalar ancilla allocated as `0.0`
 * split into one update per term, and the updates it must leave. The compiled programs run against
 * the reference interpreter (signed zeros, infinities and NaN included), cpu and wasm, in
 * `@tenet/backend-wasm`'s `zero-sums-programs.test.ts`.
 */
import { describe, expect, it } from 'vitest'
import { check, createRegistry, type FunctionDef, parse, printStmts } from '../index.js'
import { CHECKED_PASSES, insertChecks, optimize, zeroSums } from './index.js'

const fn = (text: string): FunctionDef => {
  const m = parse(text)
  return check(m.functions, [], createRegistry()).functions.get('f')!
}
/** The printed body of a function, one statement a line, without the signature. */
const body = (f: FunctionDef): string => printStmts(f.body, 0)

describe('pass `zero-sums`', () => {
  it('splits a stage’s first update (Lotka–Volterra, an RK4 step) into one update per term', () => {
    const f = fn(`
fn f(xs: f64[], p: f64[], h: f64) {
  for t in 0..len(xs) - 1 {
    a0 <- 0.0
    u1 <- 0.0
    a0 += p[0] * xs[t] - p[1] * xs[t] * xs[t]
    u1 += xs[t] + h / 2.0 * a0
    xs[t + 1] += u1
    u1 -= xs[t] + h / 2.0 * a0
    a0 -= p[0] * xs[t] - p[1] * xs[t] * xs[t]
    u1 -> 0.0
    a0 -> 0.0
  }
}`)
    const before = body(f)
    expect(body(zeroSums(f))).toBe(`for t in 0..len(xs) - 1 {
  a0 <- 0.0
  u1 <- 0.0
  a0 += p[0] * xs[t]
  a0 -= p[1] * xs[t] * xs[t]
  u1 += xs[t]
  u1 += h / 2.0 * a0
  xs[t + 1] += u1
  u1 -= xs[t] + h / 2.0 * a0
  a0 -= p[0] * xs[t] - p[1] * xs[t] * xs[t]
  u1 -> 0.0
  a0 -> 0.0
}`)
    // (the pass returns a new function: the input is unchanged)
    expect(body(f)).toBe(before)
  })

  it('leaves a sum of values loaded, none just computed (the leapfrog’s differences, which a backend may pair)', () => {
    const f = fn(`
fn f(a: f64[], x: f64[]) {
  for i in 0..len(a) {
    d0 <- 0.0
    d1 <- 0.0
    d0 += x[2 * i] - x[0]
    d1 += x[2 * i + 1] - x[1]
    a[i] += d0 * d1
    d1 -= x[2 * i + 1] - x[1]
    d0 -= x[2 * i] - x[0]
    d1 -> 0.0
    d0 -> 0.0
  }
}`)
    expect(body(zeroSums(f))).toBe(body(f))
  })

  it('follows the left operands down, and flips the signs of a first `-=`', () => {
    const f = fn(`
fn f(out: f64, a: f64, b: f64, c: f64, d: f64) {
  y <- 0.0
  z <- 0.0
  out += a
  y += out - b + (c - d)
  z -= out - b + c * d
  out += y * z
  z += out - b + c * d
  y -= out - b + (c - d)
  z -> 0.0
  y -> 0.0
}`)
    expect(body(zeroSums(f))).toContain(`out += a
y += out
y -= b
y += c - d
z -= out
z += b
z -= c * d
out += y * z
`)
  })

  it('takes a first update after statements that leave the scalar alone; leaves f32 scalars', () => {
    const src = (T: string) => `
fn f(out: ${T}, a: ${T}, b: ${T}) {
  y: ${T} <- 0.0
  out += a
  y += out * b - b
  out += y
  y -= out * b - b
  y -> 0.0
}`
    expect(body(zeroSums(fn(src('f64'))))).toContain('y += out * b\ny -= b\nout += y')
    const f = fn(src('f32'))
    expect(body(zeroSums(f))).toBe(body(f))
  })

  it('leaves a sum the cpu generator writes without its zero (never −0 nor negative: squares, sqrt, exp)', () => {
    const f = fn(`
fn f(out: f64, x: f64[]) {
  q <- 0.0
  q += x[0] * x[0] + x[1] * x[1]
  r <- 0.0
  r += sqrt(q) + exp(x[0])
  s <- 0.0
  s += q + x[0]
  out += r + s
  s -= q + x[0]
  r -= sqrt(q) + exp(x[0])
  q -= x[0] * x[0] + x[1] * x[1]
  s -> 0.0
  r -> 0.0
  q -> 0.0
}`)
    // (q and r stay; s, with an element of any sign, is split: its first term q still counts)
    expect(body(zeroSums(f))).toContain(`q += x[0] * x[0] + x[1] * x[1]
r <- 0.0
r += sqrt(q) + exp(x[0])
s <- 0.0
s += q
s += x[0]
`)
  })

  it('splits in nested blocks, each block’s own ancillas', () => {
    const f = fn(`
fn f(out: f64, x: f64[]) {
  for i in 0..len(x) {
    y <- 0.0
    y += out - x[i]
    out += y
    y -= out - x[i]
    y -> 0.0
  }
}`)
    // (out: written by the loop's body, so the previous iteration's value is just computed)
    expect(body(zeroSums(f))).toContain('  y += out\n  y -= x[i]\n')
  })

  it('leaves an update of a scalar that may not hold +0, or that is not a float sum', () => {
    const cases: Array<[string, string, string]> = [
      // (written before: not its first update)
      ['y += a', 'y += a - b', 'y -= a - b\n  y -= a'],
      // (written by a call in between)
      ['SWAP(y, w)', 'y += a - b', 'y -= a - b\n  SWAP(y, w)'],
      // (allocated at a value other than +0)
      ['', 'v += a - b', 'v -= a - b'],
      // (a product, a call: no sum at the top)
      ['', 'y += (a - b) * a', 'y -= (a - b) * a'],
      ['', 'y += sqrt(a - b)', 'y -= sqrt(a - b)'],
    ]
    // (a is written first: the sums read a value just computed)
    const src = (before: string, update: string, undo: string) => `
fn f(out: f64, a: f64, b: f64, w: f64) {
  a += w
  y <- 0.0
  v <- 1.0
  ${before}
  ${update}
  out += y + v
  ${undo}
  v -> 1.0
  y -> 0.0
  a -= w
}`
    for (const [before, update, undo] of cases) {
      const f = fn(src(before, update, undo))
      expect(body(zeroSums(f)), update).toBe(body(f))
    }
    // (the first case without the write before: split)
    expect(body(zeroSums(fn(src('', 'y += a - b', 'y -= a - b'))))).toContain('y += a\n  y -= b\n'.replaceAll('  ', ''))
  })

  it('leaves integers and parameters', () => {
    const f = fn(`
fn f(out: i32, y: f64, a: i32, b: f64) {
  k <- 0
  k += a - 1
  y += b - 1.0
  out += k
  k -= a - 1
  k -> 0
}`)
    expect(body(zeroSums(f))).toBe(body(f))
  })

  it('leaves a sum that calls a host function', () => {
    const f = fn(`
fn f(out: f64, a: f64) {
  out += a
  y <- 0.0
  y += sqrt(out) - a
  out += y
  y -= sqrt(out) - a
  y -> 0.0
}`)
    expect(body(zeroSums(f))).toContain('y += sqrt(out)\ny -= a\n')
    // (the same program with the call made a host function's, as an interpolated JS function is)
    const host = structuredClone(f)
    const u = host.body[2] as Extract<FunctionDef['body'][number], { kind: 'update' }>
    ;(u.value as Extract<typeof u.value, { kind: 'binary' }>).left = {
      ...((u.value as Extract<typeof u.value, { kind: 'binary' }>).left as Extract<typeof u.value, { kind: 'call' }>),
      callee: '$host0',
    }
    expect(body(host)).not.toBe(body(f))
    expect(body(zeroSums(host))).toBe(body(host))
  })
})

describe('pass `zero-sums` with run-time checks on', () => {
  it('splits in `optimize` with checks too; each update gets the bounds asserts of its own term, in reading order', () => {
    const m = parse(`
fn f(out: f64, x: f64[], p: f64[], i: i32, j: i32) {
  x[i] -= 0.0
  y <- 0.0
  y += p[j] * x[i] - p[j + 1] * x[i + 1]
  out += y
  y -= p[j] * x[i] - p[j + 1] * x[i + 1]
  y -> 0.0
}`)
    const program = check(m.functions, [], createRegistry())
    const options = { checks: true, tolerance: 1e-8, backend: 'cpu' }
    const optimized = optimize(program, new Map(), options)
    const asserted = insertChecks(optimized.program, optimized.inverses, options)
    const printed = body(asserted.program.functions.get('f')!)
    // (finite-uncompute ran first: the uncompute is y -= y; the bounds asserts of the second term
    // stand between the two updates, after the first term's, as they stood before the one update)
    expect(printed).toBe(`assert outOfBounds($inrange(i, len(x))) else ("x", i, len(x))
x[i] -= 0.0
y <- 0.0
assert outOfBounds($inrange(j, len(p))) else ("p", j, len(p))
assert outOfBounds($inrange(i, len(x))) else ("x", i, len(x))
y += p[j] * x[i]
assert outOfBounds($inrange(j + 1, len(p))) else ("p", j + 1, len(p))
assert outOfBounds($inrange(i + 1, len(x))) else ("x", i + 1, len(x))
y -= p[j + 1] * x[i + 1]
out += y
y -= y
assert dealloc($near(y, 0.0)) else ("y", "0.0", y, 0.0)
y -> 0.0`)
    // (without the pass, the one update, its four asserts before it)
    const whole = optimize(
      program,
      new Map(),
      options,
      [...CHECKED_PASSES].filter((n) => n !== 'zero-sums'),
    )
    expect(body(insertChecks(whole.program, whole.inverses, options).program.functions.get('f')!)).toContain(
      'y += p[j] * x[i] - p[j + 1] * x[i + 1]',
    )
  })
})
