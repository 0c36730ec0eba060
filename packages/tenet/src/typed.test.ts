import { describe, expect, it } from 'vitest'
import { gradient, rev, TenetStaticError } from './index.js'

describe('rev.typed', () => {
  it('compiles the source like the tag and runs forwards, backwards and under AD', () => {
    const m = rev.typed('fn f(y: f64, x: f64[]) { for i in 0..len(x) { y += x[i] * x[i] } }')
    const [y, x] = m.f(1, new Float64Array([1, 2]))
    expect(y).toBe(6)
    expect(Array.from(x)).toEqual([1, 2])
    expect(m.f.inverse(6, x)[0]).toBe(1)
    expect(Array.from(gradient(m.f, [0, new Float64Array([1, 2])], { loss: 0 })[1] as Float64Array)).toEqual([2, 4])
  })

  it('reports errors as the tag does, and takes the tag options', () => {
    expect(() => rev.typed('fn f(y: f64) { y += y }')).toThrow(TenetStaticError)
    const m = rev.with({ backend: 'interpreter' }).typed('fn f(a: i32, b: i32) { a += b }')
    expect(m.f(1, 2)).toEqual([3, 2])
  })
})
