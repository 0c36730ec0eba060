/**
 * The pass `sink-scalars` on printed IR: a series whose term is computed into an ancilla and
 * uncomputed in every iteration (paper 001's Bessel loop, its `routine` / `~routine` written out),
 * then `dead-ancillas` dropping the uncompute, and the cases that must stay as they are. The
 * compiled programs are checked against the interpreter in `@tenet/backend-cpu`'s
 * `sink-scalars-programs.test.ts`.
 */
import { describe, expect, it } from 'vitest'
import { check, createRegistry, type FunctionDef, parse, printFunction, printStmts } from '../index.js'
import { optimize, restoredInPairs, sinkScalars } from './index.js'

const fn = (text: string): FunctionDef => {
  const m = parse(text)
  return check(m.functions, [], createRegistry()).functions.get('f')!
}
/** The printed body of a function, one statement a line, without the signature. */
const body = (f: FunctionDef): string => printStmts(f.body, 0)

/** A series loop: `t` holds the term's ratio for one iteration (the `between` line goes between the pair). */
const series = (opts: { between?: string; after?: string; cond?: string; alloc?: string; close?: string } = {}) => `
fn f(out: f64, z: f64, k: i32, s: f64) {
  t: f64 <- ${opts.alloc ?? '0.0'}
  s += z
  while (abs(s) > 1e-8${opts.cond ?? ''}, k != 0) {
    k += 1
    t -= z / f64(k * k + 1)
    out += s * t
    ${opts.between ?? ''}
    s *= 0.5
    t ${opts.close ?? '+='} z / f64(k * k + 1)
    ${opts.after ?? ''}
  }
  t -> ${opts.alloc ?? '0.0'}
}`

const loopBody = (f: FunctionDef) => (f.body.find((s) => s.kind === 'while') as { body: FunctionDef['body'] }).body

describe('pass `sink-scalars`', () => {
  it('gives the loop a term ancilla that every iteration computes and uncomputes', () => {
    const f = fn(series())
    expect(restoredInPairs(loopBody(f), 't')).toBe(true)
    expect(body(sinkScalars(f))).toBe(`s += z
while (abs(s) > 1e-8, k != 0) {
  t: f64 <- 0.0
  k += 1
  t -= z / f64(k * k + 1)
  out += s * t
  s *= 0.5
  t += z / f64(k * k + 1)
  t -> 0.0
}`)
  })

  it('with the others (checks off), the uncompute goes', () => {
    const p = check(parse(series()).functions, [], createRegistry())
    const f = optimize(p, new Map(), { checks: false, tolerance: 1e-8 }).program.functions.get('f')!
    expect(body(f)).toBe(`s += z
while (abs(s) > 1e-8, k != 0) {
  t: f64 <- 0.0
  k += 1
  t -= z / f64(k * k + 1)
  out += s * t
  s *= 0.5
  t -> 0.0
}`)
    // with checks on it does not run: the uncompute stays in the loop
    const checked = optimize(p, new Map(), { checks: true, tolerance: 1e-8 }).program.functions.get('f')!
    expect(body(checked)).toContain('  t += z / f64(k * k + 1)')
  })

  it('takes several pairs of one ancilla in one body, and reads between them', () => {
    const f = fn(series({ after: 't += z\n    out += t\n    t -= z' }))
    expect(restoredInPairs(loopBody(f), 't')).toBe(true)
    expect(body(sinkScalars(f)).split('\n')[2]).toBe('  t: f64 <- 0.0')
  })

  const unchanged: Array<[string, string]> = [
    ['a write between the pair of a name the value reads', series({ between: 'z += 1.0' })],
    ['the ancilla read by the loop condition', series({ cond: ' && t < 1.0' })],
    ['a closing update that does not undo the opening one', series({ close: '-=' })],
    ['an unpaired update', series({ after: 't += 1.0' })],
    ['an ancilla not allocated at zero', series({ alloc: '1.0' })],
    ['a write of the ancilla in a nested block', series({ after: 'if (k > 3, ~) { t += 0.0 }' })],
  ]
  for (const [why, text] of unchanged)
    it(`leaves ${why} as it is`, () => {
      const f = fn(text)
      expect(printFunction(sinkScalars(f))).toBe(printFunction(f))
    })

  // a routine whose loop computes into the ancilla, and the loop that runs it backwards (\`~routine\`)
  const twoLoops = (second: string) => `
fn f(out: f64, z: f64, k: i32, s: f64, u: f64) {
  t: f64 <- 0.0
  while (abs(s) > 1e-8, k != 0) {
    k += 1
    t -= z / f64(k * k + 1)
    u += s * t
    t += z / f64(k * k + 1)
  }
  out += u
  while (k != 0, abs(s) > 1e-8) {
    ${second}
    k -= 1
  }
  t -> 0.0
}`

  it('gives each loop of several that use the ancilla its own, when every loop restores it', () => {
    const f = fn(twoLoops('t -= z / f64(k * k + 1)\n    u -= s * t\n    t += z / f64(k * k + 1)'))
    expect(body(sinkScalars(f))).toBe(`while (abs(s) > 1e-8, k != 0) {
  t: f64 <- 0.0
  k += 1
  t -= z / f64(k * k + 1)
  u += s * t
  t += z / f64(k * k + 1)
  t -> 0.0
}
out += u
while (k != 0, abs(s) > 1e-8) {
  t: f64 <- 0.0
  t -= z / f64(k * k + 1)
  u -= s * t
  t += z / f64(k * k + 1)
  k -= 1
  t -> 0.0
}`)
  })

  it('leaves an ancilla used by several loops when one of them does not restore it', () => {
    const f = fn(twoLoops('t += z / f64(k * k + 1)\n    u -= s * t'))
    expect(printFunction(sinkScalars(f))).toBe(printFunction(f))
  })

  it('leaves an ancilla that other statements of the block use', () => {
    const f = fn(`
fn f(out: f64, z: f64, n: i32) {
  t: f64 <- 0.0
  for i in 0..n {
    t -= z
    out += t
    t += z
  }
  t += z
  out += t
  t -= z
  t -> 0.0
}`)
    expect(printFunction(sinkScalars(f))).toBe(printFunction(f))
  })
})
