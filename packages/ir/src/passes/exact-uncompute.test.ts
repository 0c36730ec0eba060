/**
 * Pass `exact-uncompute` on printed IR: the uncall of an exact (integer) function that undoes a
 * call from a zero ancilla becomes `y -= y`, and the cases that must stay as they are. The
 * compiled programs run against the reference interpreter, with checks on, in
 * `@tenet/backend-cpu`'s and `@tenet/backend-wasm`'s `exact-uncompute-programs.test.ts`.
 */
import { describe, expect, it } from 'vitest'
import { check, createRegistry, type FunctionDef, parse, printStmts, type Program } from '../index.js'
import { exactFunctions, exactUncompute } from './index.js'

const program = (text: string): Program => check(parse(text).functions, [], createRegistry())
/** The printed body of a function, one statement a line, without the signature. */
const body = (f: FunctionDef): string => printStmts(f.body, 0)
/** Function `f` of `text` after the pass. */
const after = (text: string): string => {
  const p = program(text)
  return body(exactUncompute(p.functions.get('f')!, exactFunctions(p.functions.values()), p.writes))
}

/** n! by the integer approximate multiplier (paper 001's `ifactorial`): exact. */
const factorial = `
fn imul_int(out: i32, x: i32, anc: i32) {
  anc += out * x
  out -= div(anc, x)
  SWAP(out, anc)
}
fn ifactorial(out: i32, n: i32) {
  anc: i32 <- 0
  out += 1
  for i in 1..=n { imul_int(out, i, anc) }
  anc -> 0
}`

/** A routine that computes n! into an ancilla, uses it, and uncalls the factorial. */
const user = ({ init = '0', between = '', call = 'ifactorial(fact, n)', uncall = '~ifactorial(fact, n)' } = {}) => `
${factorial}
fn f(out: f64, n: i32, z: f64) {
  fact: i32 <- ${init}
  ${call}
  out += z / f64(fact)${between}
  ${uncall}
  fact -> ${init}
}`

describe('pass `exact-uncompute`', () => {
  it('finds the exact functions: integer updates, SWAP, exact callees', () => {
    const p = program(`${factorial}
fn real(out: f64, x: f64, anc: f64) {
  anc += out * x
  out -= anc / x
  SWAP(out, anc)
}
fn uses_real(out: f64, x: f64) {
  anc <- 0.0
  real(out, x, anc)
  anc -> 0.0
}`)
    expect([...exactFunctions(p.functions.values())].sort()).toEqual(['ifactorial', 'imul_int'])
  })

  it('writes the uncall that undoes a call from a zero ancilla as `y -= y`', () => {
    const text = user()
    expect(after(text)).toBe(`fact: i32 <- 0
ifactorial(fact, n)
out += z / f64(fact)
fact -= fact
fact -> 0`)
    // (the function itself unchanged)
    const p = program(text)
    expect(body(p.functions.get('f')!)).toContain('~ifactorial(fact, n)')
  })

  it('also where the uncall comes first (the inverse of such a function)', () => {
    expect(after(user({ call: '~ifactorial(fact, n)', uncall: 'ifactorial(fact, n)' }))).toContain('fact -= fact')
  })

  it('leaves an ancilla that does not start at zero', () => {
    expect(after(user({ init: '1' }))).toContain('~ifactorial(fact, n)')
  })

  it('leaves an uncall whose arguments changed in between, or differ', () => {
    expect(after(user({ between: '\n  n += 1' }))).toContain('~ifactorial(fact, n)')
    expect(after(user({ between: '\n  fact += 1' }))).toContain('~ifactorial(fact, n)')
    expect(after(user({ uncall: '~ifactorial(fact, n + 1)' }))).toContain('~ifactorial(fact, n + 1)')
  })

  it('leaves a call and its uncall inside `@unchecked` (the argument rests on the call’s checks)', () => {
    const text = `${factorial}
fn f(out: f64, n: i32) {
  @unchecked {
    fact: i32 <- 0
    ifactorial(fact, n)
    out += f64(fact)
    ~ifactorial(fact, n)
    fact -> 0
  }
}`
    expect(after(text)).toContain('~ifactorial(fact, n)')
  })

  it('leaves a call that reads an array element (another name for its memory could change it)', () => {
    const text = `${factorial}
fn f(out: f64, ns: i32[]) {
  fact: i32 <- 0
  ifactorial(fact, ns[0])
  out += f64(fact)
  ~ifactorial(fact, ns[0])
  fact -> 0
}`
    expect(after(text)).toContain('~ifactorial(fact, ns[0])')
  })

  it('leaves an uncall of a function that is not exact (float arithmetic, unchecked, host effect)', () => {
    const float = `
fn g(y: i32, x: f64) {
  t <- 0.0
  t += x * 2.0
  y += i32(t)
  t -= x * 2.0
  t -> 0.0
}
fn f(out: f64, x: f64) {
  y: i32 <- 0
  g(y, x)
  out += f64(y)
  ~g(y, x)
  y -> 0
}`
    expect(after(float)).toContain('~g(y, x)')
    const unchecked = `
fn g(y: i32, n: i32) {
  @unchecked { y += n }
}
fn f(out: f64, n: i32) {
  y: i32 <- 0
  g(y, n)
  out += f64(y)
  ~g(y, n)
  y -> 0
}`
    expect(after(unchecked)).toContain('~g(y, n)')
    for (const text of [float, unchecked]) expect(exactFunctions(program(text).functions.values()).has('g')).toBe(false)
  })

  it('counts as written only the arguments of parameters a callee writes', () => {
    // (h reads n and writes only m: n passed to it is unchanged, so the uncall still undoes the call)
    const text = `${factorial}
fn h(m: i32, n: i32) { m += n }
fn f(out: f64, n: i32) {
  fact: i32 <- 0
  m: i32 <- 0
  ifactorial(fact, n)
  h(m, n)
  out += f64(fact + m)
  ~h(m, n)
  ~ifactorial(fact, n)
  m -> 0
  fact -> 0
}`
    const a = after(text)
    expect(a).toContain('fact -= fact')
    expect(a).toContain('m -= m')
  })
})
