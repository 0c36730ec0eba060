import { describe, expect, it } from 'vitest'
import { createRegistry, parse, printFunction, TenetStaticError } from '@tenet/ir'
import { compileModule, interpreterBackend, invert, preprocess } from './index.js'

const registry = createRegistry().registerBackend(interpreterBackend)
const fn = (src: string) => parse(src).functions[0]!

describe('preprocess and invert', () => {
  it('expands routine / ~routine into compute, copy, uncompute', () => {
    const f = preprocess(
      fn(`fn f(y: f64, x: f64) {
  routine {
    t <- 0.0
    t += x * 2.0
  }
  y += t
  ~routine
}`),
    )
    expect(printFunction(f)).toBe(`fn f(y: f64, x: f64) {
  t <- 0.0
  t += x * 2.0
  y += t
  t -= x * 2.0
  t -> 0.0
}`)
  })

  it('inverts every statement kind (Table "Basic statements")', () => {
    const f = fn(`fn f(y: f64, x: f64, n: i32, s: stack<f64>) {
  y += x
  n ^= 3
  SWAP(y, x)
  g(y, x)
  if (n > 0, n > 1) { INC(n) } else { DEC(n) }
  while (n < 3, n > 0) { INC(n) }
  for i in 0..n by 2 { y += f64(i) }
  push(s, y)
  t <- 1.0
  t -> 1.0
}`)
    expect(printFunction(invert(f))).toBe(`fn f(y: f64, x: f64, n: i32, s: stack<f64>) {
  t <- 1.0
  t -> 1.0
  pop(s, y)
  for i in reverse 0..n by 2 {
    y -= f64(i)
  }
  while (n > 0, n < 3) {
    ~INC(n)
  }
  if (n > 1, n > 0) {
    ~INC(n)
  } else {
    ~DEC(n)
  }
  ~g(y, x)
  ~SWAP(y, x)
  n ^= 3
  y -= x
}`)
    expect(printFunction(invert(invert(f)))).toBe(printFunction(f))
  })

  it('rejects unpaired routines with the location', () => {
    expect(() => preprocess(fn('fn f(y: f64) {\n  routine { y += 1.0 }\n}'))).toThrow(TenetStaticError)
    expect(() => preprocess(fn('fn f(y: f64) {\n  ~routine\n}'))).toThrow(/no matching `routine \{ \.\.\. \}`/)
  })
})

describe('interpreter', () => {
  it('runs forwards and backwards with every check', () => {
    const m = compileModule(
      parse(`fn f(y: f64, x: f64[], n: i32) {
  for i in n - 1..=0 by -1 { y += x[i] * f64(i) }
  if (y > 0.0, y < 0.0) { NEG(y) }
}`),
      { registry },
    )
    const x = new Float64Array([1, 2, 3])
    const [y] = m.f!(0.5, x, 3) as number[]
    expect(y).toBe(-(0.5 + 2 + 6))
    expect(m.f!.inverse(y, x, 3)[0]).toBe(0.5)
  })
})
