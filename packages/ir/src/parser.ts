import type {
  Arg,
  BinaryOp,
  Dataview,
  EmptyStack,
  Expr,
  FunctionDef,
  Module,
  Param,
  Stmt,
  Type,
  UpdateOp,
  VarRef,
} from './ast.js'
import { TenetSyntaxError } from './errors.js'
import { tokenize, type Token } from './lexer.js'
import type { SourceLocation, SourceText } from './loc.js'

/** Binary operator precedence, lowest first (JS-like; `**` binds tightest, right-associative). */
const LEVELS: BinaryOp[][] = [
  ['||'],
  ['&&'],
  ['|'],
  ['^'],
  ['&'],
  ['==', '!='],
  ['<', '<=', '>', '>='],
  ['+', '-'],
  ['*', '/', '%'],
]
/** The level of each binary operator in `LEVELS`. */
const LEVEL_OF = new Map<string, number>(LEVELS.flatMap((ops, level) => ops.map((op) => [op, level] as const)))
/**
 * How deeply expressions and blocks may nest in the source (parentheses, unary operators,
 * exponents, indices and call arguments inside one another; blocks inside blocks), and how deep
 * an expression tree may be (a chain `a + b + c + …` of n terms is about n deep). Deeper programs
 * get a `TenetSyntaxError` (code `syntax/too-deep`) instead of overflowing the JavaScript stack
 * in the compiler passes, which recurse over the tree.
 */
export const NESTING_LIMITS = { expression: 500, block: 500, tree: 10000 } as const
/** The index of `x[..]` (every element) is a variable of this name, which no source name can have. */
export const SPREAD = '..'
/** Words that cannot name a function, a parameter, an ancilla or a loop variable. */
export const RESERVED_WORDS: ReadonlySet<string> = new Set([
  'true',
  'false',
  'fn',
  'if',
  'else',
  'while',
  'for',
  'in',
  'routine',
])
const UPDATE_OPS: Record<string, UpdateOp> = { '+=': '+=', '-=': '-=', '^=': '^=', '⊻=': '^=', '*=': '*=', '/=': '/=' }
const SCALAR_TYPES_HINT = 'a type such as `f64`, `i32`, `bool`, `f64[]` or `stack<f64>`'

/**
 * Parses Tenet source into a surface module. `hostCount` is the number of interpolated
 * host values (`${N}` tokens refer to them).
 */
export function parse(source: SourceText | string, hosts: unknown[] = []): Module {
  const src: SourceText = typeof source === 'string' ? { text: source, name: 'tenet source' } : source
  return new Parser(tokenize(src), hosts).module()
}

class Parser {
  private pos = 0
  /** Current nesting of expressions (`unary` calls) and of blocks, against `NESTING_LIMITS`. */
  private nesting = 0
  private blocks = 0
  constructor(
    private readonly toks: Token[],
    private readonly hosts: unknown[],
  ) {}

  private get tok(): Token {
    return this.toks[this.pos]!
  }
  private peek(n = 1): Token {
    return this.toks[Math.min(this.pos + n, this.toks.length - 1)]!
  }
  private next(): Token {
    return this.toks[this.pos++]!
  }
  private is(text: string): boolean {
    return this.tok.kind === 'punct' && this.tok.text === text
  }
  private isWord(text: string): boolean {
    return this.tok.kind === 'ident' && this.tok.text === text
  }
  private describe(t: Token): string {
    if (t.kind === 'eof') return 'the end of the source'
    if (t.kind === 'newline') return 'a line break'
    if (t.kind === 'interp') return `an interpolated value \`\${...}\``
    return `\`${t.text}\``
  }
  private fail(expected: string, t: Token = this.tok): never {
    throw new TenetSyntaxError('syntax', `expected ${expected}, found ${this.describe(t)}`, t.loc)
  }
  private expect(text: string, what = `\`${text}\``): Token {
    if (!this.is(text)) this.fail(what)
    return this.next()
  }
  private ident(what = 'a name'): Token {
    if (this.tok.kind !== 'ident') this.fail(what)
    return this.next()
  }
  /** A name being declared (function, parameter, ancilla, loop variable): not a reserved word. */
  private declared(what: string): Token {
    const t = this.ident(what)
    if (RESERVED_WORDS.has(t.text)) reserved(t.text, what, t.loc)
    return t
  }
  private tooDeep(what: string, limit: number, loc: SourceLocation | undefined): never {
    throw new TenetSyntaxError(
      'syntax/too-deep',
      `${what} nested more than ${limit} levels deep (the limit); split it up, e.g. compute parts into ancillas or into a function`,
      loc,
    )
  }
  private skipNewlines(): void {
    while (this.tok.kind === 'newline' || this.is(';')) this.pos++
  }

