/**
 * Which array elements the checker proves different (no run-time alias check) or the same (a
 * static error): indices are compared as integer sums of terms plus a constant.
 */
import { describe, expect, it } from 'vitest'
import { check, createRegistry, parse, TenetStaticError, type Stmt } from './index.js'

const first = (text: string): Stmt & { distinct?: unknown[] } => {
  const m = parse(text)
  return check(m.functions, m.hosts, createRegistry()).functions.get('f')!.body[0] as Stmt & { distinct?: unknown[] }
}

describe('element overlap of two indices', () => {
  it('proves i + 1 + m·l and i + m·l different wherever the constant sits in the sum', () => {
    expect(
      first('fn f(x: f64[], i: i32, m: i32, l: i32) { SWAP(x[i + 1 + m * l], x[i + m * l]) }').distinct,
    ).toBeUndefined()
    expect(
      first('fn f(x: f64[], i: i32, m: i32, l: i32) { x[m * l + i - 2] += x[i + m * l] }').distinct,
    ).toBeUndefined()
    expect(first('fn f(x: f64[], i: i32, j: i32) { x[i + 1] += x[j] }').distinct).toHaveLength(1)
    expect(first('fn f(x: f64[], i: i32, j: i32) { x[i - j] += x[j - i] }').distinct).toHaveLength(1)
  })

  it('finds the same element written two ways (a static error)', () => {
    expect(() => first('fn f(x: f64[], i: i32, j: i32) { SWAP(x[i + 1 + j], x[j + (i + 1)]) }')).toThrow(
      TenetStaticError,
    )
    expect(() => first('fn f(x: f64[], i: i32, j: i32) { x[i - j + j] += x[i] }')).toThrow(TenetStaticError)
  })
})
