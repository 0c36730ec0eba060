import { typeToString, type Arg, type Expr, type FunctionDef, type Module, type Stmt } from './ast.js'

const PREC: Record<string, number> = {
  '||': 1,
  '&&': 2,
  '|': 3,
  '^': 4,
  '&': 5,
  '==': 6,
  '!=': 6,
  '<': 7,
  '<=': 7,
  '>': 7,
  '>=': 7,
  '+': 8,
  '-': 8,
  '*': 9,
  '/': 9,
  '%': 9,
}
const UNARY = 10
const POW = 11
const ATOM = 12

function hostName(name: string): string {
  return name.startsWith('$host') ? '${' + name.slice(5) + '}' : name
}

function numberText(value: number, isFloat: boolean): string {
  if (Number.isNaN(value)) return '(0.0 / 0.0)'
  if (!Number.isFinite(value)) return value > 0 ? '1e999' : '-1e999'
  // String(-0) is '0': the sign of a negative zero is written out, so printing round-trips
  let s = Object.is(value, -0) ? '-0' : String(value)
  if (isFloat && !/[.eE]/.test(s)) s += '.0'
  return s
}

function precOf(e: Expr | Arg): number {
  switch (e.kind) {
    case 'binary':
      return e.op === '**' ? POW : PREC[e.op]!
    case 'unary':
    case 'neg':
      return UNARY
    case 'num':
      return e.value < 0 || Object.is(e.value, -0) ? UNARY : ATOM
    default:
      return ATOM
  }
}

/** Prints an expression (or a dataview) in Tenet syntax with the fewest parentheses. */
export function printExpr(e: Expr | Arg): string {
  return print(e, false)
}

/**
 * `e`, printed as `text` in run-time errors (`Substituted.shown`), where it can carry the text and
 * would print otherwise: for a pass that puts an expression where the source wrote another of the
 * same value (a loop variable's value, a folded sum), so that a check's message reads as the source.
 */
export function shownAsWritten<E extends Expr>(e: E, text: string): E {
  if (printAsWritten(e) === text) return e
  switch (e.kind) {
    case 'num':
    case 'bool':
    case 'var':
    case 'index':
    case 'binary':
      return { ...e, shown: text }
    default:
      return e
  }
}

/**
 * Prints an expression as a run-time error words it: like `printExpr`, except that an argument
 * that inlining put in place of a callee's parameter prints as that parameter
 * (`Substituted.shown`), the name the source around the error's location uses.
 */
export function printAsWritten(e: Expr | Arg): string {
  return print(e, true)
}

/** The precedence of an expression's printed text (its loosest operator outside brackets). */
function textPrec(text: string): number {
  let depth = 0,
    token = 0,
    p = ATOM
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!
    if (ch === '(' || ch === '[') depth++
    else if (ch === ')' || ch === ']') depth--
    else if (ch === ' ' && depth === 0) {
      // operators are the tokens between spaces at odd positions: `a + b * c`
      const end = text.indexOf(' ', i + 1)
      if (token++ % 2 === 0 && end > i) {
        const op = text.slice(i + 1, end)
        p = Math.min(p, op === '**' ? POW : (PREC[op] ?? ATOM))
      }
    }
  }
  if (p === ATOM && (text.startsWith('-') || text.startsWith('!'))) return UNARY
  return p
}

function print(e: Expr | Arg, asWritten: boolean): string {
  // (with `asWritten`, a node that carries the source's text prints as that text, with its precedence)
  const shown = (x: Expr | Arg): string | undefined => (asWritten && 'shown' in x ? x.shown : undefined)
  const prec = (x: Expr | Arg): number => {
    const t = shown(x)
    return t === undefined ? precOf(x) : textPrec(t)
  }
  const wrap = (x: Expr | Arg, need: boolean) => (need ? `(${print(x, asWritten)})` : print(x, asWritten))
  if (shown(e) !== undefined) return shown(e)!
  switch (e.kind) {
    case 'num':
      return numberText(e.value, e.isFloat)
    case 'bool':
      return String(e.value)
    case 'var':
      return hostName(e.name)
    case 'index':
      return `${print(e.array, asWritten)}[${print(e.index, asWritten)}]`
    case 'field':
      return `${wrap(e.target, prec(e.target) < ATOM)}.${e.field}`
    case 'neg':
      return `-${wrap(e.target, prec(e.target) < ATOM)}`
    case 'unary': {
      const inner = e.arg
      const need = prec(inner) < UNARY || (inner.kind === 'num' && inner.value < 0) || inner.kind === 'unary'
      return `${e.op}${wrap(inner, need)}`
    }
    case 'call':
      return `${hostName(e.callee)}(${e.args.map((a) => print(a, asWritten)).join(', ')})`
    case 'binary': {
      if (e.op === '**') {
        return `${wrap(e.left, prec(e.left) <= POW)} ** ${wrap(e.right, prec(e.right) < UNARY)}`
      }
      // the left spine of one precedence level prints without parentheses: walked in a loop, so
      // a chain of thousands of terms does not recurse per term
      const p = PREC[e.op]!
      const parts: string[] = []
      let n: Expr | Arg = e
      while (n.kind === 'binary' && n.op !== '**' && PREC[n.op] === p && shown(n) === undefined) {
        parts.push(`${n.op} ${wrap(n.right, prec(n.right) <= p)}`)
        n = n.left
      }
      parts.push(wrap(n, prec(n) < p))
      return parts.reverse().join(' ')
    }
  }
}

