import { describe, expect, it } from 'vitest'
import { rev, TenetStaticError } from './index.js'

describe.each(['cpu', 'interpreter'])('interpolated host values (%s backend)', (backend) => {
  const tag = rev.with({ backend })

  it('a number becomes a constant (integers where an i32 is expected)', () => {
    const c = 2.5,
      n = 3
    const m = tag`fn f(y: f64, k: i32) { y += ${c} * f64(k + ${n}) }`
    expect(m.f!(1, 1)).toEqual([11, 1])
    expect(m.f!.inverse(11, 1)).toEqual([1, 1])
  })

  it('a Tenet function from another template is a callee, called and uncalled', () => {
    const lib = tag`fn square_into(y: f64, x: f64) { y += x * x }`
    const m = tag`
      fn f(a: f64, b: f64) {
        ${lib.square_into}(a, b)
        ~${lib.square_into}(b, a)
      }`
    const [a, b] = m.f!(1, 3) as number[]
    expect(a).toBe(10)
    expect(b).toBe(3 - 100)
    expect(m.f!.inverse(a, b)).toEqual([1, 3])
  })

  it('an interpolated inverse runs backwards, and uncalled forwards', () => {
    const lib = tag`fn inc(y: f64) { y += 1.0 }`
    const m = tag`fn f(y: f64, z: f64) { ${lib.inc.inverse}(y); ~${lib.inc.inverse}(z) }`
    expect(m.f!(0, 0)).toEqual([-1, 1])
    expect(m.f!.inverse(-1, 1)).toEqual([0, 0])
  })

  it('a plain JS function is a pure host function in expressions and in @safe', () => {
    const seen: number[] = []
    const log = (v: number) => {
      seen.push(v)
    }
    const m = tag`
      fn f(y: f64, x: f64) {
        y += ${Math.hypot}(x, 4.0)
        @safe ${log}(y)
      }`
    expect(m.f!(0, 3)).toEqual([5, 3])
    expect(m.f!.inverse(5, 3)).toEqual([0, 3])
    expect(seen).toEqual([5, 5]) // @safe runs in both directions (the inverse logs before it subtracts)
  })

  it('a value that is neither is a static error with its location', () => {
    const obj = { a: 1 }
    expect(() => tag`fn f(y: f64) { y += ${obj} }`).toThrow(TenetStaticError)
    expect(() => tag`fn f(y: f64) { ${Math.sin}(y) }`).toThrow(/not a Tenet function/)
  })
})