  module(): Module {
    const functions: FunctionDef[] = []
    this.skipNewlines()
    while (this.tok.kind !== 'eof') {
      functions.push(this.fn())
      this.skipNewlines()
    }
    return { kind: 'module', functions, hosts: this.hosts }
  }

  private fn(): FunctionDef {
    const start = this.tok
    if (!this.isWord('fn')) this.fail('`fn` to start a function definition')
    this.next()
    const name = this.declared('a function name').text
    this.expect('(')
    const params: Param[] = []
    while (!this.is(')')) {
      const p = this.declared('a parameter name')
      let type: Type = { kind: 'scalar', name: 'f64' }
      if (this.is(':')) {
        this.next()
        type = this.type()
      }
      params.push({ name: p.text, type, loc: p.loc })
      if (!this.is(')')) this.expect(',', '`,` or `)` after a parameter')
    }
    this.next()
    const body = this.block()
    return { kind: 'fn', name, params, body, loc: start.loc }
  }

  private type(): Type {
    const t = this.ident(SCALAR_TYPES_HINT)
    if (t.text === 'stack') {
      this.expect('<', '`<` after `stack`')
      const e = this.ident(SCALAR_TYPES_HINT).text
      this.expect('>', '`>` to close `stack<...>`')
      return { kind: 'stack', elem: e }
    }
    if (this.is('[')) {
      this.next()
      this.expect(']', '`]` (array types are written `f64[]`)')
      return { kind: 'array', elem: t.text }
    }
    return { kind: 'scalar', name: t.text }
  }

  private block(): Stmt[] {
    const open = this.expect('{', '`{` to start a block')
    if (++this.blocks > NESTING_LIMITS.block) this.tooDeep('blocks', NESTING_LIMITS.block, open.loc)
    const body: Stmt[] = []
    this.skipNewlines()
    while (!this.is('}')) {
      if (this.tok.kind === 'eof') this.fail('`}` to close the block')
      const s = this.stmt()
      if (Array.isArray(s)) body.push(...s)
      else body.push(s)
      if (this.is('}')) break
      if ((this.tok.kind as string) === 'eof') this.fail('`}` to close the block')
      // a `}` that closes a block also ends its statement (DESIGN §4): `routine { … } ~routine`
      const prev = this.toks[this.pos - 1]!
      const closed = prev.kind === 'punct' && prev.text === '}'
      if (!closed && this.tok.kind !== 'newline' && !this.is(';')) this.fail('a line break or `;` after the statement')
      this.skipNewlines()
    }
    this.next()
    this.blocks--
    return body
  }

