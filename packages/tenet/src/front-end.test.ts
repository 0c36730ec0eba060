/**
 * The `rev` tag reads the template as written (issue 19): escapes JavaScript rejects in a
 * comment (`\u`, `\x`) do not break it.
 */
import { describe, expect, it } from 'vitest'
import { rev, TenetSyntaxError } from './index.js'

describe('the rev tag', () => {
  it('compiles a template whose comments hold \\u and \\x (the cooked strings are undefined there)', () => {
    const m = rev`
      // C:\users\xavier: not an escape of JavaScript's
      fn f(y: f64, x: f64) {
        /* \unicode \x */ y += x * 2.0 // trailing \u
      }`
    expect(m.f!(1, 3)).toEqual([7, 3])
  })

  it('keeps interpolations between raw parts', () => {
    const k = 4
    const m = rev`fn f(y: f64) { y += ${k} } // \u`
    expect(m.f!(1)).toEqual([5])
  })

  it('gives a syntax error with a location for a backslash in code', () => {
    let err: unknown
    try {
      rev`fn f(y: f64) {\n  y += \u0031\n}`
    } catch (e) {
      err = e
    }
    expect(TenetSyntaxError.isInstance(err)).toBe(true)
    expect((err as TenetSyntaxError).line).toBe(1)
  })
})
