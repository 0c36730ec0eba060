/**
 * Review 19 (d): pass `finite-uncompute` (merged from `rk4fwd`) takes an update of `a[w]` between a
 * compute `y += e` and its uncompute for no write of what `e` reads when every element `e` reads
 * from `a` is a nonzero constant away from w, as polynomials (`polynomial`, `constantDifference`).
 * The polynomials' coefficients are JS doubles: a coefficient above 2⁵³ is rounded, so two i32
 * indices whose coefficients differ by an odd amount (`t·A³` and `t·A³ + t`, A = 1000003) have
 * one polynomial coefficient, and their difference reads as the constant 1 although the indices
 * are equal for t = −1 (i32 wraps: t·(A³ + 1) − t·A³ = t). The uncompute becomes `a -= a`, and
 * the reference's deallocation error (the element it read was written in between) is lost — on
 * cpu and wasm with checks on, and in the gradient (`@tenet/backend-wasm`'s and `@tenet/ad`'s
 * `review19-d-*` tests). Indices 2³² apart in their constants (exact coefficients) stay unproven.
 */
import { describe, expect, it } from 'vitest'
import { check, createRegistry, type FunctionDef, parse, printStmts } from '../index.js'
import { finiteUncompute } from './index.js'

const fn = (text: string): FunctionDef => check(parse(text).functions, [], createRegistry()).functions.get('f')!
const body = (f: FunctionDef): string => printStmts(f.body, 0)

const K = 't * 1000003 * 1000003 * 1000003'
const step = (write: string, read = `${K} + 583896283`) => `
fn f(out: f64, xs: f64[], t: i32, k: i32) {
  a <- 0.0
  a += xs[${read}] * 2.0
  xs[${write}] += 1.0
  out += a
  a -= xs[${read}] * 2.0
  a -> 0.0
}`
const uncompute = (src: string) => {
  const b = body(finiteUncompute(fn(src)))
  return b.includes('a -= a') ? 'a -= a' : 'a -= e'
}

describe('review19-d: finite-uncompute, elements "a nonzero constant away"', () => {
  it('a coefficient above 2^53 (rounded) makes equal i32 indices look 1 apart: the uncompute must stay', () => {
    // (at t = −1 both indices are 0: t·A³ + 583896283 ≡ 0 and t·A³ + t + 583896284 ≡ 0 mod 2³²)
    const A = 1000003n
    const wrap = (v: bigint) => BigInt.asIntN(32, v)
    expect(wrap(-1n * A ** 3n + 583896283n)).toBe(0n)
    expect(wrap(-1n * A ** 3n - 1n + 583896284n)).toBe(0n)
    expect(uncompute(step(`${K} + t + 583896284`))).toBe('a -= e')
  })

  it('holds: constants 2^32 apart, or 2^32 + 1, are no constant difference (i32 wraps)', () => {
    expect(uncompute(step('t + 65536 * 65536', 't'))).toBe('a -= e')
    expect(uncompute(step('t + 65536 * 65536 + 1', 't'))).toBe('a -= e')
    expect(uncompute(step('t + 2147483647 + 2147483647 + 2', 't'))).toBe('a -= e')
    expect(uncompute(step('t * 65536 * 65536 + t + 1', 't'))).toBe('a -= e')
    // (-2^31 apart: the same element modulo 2^32 only with another 2^31, not proven either)
    expect(uncompute(step('t - 2147483647 - 1', 't'))).toBe('a -= e')
  })

  it('holds: division, modulo, a call, an element or a name of the update not in the read: not proven', () => {
    expect(uncompute(step('i32(f64(t) / 2.0) + 1', 'i32(f64(t) / 2.0)'))).toBe('a -= e')
    expect(uncompute(step('t % 4 + 1', 't % 4'))).toBe('a -= e')
    expect(uncompute(step('t + k', 't'))).toBe('a -= e')
    expect(uncompute(step('t + 1', 'i32(xs[0])'))).toBe('a -= e')
    // (a two-dimensional index: row t + 1 of a k-column matrix is k·t + k away, not constant)
    expect(uncompute(step('(t + 1) * k + 2', 't * k + 2'))).toBe('a -= e')
    expect(uncompute(step('t * k + 3', 't * k + 2'))).toBe('a -= a')
  })
})