  private stmt(): Stmt | Stmt[] {
    const t = this.tok
    const loc = t.loc
    if (t.kind === 'ident') {
      switch (t.text) {
        case 'if':
          return this.ifStmt()
        case 'while': {
          this.next()
          this.expect('(', '`(` before the pre- and post-condition of `while`')
          const pre = this.expr()
          this.expect(',', '`,` between the pre- and post-condition (`while (pre, post)`)')
          const post = this.expr()
          this.expect(')')
          return { kind: 'while', pre, post, body: this.block(), loc }
        }
        case 'for': {
          this.next()
          const variable = this.declared('the loop variable').text
          if (!this.isWord('in')) this.fail('`in` after the loop variable')
          this.next()
          let reverse = false
          if (
            this.isWord('reverse') &&
            !(this.peek().kind === 'punct' && ['..', '..=', '{'].includes(this.peek().text))
          ) {
            this.next()
            reverse = true
          }
          const start = this.expr()
          // `for x in arr { }`: a read-only loop over the elements of an array
          if (start.kind === 'var' && this.is('{')) {
            const zero: Expr = { kind: 'num', value: 0, isFloat: false, ...(start.loc ? { loc: start.loc } : {}) }
            const len: Expr = { kind: 'call', callee: 'len', args: [start], ...(start.loc ? { loc: start.loc } : {}) }
            return {
              kind: 'for',
              variable,
              start: zero,
              stop: len,
              step: null,
              inclusive: false,
              each: start,
              ...(reverse ? { reverse } : {}),
              body: this.block(),
              loc,
            }
          }
          if (!this.is('..') && !this.is('..='))
            this.fail('`..` or `..=` in the loop range (or `{` after an array name: `for x in arr { }`)')
          const inclusive = this.next().text === '..='
          const stop = this.expr()
          let step: Expr | null = null
          if (this.isWord('by')) {
            this.next()
            step = this.expr()
          }
          return {
            kind: 'for',
            variable,
            start,
            stop,
            step,
            inclusive,
            ...(reverse ? { reverse } : {}),
            body: this.block(),
            loc,
          }
        }
        case 'routine':
          this.next()
          return { kind: 'routine', body: this.block(), loc }
        case 'push':
        case 'pop':
          if (this.peek().kind === 'punct' && this.peek().text === '(') {
            this.next()
            this.next()
            const stack = this.varRef()
            this.expect(',', `\`,\` after the stack in \`${t.text}(stack, x)\``)
            const value = this.dataview()
            this.expect(')')
            return t.text === 'push' ? { kind: 'push', stack, value, loc } : { kind: 'pop', stack, value, loc }
          }
      }
    }
    if (this.is('@')) {
      this.next()
      const w = this.ident('`safe` or `unchecked` after `@`')
      if (w.text === 'safe') return { kind: 'safe', expr: this.expr(), loc }
      if (w.text === 'unchecked') return { kind: 'unchecked', body: this.block(), loc }
      this.fail('`@safe` or `@unchecked`', w)
    }
    if (this.is('~')) {
      this.next()
      if (this.isWord('routine')) {
        this.next()
        return { kind: 'unroutine', loc }
      }
      if (this.is('{')) return { kind: 'invblock', body: this.block(), loc }
      const callee = this.calleeName()
      return { kind: 'callstmt', callee, args: this.args(), inverse: true, loc }
    }
    if (t.kind === 'interp') {
      const callee = this.calleeName()
      return { kind: 'callstmt', callee, args: this.args(), inverse: false, loc }
    }
    if (t.kind !== 'ident' && !this.is('-')) this.fail('a statement')
    // typed allocation: `name: type <- value`
    if (t.kind === 'ident' && this.peek().kind === 'punct' && this.peek().text === ':') {
      if (RESERVED_WORDS.has(t.text)) reserved(t.text, 'an ancilla name', t.loc)
      this.next()
      this.next()
      const declared = this.type()
      if (!this.is('<-') && !this.is('←')) this.fail('`<-` after the declared type of an allocation')
      this.next()
      return { kind: 'alloc', name: t.text, declared, value: this.allocValue(), loc }
    }
    // call: `f(args)`
    if (t.kind === 'ident' && this.peek().kind === 'punct' && this.peek().text === '(') {
      this.next()
      return { kind: 'callstmt', callee: t.text, args: this.args(), inverse: false, loc }
    }
    const target = this.dataview()
    if (this.is(',') && target.kind === 'var') return this.multiAlloc(target)
    const op = this.tok
    if (op.kind === 'punct') {
      if (op.text in UPDATE_OPS) {
        this.next()
        return { kind: 'update', op: UPDATE_OPS[op.text]!, target, value: this.expr(), loc: op.loc }
      }
      if (op.text === '<->' || op.text === '↔') {
        this.next()
        const other = this.dataview()
        return { kind: 'callstmt', callee: 'SWAP', args: [target, other], inverse: false, loc: op.loc }
      }
      if (op.text === '<-' || op.text === '←' || op.text === '->' || op.text === '→') {
        if (target.kind !== 'var') {
          throw new TenetSyntaxError('syntax', 'only a plain name can be allocated or deallocated', target.loc)
        }
        if (RESERVED_WORDS.has(target.name)) reserved(target.name, 'an ancilla name', target.loc)
        this.next()
        const value = this.allocValue()
        return op.text === '<-' || op.text === '←'
          ? { kind: 'alloc', name: target.name, value, loc: target.loc }
          : { kind: 'dealloc', name: target.name, value, loc: target.loc }
      }
    }
    return this.fail('`+=`, `-=`, `^=`, `*=`, `/=`, `<->`, `<-` or `->` after the target', op)
  }

