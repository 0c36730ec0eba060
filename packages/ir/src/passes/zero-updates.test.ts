/**
 * Pass `zero-updates` on its own, on printed IR before and after (the gradients it changes are
 * checked against finite differences in @tenet/ad's tests, its semantics on random programs there).
 */
import { describe, expect, it } from 'vitest'
import { check, createRegistry, type FunctionDef, parse, printStmts, type Program } from '../index.js'
import { dropZeroUpdates, isZero, optimize } from './index.js'

const checked = (text: string): Program => check(parse(text).functions, [], createRegistry())
const body = (f: FunctionDef): string => printStmts(f.body, 0)
const run = (text: string, name = 'f') => {
  const p = checked(text)
  const f = p.functions.get(name)!
  return { before: body(f), after: body(dropZeroUpdates(f, p.writes)) }
}

describe('pass `zero-updates`', () => {
  it('drops updates by products with a zero factor, quotients of zero, sums of zeros', () => {
    const { after } = run(`
fn f(y: f64, x: f64) {
  g <- 0.0
  h <- 0.0
  y += g * sin(x)
  y -= x * (g + h)
  y += -(h / x)
  y += f64(0) * x
  y += x - g
  g += x
  y += g * 2.0
  g -= x
  h -> 0.0
  g -> 0.0
}`)
    expect(after).toBe(`g <- 0.0
h <- 0.0
y += x - g
g += x
y += g * 2.0
g -= x
h -> 0.0
g -> 0.0`)
  })

  it('an ancilla allocated at a value that is zero there (a hoisted invariant) is zero', () => {
    const { after } = run(`
fn f(y: f64, x: f64[], o: i32) {
  g: f64[] <- zeros(4)
  h <- g[o]
  k <- x[o]
  for i in 0..4 {
    y += h * x[i]
    y += k * x[i]
  }
  k -> x[o]
  h -> g[o]
  g[o] += x[0]
  u <- g[o]
  y += u * x[1]
  u -> g[o]
  g[o] -= x[0]
  g -> zeros(4)
}`)
    expect(after).toBe(`g: f64[] <- zeros(4)
h <- g[o]
k <- x[o]
for i in 0..4 {
  y += k * x[i]
}
k -> x[o]
h -> g[o]
g[o] += x[0]
u <- g[o]
y += u * x[1]
u -> g[o]
g[o] -= x[0]
g -> zeros(4)`)
  })

  it('follows SWAP: two zeros exchanged go, a zero moves to the other side', () => {
    const { after } = run(`
fn f(y: f64, x: f64) {
  a <- 0.0
  b <- 0.0
  SWAP(a, b)
  SWAP(a, y)
  x += a * 3.0
  x += y * 3.0
  SWAP(a, y)
  x += a * 5.0
  b -> 0.0
  a -> 0.0
}`)
    expect(after).toBe(`a <- 0.0
b <- 0.0
SWAP(a, y)
x += a * 3.0
SWAP(a, y)
b -> 0.0
a -> 0.0`)
  })

  it('meets branches and iterates loops to a fixed point', () => {
    const { after } = run(`
fn f(y: f64, x: f64, n: i32) {
  g <- 0.0
  h <- 0.0
  u <- 0.0
  if (x > 0.0) { g += x } else { }
  y += g * x
  y += h * x
  for i in 0..n {
    y += u * x
    y += h * x
    u += x
  }
  u -> 0.0
  h -> 0.0
  g -> 0.0
}`)
    expect(after).toBe(`g <- 0.0
h <- 0.0
u <- 0.0
if (x > 0.0, ~) {
  g += x
}
y += g * x
for i in 0..n {
  y += u * x
  u += x
}
u -> 0.0
h -> 0.0
g -> 0.0`)
  })

  it('keeps what a call may write, and tracks zero arrays as a whole', () => {
    const { after } = run(`
fn g(a: f64, b: f64) { a += b }
fn f(y: f64, x: f64[]) {
  s <- 0.0
  t <- 0.0
  z: f64[] <- zeros(3)
  g(s, t)
  y += s * 2.0
  y += t * 2.0
  y += z[1] * x[0]
  z[0] += x[0]
  y += z[2] * x[0]
  z[0] -= x[0]
  z -> zeros(3)
  t -> 0.0
  s -> 0.0
}`)
    expect(after).toBe(`s <- 0.0
t <- 0.0
z: f64[] <- zeros(3)
g(s, t)
y += s * 2.0
z[0] += x[0]
y += z[2] * x[0]
z[0] -= x[0]
z -> zeros(3)
t -> 0.0
s -> 0.0`)
  })

  it('leaves number systems whose zero is not the additive identity alone (only f64, f32, i32)', () => {
    const p = checked('fn f(y: f64, x: f64) { g <- 0.0\n y += g * x\n g -> 0.0 }')
    const e = (p.functions.get('f')!.body[1] as { value: Parameters<typeof isZero>[0] }).value
    expect(isZero(e, new Set(['g']))).toBe(true)
    expect(isZero({ ...e, type: 'tropical' } as typeof e, new Set(['g']))).toBe(false)
  })

  it('keeps an update whose value calls a host function (it may have an effect)', () => {
    const p = check(
      parse('fn f(y: f64, x: f64) { g <- 0.0\n y += g * ${0}(x)\n g -> 0.0 }', [(v: number) => v]).functions,
      [(v: number) => v],
      createRegistry(),
    )
    const f = p.functions.get('f')!
    expect(body(dropZeroUpdates(f, p.writes))).toBe(body(f))
  })

  it('runs in `optimize` only without run-time checks', () => {
    const p = checked('fn f(y: f64, x: f64) { g <- 0.0\n y += g * x\n g -> 0.0 }')
    const on = optimize(p, new Map(), { checks: true, tolerance: 1e-8 })
    expect(body(on.program.functions.get('f')!)).toContain('y += g * x')
    const off = optimize(p, new Map(), { checks: false, tolerance: 1e-8 }, ['zero-updates'])
    expect(body(off.program.functions.get('f')!)).not.toContain('y += g * x')
  })
})