/** Prints statements in Tenet syntax, indented by `indent` levels of two spaces. */
export function printStmts(body: Stmt[], indent = 1): string {
  return body.map((s) => printStmt(s, indent)).join('\n')
}

function blockText(body: Stmt[], indent: number): string {
  if (body.length === 0) return '{ }'
  return `{\n${printStmts(body, indent + 1)}\n${'  '.repeat(indent)}}`
}

/** Prints one statement (with its leading indentation). */
export function printStmt(s: Stmt, indent = 1): string {
  const pad = '  '.repeat(indent)
  switch (s.kind) {
    case 'update':
      return `${pad}${printExpr(s.target)} ${s.op} ${printExpr(s.value)}`
    case 'callstmt':
      return `${pad}${s.inverse ? '~' : ''}${hostName(s.callee)}(${s.args.map(printExpr).join(', ')})`
    case 'alloc': {
      const v = s.value.kind === 'emptystack' ? '[]' : printExpr(s.value)
      return `${pad}${s.name}${s.declared ? ': ' + typeToString(s.declared) : ''} <- ${v}`
    }
    case 'dealloc':
      return `${pad}${s.name} -> ${s.value.kind === 'emptystack' ? '[]' : printExpr(s.value)}`
    case 'if': {
      const head = `${pad}if (${printExpr(s.pre)}, ${s.post ? printExpr(s.post) : '~'}) ${blockText(s.then, indent)}`
      return s.else.length ? `${head} else ${blockText(s.else, indent)}` : head
    }
    case 'while':
      return `${pad}while (${printExpr(s.pre)}, ${printExpr(s.post)}) ${blockText(s.body, indent)}`
    case 'for': {
      if (s.each)
        return `${pad}for ${s.variable} in ${s.reverse ? 'reverse ' : ''}${printExpr(s.each)} ${blockText(s.body, indent)}`
      const step = s.step ? ` by ${printExpr(s.step)}` : ''
      return `${pad}for ${s.variable} in ${s.reverse ? 'reverse ' : ''}${printExpr(s.start)}${s.inclusive ? '..=' : '..'}${printExpr(s.stop)}${step} ${blockText(s.body, indent)}`
    }
    case 'push':
      return `${pad}push(${printExpr(s.stack)}, ${printExpr(s.value)})`
    case 'pop':
      return `${pad}pop(${printExpr(s.stack)}, ${printExpr(s.value)})`
    case 'safe':
      return `${pad}@safe ${printExpr(s.expr)}`
    case 'unchecked':
      return `${pad}@unchecked ${blockText(s.body, indent)}`
    case 'routine':
      return `${pad}routine ${blockText(s.body, indent)}`
    case 'unroutine':
      return `${pad}~routine`
    case 'invblock':
      return `${pad}~${blockText(s.body, indent)}`
    case 'assert': {
      const args = s.args.map((a) => (typeof a === 'string' ? JSON.stringify(a) : printExpr(a)))
      return `${pad}assert ${s.check}(${printExpr(s.cond)})${args.length ? ` else (${args.join(', ')})` : ''}`
    }
  }
}

/** Prints a function definition in Tenet syntax. */
export function printFunction(f: FunctionDef): string {
  const params = f.params.map((p) => `${p.name}: ${typeToString(p.type)}`).join(', ')
  return `fn ${f.name}(${params}) ${blockText(f.body, 0)}`
}

/** Prints every function of a module. */
export function printModule(m: Module): string {
  return m.functions.map(printFunction).join('\n\n')
}
