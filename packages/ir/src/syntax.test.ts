import { describe, expect, it } from 'vitest'
import { build as b, parse, printFunction, printModule, TenetSyntaxError } from './index.js'

const strip = (x: unknown): unknown => JSON.parse(JSON.stringify(x, (k, v) => (k === 'loc' ? undefined : v)))

describe('parser and printer', () => {
  const src = `
fn everything(y: f64, x: f64[], n: i32, s: stack<f64>, flag: bool) {
  y += x[0] * x[1] + sin(y2) ** 2 - -3.5 / (1 + n)
  y -= exp(-x[n - 1])
  n ^= 3 & 5 | 6
  SWAP(x[0], x[1]); x[2] <-> x[3]
  ~f(y, x[n])
  ~{
    NEG(y)
  }
  a <- 0.0
  b: i32 <- 0
  a -> 0.0
  b → 0
  c ← 1.0
  c -> 1.0
  if (n > 0 && !flag, ~) { INC(n) } else if (n < -1, n < -1) { DEC(n) }
  while (n < 10, n > 0) { INC(n) }
  for i in 0..n by 2 { y += f64(i) }
  for i in n - 1..=0 by -1 { y += f64(i) }
  for i in reverse 0..n { y += 1.0 }
  routine { t <- 0.0 }
  ~routine
  push(s, y)
  pop(s, y)
  @safe ${'${0}'}(y)
  @unchecked { x[0] += x[1] }
}`
  it('parses every statement form, and printing then parsing again gives the same tree', () => {
    const m = parse(src, [() => 0])
    const printed = printModule(m)
    const again = parse(printed, [() => 0])
    expect(strip(again)).toEqual(strip(m))
    expect(printModule(again)).toBe(printed)
  })

  it('keeps line and column of every statement', () => {
    const m = parse('fn f(y: f64, x: f64) {\n  y += x\n  y -= x * 2.0\n}')
    const body = m.functions[0]!.body
    expect(body[0]!.loc).toMatchObject({ line: 2 })
    expect(body[1]!.loc).toMatchObject({ line: 3 })
  })

  it('continues an expression after a trailing operator, and ends statements at line breaks', () => {
    const m = parse('fn f(y: bool, a: i32, b: i32) {\n  y ^= a == b ||\n    a > b\n}')
    expect(m.functions[0]!.body).toHaveLength(1)
  })

  it('prints the fewest parentheses that keep the meaning', () => {
    const m = parse('fn f(y: f64, a: f64, b: f64) { y += (a - (b - a)) * -(a + b) ** 2 }')
    expect(printFunction(m.functions[0]!)).toContain('y += (a - (b - a)) * -(a + b) ** 2')
  })

  it('a syntax error names the line, the column and what was expected', () => {
    try {
      parse('fn f(y: f64) {\n  y += \n}')
      expect.unreachable()
    } catch (e) {
      expect(TenetSyntaxError.isInstance(e)).toBe(true)
      const err = e as TenetSyntaxError
      expect(err.line).toBe(3)
      expect(err.column).toBe(1)
      expect(err.message).toContain('expected an expression')
      expect(err.message).toContain('^')
    }
    expect(() => parse('fn f(y: f64) { y += 1 ')).toThrow(/expected `}` to close the block/)
    expect(() => parse('fn f(y: f64) { for i 0..3 { } }')).toThrow(/expected `in` after the loop variable/)
    expect(() => parse('fn f(y f64) { }')).toThrow(/expected `,` or `\)` after a parameter/)
  })
})

describe('builder API', () => {
  it('builds the same IR as the text syntax', () => {
    const fromText = parse(`fn f(y: f64, x: f64[], n: i32) {
  routine {
    t <- 0.0
    t += x[0] * x[0]
  }
  for i in 0..n by 2 {
    y += sin(t) + f64(i)
  }
  ~routine
  if (n > 0, ~) {
    SWAP(x[0], x[1])
  }
}`)
    const built = b.fn(
      'f',
      [b.param('y'), b.param('x', 'f64[]'), b.param('n', 'i32')],
      [
        b.routine([b.alloc('t', b.f(0)), b.plusEq(b.v('t'), b.mul(b.at('x', 0), b.at('x', 0)))]),
        b.for_('i', 0, b.v('n'), [b.plusEq(b.v('y'), b.add(b.call('sin', b.v('t')), b.call('f64', b.v('i'))))], {
          step: 2,
        }),
        b.unroutine(),
        b.if_(b.gt(b.v('n'), 0), undefined, [b.swap(b.at('x', 0), b.at('x', 1))]),
      ],
    )
    expect(printFunction(built)).toBe(printFunction(fromText.functions[0]!))
    expect(strip(built)).toEqual(strip(fromText.functions[0]))
  })
})

describe('the forms of issue 20', () => {
  const src = `
fn forms(y: f64, x: f64[], z: f64[], s: stack<f64>) {
  routine { y += x[0] } ~routine
  for i in 0..3 { y += x[i] } if (y > 3, ~) { y -= 1.0 }
  m, n <- 2, 4
  m, n -> 2, 4
  for v in x { y += v }
  for v in reverse x { y -= v }
  z[..] += 2.0 * x[..]
  SWAP(z[..], x[..])
  y += top(s)
  y *= 2.0
  y /= 2.0
}`
  it('parse, print and parse again to the same tree', () => {
    const m = parse(src)
    const printed = printModule(m)
    expect(printed).toContain('for v in x {')
    expect(printed).toContain('for v in reverse x {')
    expect(printed).toContain('z[..] += 2.0 * x[..]')
    const again = parse(printed)
    expect(strip(again)).toEqual(strip(m))
  })
  it('`m, n <- 2, 4` is one allocation per name, in order', () => {
    const body = parse('fn f() { m, n <- 2, 4; m, n -> 2, 4 }').functions[0]!.body
    expect(body.map((s) => `${s.kind} ${(s as { name: string }).name}`)).toEqual([
      'alloc m',
      'alloc n',
      'dealloc m',
      'dealloc n',
    ])
  })
  it('malformed forms are syntax errors with a location', () => {
    expect(() => parse('fn f() { m, n <- 2 }')).toThrow(/2 names but 1 value/)
    expect(() => parse('fn f() { m, x[0] <- 2, 3 }')).toThrow(TenetSyntaxError)
    expect(() => parse('fn f(x: f64[]) { for v in x y += v }')).toThrow(/`\.\.` or `\.\.=` in the loop range/)
    expect(() => parse('fn f(x: f64[]) { x[..1] += 1.0 }')).toThrow(TenetSyntaxError)
  })
})
