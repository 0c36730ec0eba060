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
})
