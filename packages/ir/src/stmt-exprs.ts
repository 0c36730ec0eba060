/**
 * Small walks the compiler passes share (dead-code passes in `@tenet/ir` and `@tenet/ad`,
 * the gradient-program builders, the sugar expander, value numbering, the backends' loop plans):
 * the expressions a statement evaluates itself, the children of an expression node, and the names
 * whose values an expression reads.
 */
import type { Arg, Expr, Stmt } from './ast.js'
import { APART } from './passes/apart.js'

/**
 * The expressions and arguments a statement evaluates itself — targets, values, conditions, loop
 * ranges, call arguments, the table elements a call reads (`tabulated`) — not those of its nested
 * bodies. With `assertions` false, an \`if\`'s and a \`while\`'s assertion (\`post\`, evaluated by the
 * run-time checks, or a \`while\`'s first test in reverse) are left out: what every forward run of
 * the statement evaluates.
 */
export function stmtExprs(s: Stmt, { assertions = true }: { assertions?: boolean } = {}): Array<Expr | Arg> {
  switch (s.kind) {
    case 'update':
      return [s.target, s.value]
    case 'callstmt':
      // the table elements a bijection's lowering reads (see the `tabulate` pass)
      return s.tabulated ? [...s.args, ...s.tabulated.map((t) => t.read)] : s.args
    case 'alloc':
    case 'dealloc':
      return s.value.kind === 'emptystack' ? [] : [s.value as Expr]
    case 'if':
      return s.post && assertions ? [s.pre, s.post] : [s.pre]
    case 'while':
      return assertions ? [s.pre, s.post] : [s.pre]
    case 'for':
      return s.step ? [s.start, s.stop, s.step] : [s.start, s.stop]
    case 'push':
    case 'pop':
      return [s.stack, s.value]
    case 'safe':
      return [s.expr]
    default:
      return []
  }
}

/**
 * Adds to `out` the variables and arrays whose values `e` reads, and returns `out`: like
 * `readNames`, except that `len(a)` reads no value of `a` (an array's length never changes).
 */
export function valueReads(e: Expr | Arg, out: Set<string> = new Set()): Set<string> {
  switch (e.kind) {
    case 'var':
      out.add(e.name)
      break
    case 'index':
      out.add(e.array.name)
      valueReads(e.index, out)
      break
    case 'field':
    case 'neg':
      valueReads(e.target, out)
      break
    case 'unary':
      valueReads(e.arg, out)
      break
    case 'binary':
      valueReads(e.left, out)
      valueReads(e.right, out)
      break
    case 'call':
      // (the length of an array, and where it lies, \`$apart\`, are not its values)
      for (const a of e.args) if (!((e.callee === 'len' || e.callee === APART) && a.kind === 'var')) valueReads(a, out)
      break
  }
  return out
}

/** The children of an expression node, left to right (an index's index, a call's arguments, …). */
export function exprChildren(e: Expr): Expr[] {
  switch (e.kind) {
    case 'index':
      return [e.index]
    case 'field':
      return [e.target]
    case 'unary':
      return [e.arg]
    case 'binary':
      return [e.left, e.right]
    case 'call':
      return e.args
    default:
      return []
  }
}
