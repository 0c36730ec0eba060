/**
 * Pass `implied-checks` on printed IR: the checks of a routine's float ancillas after
 * `finite-uncompute` and `insert-checks` (the n-body pair of the leapfrog, f64 and f32), which of
 * them a passed check decides, and the cases that must keep their checks. The compiled programs
 * fail as the reference interpreter does, cpu and wasm, in the backends'
 * `implied-checks-programs.test.ts`.
 */
import { describe, expect, it } from 'vitest'
import { check, createRegistry, type FunctionDef, parse, printStmts, type Program, type Stmt } from '../index.js'
import { finiteUncompute, impliedChecks, insertChecks, strictReads } from './index.js'

const registry = createRegistry()

/** The function `f` of `text` after `finite-uncompute` and `insert-checks` (checks on), and after pass `implied-checks` too. */
function passes(text: string): { before: string; after: string } {
  const checked = check(parse(text).functions, [], registry)
  const f = finiteUncompute(checked.functions.get('f')!)
  const program: Program = { ...checked, functions: new Map([['f', f]]) }
  const options = { checks: true, tolerance: 1e-8, backend: 'cpu' }
  const asserted = insertChecks(program, new Map(), options)
  const implied = impliedChecks(asserted.program, asserted.inverses, options)
  return { before: body(asserted.program.functions.get('f')!), after: body(implied.program.functions.get('f')!) }
}
/** The printed body, one statement a line, without the signature. */
const body = (f: FunctionDef): string => printStmts(f.body, 0)
/** The deallocation asserts of a printed body, as `check(names…)`. */
const deallocChecks = (printed: string): string[] =>
  printed
    .split('\n')
    .filter((l) => l.startsWith('assert dealloc'))
    .map((l) => l.replace(/ else .*/, ''))

/** One pair of bodies of the leapfrog's acceleration: separation, squared length, length, force factor. */
const pair = (T: 'f64' | 'f32', force = 'g * m / (r2 * r)') => `
fn f(a: ${T}[], x: ${T}[], m: ${T}, g: ${T}) {
  d0: ${T} <- 0.0
  d0 += x[3] - x[0]
  d1: ${T} <- 0.0
  d1 += x[4] - x[1]
  d2: ${T} <- 0.0
  d2 += x[5] - x[2]
  r2: ${T} <- 0.0
  r2 += d0 * d0 + d1 * d1 + d2 * d2
  r: ${T} <- 0.0
  r += sqrt(r2)
  s: ${T} <- 0.0
  s += ${force}
  a[0] += s * d0
  a[1] += s * d1
  a[2] += s * d2
  s -= ${force}
  s -> 0.0
  r -= sqrt(r2)
  r -> 0.0
  r2 -= d0 * d0 + d1 * d1 + d2 * d2
  r2 -> 0.0
  d2 -= x[5] - x[2]
  d2 -> 0.0
  d1 -= x[4] - x[1]
  d1 -> 0.0
  d0 -= x[3] - x[0]
  d0 -> 0.0
}`

