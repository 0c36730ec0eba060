/**
 * Pass `finite-uncompute` on printed IR: a routine's f64 ancillas, computed from zero and
 * uncomputed by `~routine` (in one block, and in the branches of an `if (c, ~)` and its inverse),
 * and the cases that must stay as they are. The compiled programs run against the reference
 * interpreter, with checks on, in `@tenet/backend-cpu`'s `finite-uncompute-programs.test.ts`.
 */
import { describe, expect, it } from 'vitest'
import { check, createRegistry, type FunctionDef, parse, printStmts } from '../index.js'
import { finiteUncompute } from './index.js'

const fn = (text: string): FunctionDef => {
  const m = parse(text)
  return check(m.functions, [], createRegistry()).functions.get('f')!
}
/** The printed body of a function, one statement a line, without the signature. */
const body = (f: FunctionDef): string => printStmts(f.body, 0)

/** A routine of two ancillas (the second in the branches of an `if`), its copy, and `~routine` (written out). */
const routine = ({ init = '0.0', between = '', cond = 'x > 0.0', second = 'y * 2.0' } = {}) => `
fn f(out: f64, x: f64, w: f64) {
  y <- ${init}
  t <- 0.0
  y += sqrt(x)
  if (${cond}, ~) {
    t += ${second}
  } else {
    t += 1.0
  }
  out += t * w${between}
  if (${cond}, ~) {
    t -= ${second}
  } else {
    t -= 1.0
  }
  y -= sqrt(x)
  t -> 0.0
  y -> ${init}
}`

describe('pass `finite-uncompute`', () => {
  it('writes each uncompute that repeats its computation from zero as `y -= y`', () => {
    const f = fn(routine())
    const after = body(finiteUncompute(f))
    expect(after).toBe(`y <- 0.0
t <- 0.0
y += sqrt(x)
if (x > 0.0, ~) {
  t += y * 2.0
} else {
  t += 1.0
}
out += t * w
if (x > 0.0, ~) {
  t -= t
} else {
  t -= t
}
y -= y
t -> 0.0
y -> 0.0`)
    expect(body(f)).toContain('y -= sqrt(x)')
  })

  it('leaves an ancilla that does not start at zero', () => {
    const f = fn(routine({ init: '1.0' }))
    expect(body(finiteUncompute(f))).toContain('y -= sqrt(x)')
  })

  it('leaves an uncompute whose value may differ: what it reads written in between', () => {
    const f = fn(routine({ between: '\n  x += 1.0' }))
    const after = body(finiteUncompute(f))
    expect(after).toContain('y -= sqrt(x)')
    // (and the branch taken may differ: the condition reads x)
    expect(after).toContain('t -= y * 2.0')
    expect(after).toContain('t -= 1.0')
  })

  it('leaves the branches where the condition may change in between', () => {
    const f = fn(routine({ between: '\n  w += 1.0', cond: 'w > 0.0' }))
    const after = body(finiteUncompute(f))
    expect(after).toContain('t -= y * 2.0')
    expect(after).toContain('y -= y')
  })

  it('leaves i32 ancillas (exact already) and other types', () => {
    const src = `
fn f(out: i32, x: i32) {
  y: i32 <- 0
  y += x * 3
  out += y
  y -= x * 3
  y -> 0
}`
    const f = check(parse(src).functions, [], createRegistry()).functions.get('f')!
    expect(body(finiteUncompute(f))).toContain('y -= x * 3')
  })

  it('takes a call in between as writing only what its callee writes (given the program’s writes)', () => {
    const src = `
fn scale(out: i32, n: i32) {
  out += n * 2
}
fn f(out: f64, x: f64, n: i32) {
  p <- 0.0
  k: i32 <- 0
  p += x ** n
  scale(k, n)
  out += p * f64(k)
  ~scale(k, n)
  p -= x ** n
  k -> 0
  p -> 0.0
}`
    const prog = check(parse(src).functions, [], createRegistry())
    const f = prog.functions.get('f')!
    // \`scale\` reads n (its second parameter) and writes only k: \`x ** n\` keeps its value
    expect(prog.writes.get('scale')).toEqual([true, false])
    expect(body(finiteUncompute(f, new Set(), prog.writes))).toBe(`p <- 0.0
k: i32 <- 0
p += x ** n
scale(k, n)
out += p * f64(k)
~scale(k, n)
p -= p
k -> 0
p -> 0.0`)
    // without the writes, each argument of a call counts as written, n among them
    expect(body(finiteUncompute(f))).toContain('p -= x ** n')
    // a callee that writes the parameter n is bound to still blocks it
    const writesN = check(parse(src.replace('out += n * 2', 'out += n * 2\n  n += 1')).functions, [], createRegistry())
    expect(writesN.writes.get('scale')).toEqual([true, true])
    expect(body(finiteUncompute(writesN.functions.get('f')!, new Set(), writesN.writes))).toContain('p -= x ** n')
  })

  it('takes an update of another element, a nonzero constant away from each one `e` reads, as writing nothing `e` reads', () => {
    // (an integrator's step: stages of xs[2t] and xs[2t + 1], then the history's next elements)
    const step = (write: string, read = 'xs[2 * t] * p + xs[2 * t + 1]') => `
fn f(xs: f64[], p: f64, T: i32, k: i32) {
  for t in 0..T {
    a <- 0.0
    a += ${read}
    ${write} += a * 0.5
    a -= ${read}
    a -> 0.0
  }
}`
    const uncompute = (src: string) => {
      const b = body(finiteUncompute(fn(src)))
      return b.includes('a -= a') ? 'a -= a' : b.match(/a -= .*/)![0]
    }
    expect(uncompute(step('xs[2 * t + 2]'))).toBe('a -= a')
    expect(uncompute(step('xs[2 * (t + 1) + 1]'))).toBe('a -= a')
    expect(uncompute(step('xs[2 * t - 1]'))).toBe('a -= a')
    // the element e reads (the same polynomial), or one maybe equal to it, or e reads xs otherwise
    expect(uncompute(step('xs[2 * t + 1]'))).toBe('a -= xs[2 * t] * p + xs[2 * t + 1]')
    expect(uncompute(step('xs[t + 2]'))).toBe('a -= xs[2 * t] * p + xs[2 * t + 1]')
    expect(uncompute(step('xs[2 * t + k]'))).toBe('a -= xs[2 * t] * p + xs[2 * t + 1]')
    expect(uncompute(step('xs[2 * t + 2]', 'xs[2 * t] * p + f64(len(xs)) + xs[k]'))).toBe(
      'a -= xs[2 * t] * p + f64(len(xs)) + xs[k]',
    )
    // (a read of len(xs) alone is no element read: the update leaves the length as it is)
    expect(uncompute(step('xs[2 * t + 2]', 'xs[2 * t] * f64(len(xs))'))).toBe('a -= a')
  })
})