  /** `m, n <- 2, 4` (several ancillas at once) and `m, n -> 2, 4`: one statement per name, in order. */
  private multiAlloc(first: VarRef): Stmt[] {
    const names: VarRef[] = [first]
    while (this.is(',')) {
      this.next()
      names.push(this.varRef())
    }
    for (const n of names) if (RESERVED_WORDS.has(n.name)) reserved(n.name, 'an ancilla name', n.loc)
    const op = this.tok
    if (!(op.kind === 'punct' && ['<-', '←', '->', '→'].includes(op.text)))
      this.fail('`<-` or `->` after a list of names (`m, n <- 2, 4`)')
    this.next()
    const values: Array<Expr | EmptyStack> = [this.allocValue()]
    while (this.is(',')) {
      this.next()
      values.push(this.allocValue())
    }
    if (values.length !== names.length) {
      throw new TenetSyntaxError(
        'syntax',
        `${names.length} names but ${values.length} value${values.length === 1 ? '' : 's'}: write one value per name (\`${names.map((n) => n.name).join(', ')} ${op.text} …\`)`,
        op.loc,
      )
    }
    const alloc = op.text === '<-' || op.text === '←'
    return names.map(
      (n, k): Stmt => ({
        kind: alloc ? 'alloc' : 'dealloc',
        name: n.name,
        value: values[k]!,
        ...(n.loc ? { loc: n.loc } : {}),
      }),
    )
  }

  private allocValue(): Expr | EmptyStack {
    if (this.is('[') && this.peek().kind === 'punct' && this.peek().text === ']') {
      const loc = this.next().loc
      this.next()
      return { kind: 'emptystack', loc }
    }
    return this.expr()
  }

  private calleeName(): string {
    const t = this.tok
    if (t.kind === 'interp') {
      this.next()
      return `$host${t.text}`
    }
    return this.ident('a function name').text
  }

  /** Arguments of a call statement: `-x` is a negated dataview (written back negated). */
  private args(): Arg[] {
    return this.exprArgs().map(asArg)
  }

  /** Arguments of a call inside an expression: pure expressions only. */
  private exprArgs(): Expr[] {
    this.expect('(')
    const args: Expr[] = []
    while (!this.is(')')) {
      args.push(this.expr())
      if (!this.is(')')) this.expect(',', '`,` or `)` in the argument list')
    }
    this.next()
    return args
  }

  private ifStmt(): Stmt {
    const loc = this.next().loc
    this.expect('(', '`(` before the pre- and post-condition of `if`')
    const pre = this.expr()
    let post: Expr | null = null
    if (this.is(',')) {
      this.next()
      if (this.is('~')) this.next()
      else post = this.expr()
    }
    this.expect(')', '`)` after the conditions of `if` (`if (pre, post)` or `if (pre, ~)`)')
    const then = this.block()
    let els: Stmt[] = []
    // `else` may follow on the next line
    let k = 0
    while (this.peek(k).kind === 'newline') k++
    if (this.peek(k).kind === 'ident' && this.peek(k).text === 'else') {
      this.pos += k + 1
      els = this.isWord('if') ? [this.ifStmt()] : this.block()
    }
    return { kind: 'if', pre, post, then, else: els, loc }
  }

  private varRef(): VarRef {
    const t = this.ident('a name')
    return { kind: 'var', name: t.text, loc: t.loc }
  }

  private dataview(): Dataview {
    const e = this.unary()
    if (this.nesting === 0) this.checkTree(e)
    const dv = toDataview(e)
    if (!dv)
      throw new TenetSyntaxError('syntax', 'expected a variable, an array element or a field (a dataview)', e.loc)
    return dv
  }

  expr(): Expr {
    const e = this.binary(0)
    if (this.nesting === 0) this.checkTree(e)
    return e
  }

  /** Rejects an expression tree deeper than `NESTING_LIMITS.tree` (measured without recursion). */
  private checkTree(root: Expr): void {
    const stack: Array<[Expr | Arg, number]> = [[root, 1]]
    while (stack.length) {
      const [e, d] = stack.pop()!
      if (d > NESTING_LIMITS.tree) this.tooDeep('an expression', NESTING_LIMITS.tree, e.loc ?? root.loc!)
      switch (e.kind) {
        case 'index':
          stack.push([e.index, d + 1])
          break
        case 'field':
          stack.push([e.target, d + 1])
          break
        case 'unary':
          stack.push([e.arg, d + 1])
          break
        case 'neg':
          stack.push([e.target, d + 1])
          break
        case 'binary':
          stack.push([e.left, d + 1], [e.right, d + 1])
          break
        case 'call':
          for (const a of e.args) stack.push([a, d + 1])
          break
      }
    }
  }

