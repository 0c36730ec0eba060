/**
 * `inlineSmallCalls` with run-time checks on (their asserts placed afterwards): an element argument
 * is read into an ancilla freed unchecked before the inlined body, in argument order, so that
 * `insert-checks` checks its bounds where the reference interpreter checks the call's arguments;
 * left out where the body itself accesses the element arguments first, in argument order. With
 * checks off the inliner adds nothing (the backends' tests compare the compiled programs with the
 * interpreter, `inlined-argument-bounds.test.ts` of the cpu and wasm backends).
 */
import { describe, expect, it } from 'vitest'
import { check, createRegistry, parse, printFunction } from './index.js'
import { inlineSmallCalls } from './inline.js'

const registry = createRegistry()
const program = check(
  parse(
    `fn g(y: f64, x: f64) { x += 1.0 }
fn k(y: f64, x: f64) { t <- x; y += t; t -> x }
fn m(x: f64, y: f64) { x += y * 2.0 }
fn useG(y: f64[], x: f64[], n: i32) { for i in 0..n { g(y[i], x[i]) } }
fn useK(y: f64[], x: f64[], n: i32) { for i in 0..n { k(y[i], x[i + 1]) } }
fn useM(y: f64[], x: f64[], n: i32) { for i in 0..n { m(y[i], x[i]) } }
fn q(x: f64, y: f64, p: f64[]) { x += p[0] * y }
fn useQ(y: f64[], x: f64[], p: f64[], n: i32) { for i in 0..n { q(y[i], x[i], p) } }`,
    [],
  ).functions,
  [],
  registry,
)
const printed = (checks: boolean, name: string) =>
  printFunction(inlineSmallCalls(program, new Map(), checks).program.functions.get(name)!)

describe('inlineSmallCalls with checks on', () => {
  it('reads an element argument the body never reads before the body, freed unchecked', () => {
    expect(printed(false, 'useG')).toBe(`fn useG(y: f64[], x: f64[], n: i32) {
  for i in 0..n {
    x[i] += 1.0
  }
}`)
    expect(printed(true, 'useG')).toBe(`fn useG(y: f64[], x: f64[], n: i32) {
  for i in 0..n {
    $inl0$chk0: f64 <- y[i]
    @unchecked {
      $inl0$chk0 -> y[i]
    }
    $inl0$chk1: f64 <- x[i]
    @unchecked {
      $inl0$chk1 -> x[i]
    }
    x[i] += 1.0
  }
}`)
  })

  it('reads the element arguments where the body accesses them in another order', () => {
    expect(printed(true, 'useK')).toBe(`fn useK(y: f64[], x: f64[], n: i32) {
  for i in 0..n {
    $inl1$chk0: f64 <- y[i]
    @unchecked {
      $inl1$chk0 -> y[i]
    }
    $inl1$chk1: f64 <- x[i + 1]
    @unchecked {
      $inl1$chk1 -> x[i + 1]
    }
    $inl1$t <- x[i + 1]
    y[i] += $inl1$t
    $inl1$t -> x[i + 1]
  }
}`)
  })

  it('adds nothing where the body accesses the element arguments first, in argument order', () => {
    // (\`y[i] += x[i] * 2.0\`: the target's bounds are checked before the value's)
    expect(printed(true, 'useM')).toBe(printed(false, 'useM'))
    expect(printed(true, 'useM')).toBe(`fn useM(y: f64[], x: f64[], n: i32) {
  for i in 0..n {
    y[i] += x[i] * 2.0
  }
}`)
  })

  it("adds nothing where the callee's own array is accessed between the arguments, in argument order", () => {
    // (where p and x are both out of range, p's error may come first: the order of two
    // independent failing checks, as passes \`interchange\` and \`pair-series\` may change it)
    expect(printed(true, 'useQ')).toBe(printed(false, 'useQ'))
    expect(printed(true, 'useQ')).toBe(`fn useQ(y: f64[], x: f64[], p: f64[], n: i32) {
  for i in 0..n {
    y[i] += p[0] * x[i]
  }
}`)
  })
})
