/**
 * The optimisation passes one at a time, on printed IR before and after (the backends' tests and
 * the conformance suite check that the compiled programs still compute the same values).
 */
import { describe, expect, it } from 'vitest'
import { check, createRegistry, type FunctionDef, parse, printStmts, type Program } from '../index.js'
import {
  cancelUncompute,
  deadAncillas,
  dropDeadAncillaWrites,
  effectfulFunctions,
  finiteUncompute,
  literalTrips,
  optimize,
  scalarReplaceArrays,
  unrollLoops,
} from './index.js'

const checked = (text: string, hosts: unknown[] = []): Program => {
  const m = parse(text, hosts)
  return check(m.functions, hosts, createRegistry())
}
const fn = (p: Program, name: string): FunctionDef => p.functions.get(name)!
/** The printed body of a function, one statement a line, without the signature. */
const body = (f: FunctionDef): string => printStmts(f.body, 0)
const dead = (p: Program, name: string, checks = false) =>
  dropDeadAncillaWrites(fn(p, name), { writes: p.writes, effectful: effectfulFunctions(p.functions.values()), checks })

// the leapfrog's pair interaction (paper 000 Appendix F) with its routine expanded by hand
const pair = `
fn pair(a: f64[], x: f64[], m: f64[], g: f64, i: i32, j: i32) {
  dx: f64[] <- zeros(3)
  for c in 0..3 { dx[c] += x[3 * j + c] - x[3 * i + c] }
  r2 <- 0.0
  r2 += dx[0] * dx[0] + dx[1] * dx[1] + dx[2] * dx[2]
  s <- 0.0
  s += g * m[j] / (r2 * sqrt(r2))
  for c in 0..3 { a[3 * i + c] += s * dx[c] }
  s -= g * m[j] / (r2 * sqrt(r2))
  s -> 0.0
  r2 -= dx[0] * dx[0] + dx[1] * dx[1] + dx[2] * dx[2]
  r2 -> 0.0
  for c in 2..=0 by -1 { dx[c] -= x[3 * j + c] - x[3 * i + c] }
  dx -> zeros(3)
}`

describe('pass `unroll`', () => {
  it('replaces a short literal loop by its iterations, in order, with the variable substituted', () => {
    const f = unrollLoops(fn(checked(pair), 'pair'))
    expect(body(f)).toBe(`dx: f64[] <- zeros(3)
dx[0] += x[3 * j] - x[3 * i]
dx[1] += x[3 * j + 1] - x[3 * i + 1]
dx[2] += x[3 * j + 2] - x[3 * i + 2]
r2 <- 0.0
r2 += dx[0] * dx[0] + dx[1] * dx[1] + dx[2] * dx[2]
s <- 0.0
s += g * m[j] / (r2 * sqrt(r2))
a[3 * i] += s * dx[0]
a[3 * i + 1] += s * dx[1]
a[3 * i + 2] += s * dx[2]
s -= g * m[j] / (r2 * sqrt(r2))
s -> 0.0
r2 -= dx[0] * dx[0] + dx[1] * dx[1] + dx[2] * dx[2]
r2 -> 0.0
dx[2] -= x[3 * j + 2] - x[3 * i + 2]
dx[1] -= x[3 * j + 1] - x[3 * i + 1]
dx[0] -= x[3 * j] - x[3 * i]
dx -> zeros(3)`)
  })

  it('counts the trips of literal ranges (steps, closed ranges, reversed loops) and refuses long or unknown ones', () => {
    const loops = fn(
      checked(`fn f(x: f64[], n: i32) {
      for i in 0..4 { x[i] += 1.0 }
      for i in 1..=7 by 3 { x[i] += 1.0 }
      for i in 3..=0 by -2 { x[i] += 1.0 }
      for i in 0..5 { x[i] += 1.0 }
      for i in 0..n { x[i] += 1.0 }
      for i in 2..2 { x[i] += 1.0 }
    }`),
      'f',
    ).body as Array<Extract<FunctionDef['body'][number], { kind: 'for' }>>
    expect(loops.map(literalTrips)).toEqual([[0, 1, 2, 3], [1, 4, 7], [3, 1], undefined, undefined, []])
    expect(literalTrips({ ...loops[0]!, reverse: true })).toEqual([3, 2, 1, 0])
    const after = body(
      unrollLoops(
        fn(
          checked(`fn f(x: f64[], n: i32) {
      for i in 0..5 { x[i] += 1.0 }
      for i in 0..n { x[i] += 1.0 }
      for i in 2..2 { x[i] += 1.0 }
      for i in 0..2 { for k in 0..2 { x[2 * i + k] += 1.0 } }
    }`),
          'f',
        ),
      ),
    )
    expect(after).toBe(`for i in 0..5 {
  x[i] += 1.0
}
for i in 0..n {
  x[i] += 1.0
}
x[2 * 0] += 1.0
x[2 * 0 + 1] += 1.0
x[2 * 1] += 1.0
x[2 * 1 + 1] += 1.0`)
  })

  it('writes the offsets a copy adds to a base as one (`rm[pk + 2 - 1]` is `rm[pk + 1]`), only for integers', () => {
    // a log-sum-exp's running maximum: each copy reads the element the copy before wrote
    const text = `fn f(rm: f64[], m: f64[], x: f64[], pk: i32) {
      rm[pk] += m[pk]
      for c in 1..4 { rm[pk + c] += max(rm[pk + c - 1], m[pk + c]) }
      for c in 0..2 { x[pk - c + 3] += x[pk + 1 - c - 2] * 2.0 }
      for c in 0..2 { x[pk + 1 + c] += 1.5 + f64(c) - 1.0 }
    }`
    expect(body(unrollLoops(fn(checked(text), 'f')))).toBe(`rm[pk] += m[pk]
rm[pk + 1] += max(rm[pk], m[pk + 1])
rm[pk + 2] += max(rm[pk + 1], m[pk + 2])
rm[pk + 3] += max(rm[pk + 2], m[pk + 3])
x[pk + 3] += x[pk - 1] * 2.0
x[pk + 2] += x[pk - 2] * 2.0
x[pk + 1] += 1.5 + f64(0) - 1.0
x[pk + 2] += 1.5 + f64(1) - 1.0`)
  })

  it('leaves offsets beyond 2³⁰ as they are (their sum would not be a small i32 literal)', () => {
    const text = `fn f(y: f64[], x: f64[], b: i32) {
      for c in 1..3 { y[c] += x[b + c - 1 + 2147483647 + 1] * 2.0 }
    }`
    expect(body(unrollLoops(fn(checked(text), 'f')))).toBe(`y[1] += x[b + 2147483647 + 1] * 2.0
y[2] += x[b + 1 + 2147483647 + 1] * 2.0`)
  })
})