  /**
   * Operators of level `min` or tighter, by precedence climbing: a chain of one level
   * (`a + b + c + …`) is built in a loop, so its length does not deepen the parser's recursion.
   */
  private binary(min: number): Expr {
    let left = this.unary()
    for (;;) {
      const level = this.tok.kind === 'punct' ? LEVEL_OF.get(this.tok.text) : undefined
      if (level === undefined || level < min) return left
      const op = this.next()
      const right = this.binary(level + 1)
      left = { kind: 'binary', op: op.text as BinaryOp, left, right, loc: op.loc }
    }
  }

  private unary(): Expr {
    if (++this.nesting > NESTING_LIMITS.expression) this.tooDeep('expressions', NESTING_LIMITS.expression, this.tok.loc)
    try {
      if (this.is('-') || this.is('!')) {
        const op = this.next()
        const arg = this.unary()
        if (op.text === '-' && arg.kind === 'num') return { ...arg, value: -arg.value, loc: op.loc }
        return { kind: 'unary', op: op.text as '-' | '!', arg, loc: op.loc }
      }
      return this.power()
    } finally {
      this.nesting--
    }
  }

  private power(): Expr {
    const base = this.postfix()
    if (this.is('**')) {
      const op = this.next()
      const exp = this.unary()
      return { kind: 'binary', op: '**', left: base, right: exp, loc: op.loc }
    }
    return base
  }

  private postfix(): Expr {
    let e = this.primary()
    for (;;) {
      if (this.is('[')) {
        const loc = this.next().loc
        if (e.kind !== 'var') throw new TenetSyntaxError('syntax', 'only a named array can be indexed', loc)
        // `x[..]`: every element (an elementwise statement, expanded by preprocess)
        if (this.is('..') && this.peek().kind === 'punct' && this.peek().text === ']') {
          const at = this.next().loc
          this.next()
          e = { kind: 'index', array: e, index: { kind: 'var', name: SPREAD, loc: at }, loc: e.loc }
          continue
        }
        const index = this.expr()
        this.expect(']', '`]` to close the index')
        e = { kind: 'index', array: e, index, loc: e.loc }
      } else if (this.is('.') && this.peek().kind === 'ident') {
        this.next()
        const f = this.next()
        e = { kind: 'field', target: e, field: f.text, loc: f.loc }
      } else return e
    }
  }

  private primary(): Expr {
    const t = this.tok
    const loc: SourceLocation = t.loc
    if (t.kind === 'number') {
      this.next()
      return { kind: 'num', value: Number(t.text), isFloat: /[.eE]/.test(t.text), loc }
    }
    if (t.kind === 'interp') {
      this.next()
      const v = this.hosts[Number(t.text)]
      if (typeof v === 'number')
        return { kind: 'num', value: v, isFloat: !Number.isInteger(v) || Object.is(v, -0), loc }
      if (typeof v === 'boolean') return { kind: 'bool', value: v, loc }
      if (this.is('(')) {
        const args = this.exprArgs()
        return { kind: 'call', callee: `$host${t.text}`, args, loc }
      }
      return { kind: 'var', name: `$host${t.text}`, loc }
    }
    if (t.kind === 'ident') {
      this.next()
      if (t.text === 'true' || t.text === 'false') return { kind: 'bool', value: t.text === 'true', loc }
      if (this.is('(')) {
        const args = this.exprArgs()
        return { kind: 'call', callee: t.text, args, loc }
      }
      return { kind: 'var', name: t.text, loc }
    }
    if (this.is('(')) {
      this.next()
      const e = this.expr()
      this.expect(')', '`)` to close the parenthesis')
      return e
    }
    return this.fail('an expression')
  }
}

/** Turns an expression that has the shape of a dataview into one (`-x` becomes a `neg` view). */
export function toDataview(e: Expr | Arg): Dataview | null {
  switch (e.kind) {
    case 'var':
      return e
    case 'index':
      return e
    case 'field':
      return toDataview(e.target) ? e : null
    case 'neg':
      return e
    case 'unary': {
      if (e.op !== '-') return null
      const inner = toDataview(e.arg)
      return inner ? { kind: 'neg', target: inner, loc: e.loc } : null
    }
    default:
      return null
  }
}

function reserved(name: string, what: string, loc: SourceLocation | undefined): never {
  throw new TenetSyntaxError('syntax/reserved', `\`${name}\` is a reserved word and cannot be ${what}`, loc)
}

function asArg(e: Expr): Arg {
  if (e.kind === 'unary' && e.op === '-') {
    const dv = toDataview(e)
    if (dv) return dv
  }
  return e
}
