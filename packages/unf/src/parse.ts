/**
 * The text syntax of the source language: a program is `(params) => expression`.
 *
 *   (A: R[], B: R[]) => sum(map2((a, b) => a * b, A, B))
 *   (x: R, y: R) => let w = x * y in if w > 0 then log(1 + w) else w
 *
 * Expressions: numbers, variables, `+ - * /`, unary `-`, comparisons, `and`/`or`/`not`,
 * `let x = e in e`, `if e then e else e`, tuples `(e, e)` and projections `p.1`, calls of
 * operations (`exp(x)`) and of the array constructs, whose function argument is a lambda:
 * `map(f, A…)`, `map2(f, A, B)`, `reduce(f, unit, A)`, `fold(f, init, A)`, `scanl(f, init, A)`,
 * `scanr(f, init, A)`, `shift1L(A)`, `shift1R(A)`, `prefix(A, L)`, and the library `sum`, `prod`, `dot`,
 * `logsumexp`. Types: `R`, `B`, `R[]`, `R[][]`, tuples `(R, R[])`.
 */
import { TenetSyntaxError, type SourceLocation, type SourceText } from '@tenet/ir'
import { dot, logsumexp, prod, sum, type Term } from './term.js'
import { arrayType, B, R, tupleType, type Type } from './types.js'

interface Token {
  kind: 'num' | 'name' | 'sym' | 'end'
  text: string
  offset: number
}

const SYMBOLS = [
  '=>',
  '<=',
  '>=',
  '==',
  '!=',
  '&&',
  '||',
  '(',
  ')',
  '[',
  ']',
  ',',
  ':',
  '+',
  '-',
  '*',
  '/',
  '<',
  '>',
  '=',
  '.',
]
const KEYWORDS = new Set(['let', 'in', 'if', 'then', 'else', 'and', 'or', 'not', 'true', 'false'])

