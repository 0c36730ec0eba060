/**
 * The front end under hostile input (issue 19): deep nesting gives a Tenet error with a location
 * and the limit instead of a JavaScript stack overflow, long chains parse and check, locations
 * count code points and carets line up after tabs and emoji, and the printer round-trips −0.
 */
import { describe, expect, it } from 'vitest'
import {
  check,
  createRegistry,
  NESTING_LIMITS,
  parse,
  printFunction,
  TenetError,
  TenetStaticError,
  TenetSyntaxError,
  withStackGuard,
  type Expr,
} from './index.js'
import { sharedSubexpressions, writtenParams, type RunStmt } from './backend.js'

/** The Tenet error `f` throws (fails the test for no error or for a raw JS error). */
function thrown(f: () => unknown): TenetError {
  try {
    f()
  } catch (e) {
    if (!TenetError.isInstance(e)) throw e
    return e
  }
  throw new Error('expected a Tenet error, but none was thrown')
}

const chain = (n: number) =>
  `fn f(y: f64, x: f64[]) {\n  y += x[0]${Array.from({ length: n - 1 }, (_, i) => ` + x[${(i + 1) % 7}]`).join('')}\n}`
const checked = (text: string) => {
  const m = parse(text)
  return check(m.functions, m.hosts, createRegistry())
}

describe('nesting limits', () => {
  it('parses and checks a 3,000-term chain (its length does not deepen the recursion)', () => {
    const p = checked(chain(3000))
    let depth = 0
    for (let e: Expr = (p.functions.get('f')!.body[0] as { value: Expr }).value; e.kind === 'binary'; e = e.left)
      depth++
    expect(depth).toBe(2999)
  })

  it('rejects 600 nested parentheses with a syntax error at the level past the limit', () => {
    const e = thrown(() => parse(`fn f(y: f64, x: f64) { y += ${'('.repeat(600)}x${')'.repeat(600)} }`))
    expect(TenetSyntaxError.isInstance(e)).toBe(true)
    expect(e.code).toBe('syntax/too-deep')
    expect(e.message).toContain(`more than ${NESTING_LIMITS.expression} levels`)
    expect(e.line).toBe(1)
    // the parenthesis that opened level limit + 1
    expect(e.column).toBe('fn f(y: f64, x: f64) { y += '.length + NESTING_LIMITS.expression + 1)
  })

  it('accepts parentheses up to the limit', () => {
    const n = NESTING_LIMITS.expression - 2
    expect(() => checked(`fn f(y: f64, x: f64) { y += ${'('.repeat(n)}x${')'.repeat(n)} }`)).not.toThrow()
  })

  it('rejects 3,000 nested ifs with a syntax error on the line of the block past the limit', () => {
    const text = `fn f(y: f64, x: f64) {\n${'if (x > 0.0, ~) {\n'.repeat(3000)}y += x\n${'}\n'.repeat(3000)}}`
    const e = thrown(() => parse(text))
    expect(e.code).toBe('syntax/too-deep')
    expect(e.message).toContain(`more than ${NESTING_LIMITS.block} levels`)
    // the function body is block 1, the if on line k + 1 opens block k + 1
    expect(e.line).toBe(NESTING_LIMITS.block + 1)
  })

  it('rejects unary operators and exponents nested past the limit', () => {
    expect(thrown(() => parse(`fn f(y: f64, x: f64) { y += ${'-'.repeat(3000)}x }`)).code).toBe('syntax/too-deep')
    expect(thrown(() => parse(`fn f(y: f64, x: f64) { y += x${' ** x'.repeat(3000)} }`)).code).toBe('syntax/too-deep')
  })

  it('turns a JavaScript stack overflow into a Tenet error (code limit/stack), and lets other errors through', () => {
    const recurse = (n: number): number => recurse(n + 1) + 1
    const e = thrown(() => withStackGuard('compiling', () => recurse(0)))
    expect(e.code).toBe('limit/stack')
    expect(e.message).toMatch(/^compiling: the program is nested too deeply/)
    expect(() =>
      withStackGuard('compiling', () => {
        throw new TypeError('other')
      }),
    ).toThrow(TypeError)
    expect(withStackGuard('compiling', () => 42)).toBe(42)
  })

  it('rejects an expression tree deeper than the tree limit', () => {
    const e = thrown(() => parse(chain(NESTING_LIMITS.tree + 2)))
    expect(e.code).toBe('syntax/too-deep')
    expect(e.line).toBe(2)
  })
})