describe('pass `implied-checks`', () => {
  for (const T of ['f64', 'f32'] as const) {
    it(`${T}: a passed check of r decides those of r2 and the separation; s keeps its own`, () => {
      const { before, after } = passes(pair(T))
      expect(deallocChecks(before)).toEqual([
        'assert dealloc($near(s, 0.0))',
        'assert dealloc($near(r, 0.0))',
        'assert dealloc($near(r2, 0.0))',
        'assert dealloc($near(d2, 0.0))',
        'assert dealloc($near(d1, 0.0))',
        'assert dealloc($near(d0, 0.0))',
      ])
      expect(after).toBe(`d0: ${T} <- 0.0
assert outOfBounds($inrange(3, len(x))) else ("x", 3, len(x))
assert outOfBounds($inrange(0, len(x))) else ("x", 0, len(x))
d0 += x[3] - x[0]
d1: ${T} <- 0.0
assert outOfBounds($inrange(4, len(x))) else ("x", 4, len(x))
assert outOfBounds($inrange(1, len(x))) else ("x", 1, len(x))
d1 += x[4] - x[1]
d2: ${T} <- 0.0
assert outOfBounds($inrange(5, len(x))) else ("x", 5, len(x))
assert outOfBounds($inrange(2, len(x))) else ("x", 2, len(x))
d2 += x[5] - x[2]
r2: ${T} <- 0.0
r2 += d0 * d0 + d1 * d1 + d2 * d2
r: ${T} <- 0.0
r += sqrt(r2)
s: ${T} <- 0.0
s += g * m / (r2 * r)
assert outOfBounds($inrange(0, len(a))) else ("a", 0, len(a))
a[0] += s * d0
assert outOfBounds($inrange(1, len(a))) else ("a", 1, len(a))
a[1] += s * d1
assert outOfBounds($inrange(2, len(a))) else ("a", 2, len(a))
a[2] += s * d2
s -= s
assert dealloc($near(s, 0.0)) else ("s", "0.0", s, 0.0)
s -> 0.0
r -= r
assert dealloc($near(r, 0.0)) else ("r", "0.0", r, 0.0)
r -> 0.0
r2 -= r2
r2 -> 0.0
d2 -= d2
d2 -> 0.0
d1 -= d1
d1 -> 0.0
d0 -= d0
d0 -> 0.0`)
    })
  }

  it('keeps the checks of values reached only through a divisor or a non-strict call', () => {
    // s ← 1 / r: s finite says nothing of r (1 / ∞ is 0); exp(−∞) is 0
    const divisor = passes(pair('f64', '1.0 / r')).after
    expect(deallocChecks(divisor)).toContain('assert dealloc($near(r, 0.0))')
    const text = `
fn f(out: f64, x: f64) {
  y: f64 <- 0.0
  y += x * 2.0
  z: f64 <- 0.0
  z += exp(y)
  out += z
  z -= exp(y)
  z -> 0.0
  y -= x * 2.0
  y -> 0.0
}`
    expect(deallocChecks(passes(text).after)).toEqual([
      'assert dealloc($near(z, 0.0))',
      'assert dealloc($near(y, 0.0))',
    ])
  })

  it('keeps a check that runs before the one that would decide it', () => {
    // the uncompute in the order of the computation: y's check runs first
    const text = `
fn f(out: f64, x: f64) {
  y: f64 <- 0.0
  y += x * 2.0
  z: f64 <- 0.0
  z += y + 1.0
  out += z
  y -= x * 2.0
  z -= x * 2.0 + 1.0
  y -> 0.0
  z -> 0.0
}`
    const { before, after } = passes(text)
    expect(after).toBe(before)
  })

  it('keeps the check of a value written again after it was used', () => {
    const text = `
fn f(out: f64, x: f64) {
  y: f64 <- 0.0
  y += x * 2.0
  z: f64 <- 0.0
  z += y * y
  out += z
  y += 1.0
  y -= 1.0
  z -= y * y
  z -> 0.0
  y -= x * 2.0
  y -> 0.0
}`
    const { before, after } = passes(text)
    expect(deallocChecks(before)).toHaveLength(2)
    expect(after).toBe(before)
  })

  it('follows a first update that pass `zero-sums` split: the checks the split value decides stay out', () => {
    // (the uncomputes as pass \`finite-uncompute\` leaves them, \`y -= y\`: written \`y -= y_\` here, as
    // the checker rejects a name in its own right-hand side, and renamed)
    const self = (text: string) => {
      const checked = check(parse(text).functions, [], registry)
      const rename = (st: Stmt[]): Stmt[] => JSON.parse(JSON.stringify(st).replace(/"name":"(\w+)_"/g, '"name":"$1"'))
      const f = checked.functions.get('f')!
      const program: Program = { ...checked, functions: new Map([['f', { ...f, body: rename(f.body) }]]) }
      const options = { checks: true, tolerance: 1e-8, backend: 'cpu' }
      const asserted = insertChecks(program, new Map(), options)
      return body(impliedChecks(asserted.program, asserted.inverses, options).program.functions.get('f')!)
    }
    // (y += x * 2.0 - w, split: y += x * 2.0; y -= w; w = ±∞ or NaN makes y so, and z, whose check fails)
    const split = (between: string, after: string) => `
fn f(out: f64, x: f64, w: f64, y_: f64, z_: f64) {
  y: f64 <- 0.0
  y += x * 2.0${between}
  z: f64 <- 0.0
  z += y * 3.0
  z += w${after}
  out += z
  z -= z_
  z -> 0.0
  y -= y_
  y -> 0.0
}`
    expect(deallocChecks(self(split('\n  y -= w', '')))).toEqual(['assert dealloc($near(z, 0.0))'])
    // z computed from y before y's last update: z's check says nothing of y's final value
    expect(deallocChecks(self(split('', '\n  y -= w')))).toEqual([
      'assert dealloc($near(z, 0.0))',
      'assert dealloc($near(y, 0.0))',
    ])
    // an update that reads y is no part of a split first update
    expect(deallocChecks(self(split('\n  y -= w * y_', '')))).toHaveLength(2)
  })

  it('keeps the checks of an uncompute that is not `y -= y` (an operand changed in between)', () => {
    const text = `
fn f(out: f64, x: f64[]) {
  y: f64 <- 0.0
  y += x[0] * 2.0
  z: f64 <- 0.0
  z += sqrt(y)
  out += z
  x[0] += 1.0
  z -= sqrt(y)
  z -> 0.0
  y -= x[0] * 2.0
  y -> 0.0
}`
    const { before, after } = passes(text)
    expect(before).toMatch(/y -= x\[0\] \* 2\.0/)
    expect(after).toBe(before)
  })

  it('reads strictly through + − ×, unary minus, the dividend of /, the base of ** c (c > 0) and sqrt, abs', () => {
    const std = () => true
    const e = (text: string) => {
      const f = check(
        parse(`fn f(o: f64, a: f64, b: f64, c: f64) { o += ${text} }`).functions,
        [],
        registry,
      ).functions.get('f')!
      const u = f.body[0] as { value: Parameters<typeof strictReads>[0] }
      return [...strictReads(u.value, std)].sort()
    }
    expect(e('-(a * b) + c')).toEqual(['a', 'b', 'c'])
    expect(e('a / b')).toEqual(['a'])
    expect(e('sqrt(abs(a)) - b')).toEqual(['a', 'b'])
    expect(e('exp(a) + max(b, c)')).toEqual([])
    expect(e('a ** 2.0')).toEqual(['a'])
    expect(e('a ** 2 + b ** 0.5')).toEqual(['a', 'b'])
    expect(e('a ** 0.0 + b ** -1.0 + c ** a')).toEqual([])
  })

  /** The Bessel listing's powers of z/2: a square (strict in its base) and a power of a variable exponent (not). */
  const powers = (e: string) => `
fn f(out: f64, x: f64, nu: i32) {
  h: f64 <- 0.0
  h += x / 2.0
  p: f64 <- 0.0
  p += ${e}
  out += p
  p -= ${e}
  p -> 0.0
  h -= x / 2.0
  h -> 0.0
}`
  it('a passed check of h ** c (a literal c > 0) decides the check of h; h ** nu, h ** 0.0 do not', () => {
    const sq = passes(powers('h ** 2'))
    expect(deallocChecks(sq.before)).toEqual(['assert dealloc($near(p, 0.0))', 'assert dealloc($near(h, 0.0))'])
    expect(deallocChecks(sq.after)).toEqual(['assert dealloc($near(p, 0.0))'])
    for (const e of ['h ** nu', 'h ** 0.0', 'h ** -2.0']) {
      const { before, after } = passes(powers(e))
      expect(deallocChecks(after)).toHaveLength(2)
      expect(after).toBe(before)
    }
  })

  /** A series' counter, a loop and the same loop run backwards (a routine and its `~routine`), `between` the two. */
  const series = (between: string, cond = 'k < n') => `
fn f(out: f64, n: i32, a: f64[]) {
  k: i32 <- 0
  while (${cond}, k != 0) { k += 1 }
  ${between}
  while (k != 0, ${cond}) { k -= 1 }
  k -> 0
}`
  /** The entry checks of the loops in a printed body. */
  const entryChecks = (printed: string): string[] =>
    printed.split('\n').filter((l) => l.startsWith('assert postWhileStart'))

  it("leaves out the entry check of a loop run backwards that the loop's exit decided", () => {
    const { before, after } = passes(series('out += f64(k)'))
    expect(entryChecks(before)).toEqual([
      'assert postWhileStart(!(k != 0)) else ("k != 0")',
      'assert postWhileStart(!(k < n)) else ("k < n")',
    ])
    expect(entryChecks(after)).toEqual(['assert postWhileStart(!(k != 0)) else ("k != 0")'])
    expect(after).toBe(before.replace('assert postWhileStart(!(k < n)) else ("k < n")\n', ''))
    // (through standard primitives and conversions, and past allocations, asserts and updates of other names)
    const abs = passes(series('x: f64 <- 0.0\n  x += a[0]\n  out += x\n  x -= a[0]\n  x -> 0.0', 'abs(f64(k)) < 3.5'))
    expect(entryChecks(abs.after)).toEqual(['assert postWhileStart(!(k != 0)) else ("k != 0")'])
  })

  it('keeps the entry check where a name the condition reads is written in between, or it reads an element', () => {
    for (const [between, cond] of [
      ['n += 1', 'k < n'],
      ['k += 0', 'k < n'],
      ['a[0] += 1.0', 'f64(k) < a[0]'],
      ['if (n > 0) { out += 1.0 }', 'k < n'],
      ['for j in 0..2 { out += 1.0 }', 'k < n'],
    ]) {
      const { before, after } = passes(series(between!, cond))
      expect(entryChecks(before)).toHaveLength(2)
      expect(after).toBe(before)
    }
  })
})