function lex(text: string, source: SourceText): Token[] {
  const out: Token[] = []
  let i = 0
  while (i < text.length) {
    const ch = text[i]!
    if (/\s/.test(ch)) {
      i++
      continue
    }
    if (ch === '/' && text[i + 1] === '/') {
      while (i < text.length && text[i] !== '\n') i++
      continue
    }
    const num = /^(\d+\.?\d*(e[+-]?\d+)?|\.\d+(e[+-]?\d+)?)/i.exec(text.slice(i))
    if (num && !(ch === '.' && out.length > 0 && out[out.length - 1]!.kind !== 'sym')) {
      out.push({ kind: 'num', text: num[0], offset: i })
      i += num[0].length
      continue
    }
    const name = /^[A-Za-z_][A-Za-z0-9_']*/.exec(text.slice(i))
    if (name) {
      out.push({ kind: 'name', text: name[0], offset: i })
      i += name[0].length
      continue
    }
    const sym = SYMBOLS.find((s) => text.startsWith(s, i))
    if (sym) {
      out.push({ kind: 'sym', text: sym, offset: i })
      i += sym.length
      continue
    }
    throw new TenetSyntaxError('unf/syntax', `unexpected character \`${ch}\``, locate(source, i))
  }
  out.push({ kind: 'end', text: '', offset: text.length })
  return out
}

function locate(source: SourceText, offset: number): SourceLocation {
  const before = source.text.slice(0, offset)
  const line = before.split('\n').length
  return { line, column: offset - before.lastIndexOf('\n'), offset, source }
}

/** A parsed program: typed parameters and a body. */
export interface ParsedProgram {
  params: Array<[string, Type]>
  body: Term
}

/** Parses a program `(x: R, A: R[]) => body`. Syntax errors name the line and column. */
export function parseProgram(text: string): ParsedProgram {
  const p = new Parser(text)
  const params = p.params()
  p.expect('=>')
  const body = p.expr()
  p.expect('')
  return { params, body }
}

/** Parses an expression alone (its free variables are those of the enclosing program). */
export function parseTerm(text: string): Term {
  const p = new Parser(text)
  const e = p.expr()
  p.expect('')
  return e
}

class Parser {
  private readonly toks: Token[]
  private pos = 0
  private readonly source: SourceText
  constructor(text: string) {
    this.source = { text, name: 'unf program' }
    this.toks = lex(text, this.source)
  }

  private peek(k = 0): Token {
    return this.toks[Math.min(this.pos + k, this.toks.length - 1)]!
  }
  private next(): Token {
    return this.toks[this.pos++]!
  }
  private is(text: string, k = 0): boolean {
    const t = this.peek(k)
    return (t.kind === 'sym' || t.kind === 'name') && t.text === text
  }
  private fail(msg: string, t = this.peek()): never {
    throw new TenetSyntaxError('unf/syntax', msg, locate(this.source, t.offset))
  }
  expect(text: string): Token {
    const t = this.peek()
    if (text === '' ? t.kind !== 'end' : !this.is(text))
      this.fail(
        text === ''
          ? `unexpected \`${t.text}\` after the end of the expression`
          : `expected \`${text}\`, found \`${t.text || 'end of input'}\``,
      )
    return this.next()
  }
  private name(): string {
    const t = this.peek()
    if (t.kind !== 'name' || KEYWORDS.has(t.text)) this.fail(`expected a name, found \`${t.text || 'end of input'}\``)
    return this.next().text
  }

  params(): Array<[string, Type]> {
    this.expect('(')
    const out: Array<[string, Type]> = []
    while (!this.is(')')) {
      const n = this.name()
      this.expect(':')
      out.push([n, this.type()])
      if (!this.is(')')) this.expect(',')
    }
    this.expect(')')
    return out
  }

  private type(): Type {
    let t: Type
    if (this.is('(')) {
      this.next()
      const items = [this.type()]
      while (this.is(',')) {
        this.next()
        items.push(this.type())
      }
      this.expect(')')
      t = tupleType(...items)
    } else {
      const n = this.name()
      if (n === 'R') t = R
      else if (n === 'B') t = B
      else this.fail(`unknown type \`${n}\` (types: R, B, arrays T[], tuples (T, T))`, this.toks[this.pos - 1])
    }
    while (this.is('[')) {
      this.next()
      this.expect(']')
      t = arrayType(t!)
    }
    return t!
  }

  expr(): Term {
    if (this.is('let')) {
      this.next()
      const name = this.name()
      this.expect('=')
      const value = this.expr()
      this.expect('in')
      return { k: 'let', name, value, body: this.expr() }
    }
    if (this.is('if')) {
      this.next()
      const cond = this.expr()
      this.expect('then')
      const then = this.expr()
      this.expect('else')
      return { k: 'if', cond, then, else: this.expr() }
    }
    return this.binary(0)
  }

  private static readonly LEVELS: string[][] = [
    ['or', '||'],
    ['and', '&&'],
    ['<', '<=', '>', '>=', '==', '!='],
    ['+', '-'],
    ['*', '/'],
  ]

  private binary(level: number): Term {
    if (level >= Parser.LEVELS.length) return this.unary()
    let left = this.binary(level + 1)
    for (;;) {
      const op = Parser.LEVELS[level]!.find((o) => this.is(o))
      if (!op) return left
      this.next()
      const right = this.binary(level + 1)
      const name = op === '||' ? 'or' : op === '&&' ? 'and' : op
      left = { k: 'op', op: name, args: [left, right] }
      if (level === 2) return left // comparisons do not chain
    }
  }

  private unary(): Term {
    if (this.is('-')) {
      this.next()
      const a = this.unary()
      return a.k === 'const' ? { k: 'const', value: -a.value } : { k: 'op', op: 'neg', args: [a] }
    }
    if (this.is('not')) {
      this.next()
      return { k: 'op', op: 'not', args: [this.unary()] }
    }
    let e = this.atom()
    while (this.is('.')) {
      this.next()
      const t = this.next()
      if (t.kind !== 'num' || !/^\d+$/.test(t.text) || Number(t.text) < 1)
        this.fail('expected a component number after `.` (1-based)', t)
      e = { k: 'proj', index: Number(t.text) - 1, of: e }
    }
    return e
  }

  private atom(): Term {
    const t = this.peek()
    if (t.kind === 'num') {
      this.next()
      return { k: 'const', value: Number(t.text) }
    }
    if (this.is('true') || this.is('false')) {
      this.next()
      return { k: 'bool', value: t.text === 'true' }
    }
    if (this.is('(')) {
      this.next()
      const items = [this.expr()]
      while (this.is(',')) {
        this.next()
        items.push(this.expr())
      }
      this.expect(')')
      return items.length === 1 ? items[0]! : { k: 'tuple', items }
    }
    const name = this.name()
    if (!this.is('(')) return { k: 'var', name }
    this.next()
    const args: Array<Term | Lambda> = []
    while (!this.is(')')) {
      args.push(this.lambdaOrExpr())
      if (!this.is(')')) this.expect(',')
    }
    this.expect(')')
    return this.call(name, args, t)
  }

  private lambdaOrExpr(): Term | Lambda {
    // `x => e` or `(x, y) => e`
    if (this.peek().kind === 'name' && this.is('=>', 1)) {
      const p = this.name()
      this.next()
      return { lambda: true, params: [p], body: this.expr() }
    }
    if (this.is('(')) {
      let k = 1
      while (this.peek(k).kind === 'name' && (this.is(',', k + 1) || this.is(')', k + 1))) {
        if (this.is(')', k + 1)) {
          k += 2
          break
        }
        k += 2
      }
      if (this.is('=>', k) && this.is(')', k - 1)) {
        this.next()
        const params: string[] = []
        while (!this.is(')')) {
          params.push(this.name())
          if (!this.is(')')) this.expect(',')
        }
        this.expect(')')
        this.expect('=>')
        return { lambda: true, params, body: this.expr() }
      }
    }
    return this.expr()
  }

  private call(name: string, args: Array<Term | Lambda>, at: Token): Term {
    const lam = (a: Term | Lambda | undefined, arity: number): Lambda => {
      if (!a || !('lambda' in a) || a.params.length !== arity)
        this.fail(
          `\`${name}\` takes a function of ${arity} parameter${arity === 1 ? '' : 's'} as its first argument`,
          at,
        )
      return a as Lambda
    }
    const term = (a: Term | Lambda | undefined): Term => {
      if (!a || 'lambda' in a) this.fail(`\`${name}\`: expected an expression, found a function`, at)
      return a as Term
    }
    const count = (n: number) => {
      if (args.length !== n) this.fail(`\`${name}\` takes ${n} arguments, got ${args.length}`, at)
    }
    switch (name) {
      case 'map':
      case 'map2': {
        const arrays = args.slice(1).map(term)
        if (name === 'map2') count(3)
        if (arrays.length === 0) this.fail('`map` needs at least one array', at)
        const f = lam(args[0], arrays.length)
        return { k: 'map', params: f.params, body: f.body, arrays }
      }
      case 'reduce':
      case 'fold':
      case 'scanl':
      case 'scanr': {
        count(3)
        const f = lam(args[0], 2)
        return {
          k: name,
          acc: f.params[0]!,
          elem: f.params[1]!,
          body: f.body,
          init: term(args[1]),
          array: term(args[2]),
        }
      }
      case 'shift1L':
      case 'shift1R':
        count(1)
        return { k: name, array: term(args[0]) }
      case 'prefix':
        count(2)
        return { k: 'prefix', array: term(args[0]), len: term(args[1]) }
      case 'sum':
        count(1)
        return sum(term(args[0]))
      case 'prod':
        count(1)
        return prod(term(args[0]))
      case 'logsumexp':
        count(1)
        return logsumexp(term(args[0]))
      case 'dot':
        count(2)
        return dot(term(args[0]), term(args[1]))
      default:
        return { k: 'op', op: name, args: args.map(term) }
    }
  }
}

interface Lambda {
  lambda: true
  params: string[]
  body: Term
}