describe('pass `scalar-arrays`', () => {
  it('turns a small array ancilla used at literal positions into scalar ancillas', () => {
    const f = scalarReplaceArrays(unrollLoops(fn(checked(pair), 'pair')))
    const text = body(f)
    expect(text).not.toMatch(/dx\[|zeros/)
    expect(text.split('\n').slice(0, 7).join('\n')).toBe(`dx$sr0: f64 <- 0.0
dx$sr1: f64 <- 0.0
dx$sr2: f64 <- 0.0
dx$sr0 += x[3 * j] - x[3 * i]
dx$sr1 += x[3 * j + 1] - x[3 * i + 1]
dx$sr2 += x[3 * j + 2] - x[3 * i + 2]
r2 <- 0.0`)
    expect(text.split('\n').slice(-3).join('\n')).toBe('dx$sr0 -> 0.0\ndx$sr1 -> 0.0\ndx$sr2 -> 0.0')
  })

  it('replaces len(a) by the length, and leaves an array that escapes or is indexed by a variable', () => {
    const p = checked(`
fn g(v: f64[]) { v[0] += 1.0 }
fn f(y: f64, k: i32) {
  a: f64[] <- zeros(2)
  a[1] += f64(len(a))
  y += a[1]
  a[1] -= f64(len(a))
  a -> zeros(2)
  b: f64[] <- zeros(2)
  b[k] += 1.0
  y += b[k]
  b[k] -= 1.0
  b -> zeros(2)
  c: f64[] <- zeros(2)
  g(c)
  ~g(c)
  c -> zeros(2)
}`)
    const text = body(scalarReplaceArrays(fn(p, 'f')))
    expect(text.split('\n').slice(0, 6).join('\n')).toBe(`a$sr0: f64 <- 0.0
a$sr1: f64 <- 0.0
a$sr1 += f64(2)
y += a$sr1
a$sr1 -= f64(2)
a$sr0 -> 0.0`)
    expect(text).toContain('b: f64[] <- zeros(2)')
    expect(text).toContain('c: f64[] <- zeros(2)')
  })
})

describe('pass `dead-ancillas`', () => {
  it('drops the uncompute of a routine when nothing reads the ancillas before they go (checks off)', () => {
    const p = checked(pair)
    const f = dead({ ...p, functions: new Map([['pair', scalarReplaceArrays(unrollLoops(fn(p, 'pair')))]]) }, 'pair')
    expect(body(f)).toBe(`dx$sr0: f64 <- 0.0
dx$sr1: f64 <- 0.0
dx$sr2: f64 <- 0.0
dx$sr0 += x[3 * j] - x[3 * i]
dx$sr1 += x[3 * j + 1] - x[3 * i + 1]
dx$sr2 += x[3 * j + 2] - x[3 * i + 2]
r2 <- 0.0
r2 += dx$sr0 * dx$sr0 + dx$sr1 * dx$sr1 + dx$sr2 * dx$sr2
s <- 0.0
s += g * m[j] / (r2 * sqrt(r2))
a[3 * i] += s * dx$sr0
a[3 * i + 1] += s * dx$sr1
a[3 * i + 2] += s * dx$sr2
s -> 0.0
r2 -> 0.0
dx$sr0 -> 0.0
dx$sr1 -> 0.0
dx$sr2 -> 0.0`)
  })

  it('keeps everything a deallocation check reads when checks are on, outside @unchecked only', () => {
    const p = checked(pair)
    expect(body(dead(p, 'pair', true))).toBe(body(fn(p, 'pair')))
    const q = checked(`fn f(y: f64, x: f64) {
  t <- 0.0
  t += x * x
  y += t
  @unchecked { t -= x * x; t -> 0.0 }
}`)
    expect(body(dead(q, 'f', true))).toBe(`t <- 0.0
t += x * x
y += t
@unchecked {
  t -> 0.0
}`)
  })

  it('drops a whole loop that only changes dead ancillas (its condition with it), and calls that only write them', () => {
    const p = checked(`
fn acc(t: f64, x: f64) { t += x * x }
fn f(y: f64, x: f64, n: i32) {
  k: i32 <- 0
  t <- 0.0
  while (k == 0, k > 0) { k += 1; acc(t, x) }
  y += t
  while (k > 0, k == 0) { ~acc(t, x); k -= 1 }
  u <- 0.0
  acc(u, x)
  ~acc(u, x)
  u -> 0.0
  t -> 0.0
  k -> 0
}`)
    expect(body(dead(p, 'f'))).toBe(`k: i32 <- 0
t <- 0.0
while (k == 0, k > 0) {
  k += 1
  acc(t, x)
}
y += t
t -> 0.0
k -> 0`)
  })

  it('keeps what has an effect: @safe, host calls, stacks, and calls of functions that have one', () => {
    const log: number[] = []
    const host = (v: number) => {
      log.push(v)
      return v
    }
    const p = checked(
      `
fn noisy(t: f64, x: f64) { t += x; @safe \${0}(x) }
fn f(y: f64, x: f64) {
  t <- 0.0
  t += \${0}(x)
  u <- 0.0
  noisy(u, x)
  ~noisy(u, x)
  u -> 0.0
  y += x
  t -= \${0}(x)
  t -> 0.0
}`,
      [host],
    )
    expect(effectfulFunctions(p.functions.values())).toEqual(new Set(['noisy', 'f']))
    expect(body(dead(p, 'f'))).toBe(body(fn(p, 'f')))
  })

  it('keeps an allocation inside @unchecked (no scope) that later statements use', () => {
    const p = checked(`fn f(y: f64, x: f64) {
  @unchecked { t <- 0.0 }
  y += t * x
  t += x
  t -> x
}`)
    expect(body(dead(p, 'f'))).toBe(`@unchecked {
  t <- 0.0
}
y += t * x
t -> x`)
  })

  it('keeps an update whose ancilla a later iteration of the loop reads', () => {
    const p = checked(`fn f(y: f64, x: f64[]) {
  t <- 0.0
  for i in 0..len(x) {
    y += t * x[i]
    t += x[i]
  }
  t -= 1.0
  @unchecked { t -> 0.0 }
}`)
    const text = body(dead(p, 'f'))
    expect(text).toContain('t += x[i]')
    expect(text).not.toContain('t -= 1.0')
  })
})

describe('optimize', () => {
  it('runs unroll and scalar-arrays always, the uncompute passes with checks, and dead-ancillas without', () => {
    const p = checked(pair)
    const inverses = new Map<string, FunctionDef>()
    const on = optimize(p, inverses, { checks: true, tolerance: 1e-8 })
    expect(body(fn(on.program, 'pair'))).toBe(
      body(finiteUncompute(cancelUncompute(scalarReplaceArrays(unrollLoops(fn(p, 'pair')))))),
    )
    // (the uncompute keeps the ancilla's bits for its deallocation check: see finite-uncompute)
    expect(body(fn(on.program, 'pair'))).toContain('s -= s')
    // (a negative tolerance fails an array of zeros, not a scalar zero: the arrays stay)
    const negative = optimize(p, inverses, { checks: true, tolerance: -1 })
    expect(body(fn(negative.program, 'pair'))).toContain('dx: f64[] <- zeros(3)')
    const off = optimize(p, inverses, { checks: false, tolerance: 1e-8 })
    expect(body(fn(off.program, 'pair'))).not.toMatch(/dx\[|s -= /)
    const only = optimize(p, inverses, { checks: false, tolerance: 1e-8 }, ['dead-ancillas'])
    expect(body(fn(only.program, 'pair'))).toBe(body(fn(deadAncillas(p, inverses, false).program, 'pair')))
  })
})