describe('lexer and locations', () => {
  it('reports an unterminated block comment where it starts', () => {
    const e = thrown(() => parse('fn f(y: f64) {\n  y += 1.0 /* open\n  more\n  lines'))
    expect(e.code).toBe('syntax')
    expect([e.line, e.column]).toEqual([2, 12])
    expect(e.message).toContain('2 |   y += 1.0 /* open\n')
  })

  it('counts columns in code points and aligns the caret after tabs and emoji', () => {
    const text = 'fn f(y: f64) {\n\t/* 😀 */ y += 1.0 # 2.0\n}'
    const e = thrown(() => parse(text))
    expect(e.line).toBe(2)
    // tab, `/* `, the emoji (one code point, two UTF-16 units), ` */ y += 1.0 `: column 19
    expect(e.column).toBe(19)
    const lines = e.message.split('\n')
    const k = lines.indexOf('2 | \t/* 😀 */ y += 1.0 # 2.0')
    expect(k).toBeGreaterThan(0)
    // the caret line repeats the tab and gives the emoji two columns
    expect(lines[k + 1]).toBe(' '.repeat(4) + '\t' + ' '.repeat(3) + ' '.repeat(2) + ' '.repeat(13) + '^')
  })

  it('gives syntax errors with a location for bad escapes in strings, never a raw JSON error', () => {
    for (const [src, col] of [
      ['"\\q"', 8],
      ['"\\x4"', 8],
      ['"\\u12"', 8],
      ["'\\u{110000}'", 8],
    ] as const) {
      const e = thrown(() => parse(`fn f() { ${src} }`))
      expect(TenetSyntaxError.isInstance(e)).toBe(true)
      expect([e.line, e.column]).toEqual([1, col + 3])
    }
    // valid escapes still lex (the parser then rejects the string where a statement is expected)
    expect(thrown(() => parse(`fn f() { "a\\n\\x41\\u0042\\u{1F600}\\'" }`)).message).toContain('expected a statement')
  })

  it('keeps the source text out of the nodes: a serialised tree is linear in the source', () => {
    const text = chain(2000)
    const json = JSON.stringify(parse(text).functions)
    expect(json).not.toContain('fn f(')
    expect(json.length).toBeLessThan(200 * text.length)
    // and the location still reaches the text for excerpts
    const stmt = parse(text).functions[0]!.body[0]!
    expect(stmt.loc!.source!.text).toBe(text)
  })
})

describe('names and literals', () => {
  it('rejects reserved words as parameter, function, ancilla and loop-variable names', () => {
    for (const text of [
      'fn f(true: f64) { }',
      'fn f(y: f64, false: f64) { }',
      'fn if(y: f64) { }',
      'fn f(y: f64) { true: f64 <- 0.0 }',
      'fn f(y: f64) { for in in 0..3 { } }',
      'fn f(y: f64) { in <- 0.0 }',
    ]) {
      const e = thrown(() => parse(text))
      expect(e.code, text).toBe('syntax/reserved')
      expect(e.line).toBe(1)
    }
  })

  it('rejects i32 literals out of range with the literal location, and accepts the extremes', () => {
    const e = thrown(() => checked('fn f(n: i32) {\n  n += 2147483648\n}'))
    expect(TenetStaticError.isInstance(e)).toBe(true)
    expect(e.code).toBe('static/literal-range')
    expect([e.line, e.column]).toEqual([2, 8])
    expect(thrown(() => checked('fn f(n: i32) { n ^= -2147483649 }')).code).toBe('static/literal-range')
    expect(() => checked('fn f(n: i32) { n += 2147483647; n -= -2147483648 }')).not.toThrow()
  })

  it('does not take Object.prototype members for fields', () => {
    const e = thrown(() => checked('fn f(y: f64, x: f64) { y += x.constructor }'))
    expect(e.code).toBe('static/unknown-field')
  })

  it('prints −0.0 as -0.0, so that printing then parsing keeps the sign', () => {
    const f = parse('fn f(y: f64) { y += -0.0 * y2 }').functions[0]!
    const printed = printFunction(f)
    expect(printed).toContain('-0.0')
    const again = parse(printed).functions[0]!
    const lit = ((again.body[0] as { value: Expr }).value as { left: Expr }).left as { value: number }
    expect(Object.is(lit.value, -0)).toBe(true)
  })
})

describe('written parameters', () => {
  it('carries writes through a long chain of calls in either order of definition', () => {
    const n = 2000
    const fns = Array.from({ length: n }, (_, i) =>
      i === n - 1 ? `fn f${i}(a: f64, b: f64) { a += b }` : `fn f${i}(a: f64, b: f64) { f${i + 1}(a, b) }`,
    )
    for (const order of [fns, [...fns].reverse()]) {
      const m = parse(order.join('\n'))
      const writes = writtenParams(new Map(m.functions.map((f) => [f.name, f])), createRegistry())
      for (let i = 0; i < n; i++) expect(writes.get(`f${i}`), `f${i}`).toEqual([true, false])
    }
  })
})

describe('common subexpressions', () => {
  it('tells -0.0 from 0.0, and retires a value when a name it reads is written', () => {
    const p = checked(
      'fn f(y: f64, z: f64, w: f64, x: f64) {\n  y += x * 0.0\n  z += x * -0.0\n  w += x * 0.0\n  x += 1.0\n  y += x * 0.0\n}',
    )
    const run = p.functions.get('f')!.body as RunStmt[]
    const shared = sharedSubexpressions(run)
    const value = (k: number) => (run[k] as { value: Expr }).value
    expect(shared[0]!.get(value(0))).toBeDefined()
    expect(shared[0]!.get(value(0))).toBe(shared[2]!.get(value(2)))
    expect(shared[1]!.size).toBe(0)
    expect(shared[4]!.size).toBe(0)
  })
})
