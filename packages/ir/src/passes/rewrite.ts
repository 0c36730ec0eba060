/**
 * The one traversal the passes share: a copy of a block with every expression and dataview
 * rewritten bottom-up by a function of the node (children first), statements left as they are
 * otherwise. A rewriter returns the node it was given to keep it.
 */
import type { Arg, Dataview, Expr, Stmt } from '../ast.js'

/** Rewrites one node whose children are already rewritten. */
export type NodeRewriter = (e: Expr | Arg) => Expr | Arg

/** `e` with its children, then itself, rewritten. */
export function rewriteExpr(e: Expr | Arg, f: NodeRewriter): Expr | Arg {
  switch (e.kind) {
    case 'index':
      return f({ ...e, index: rewriteExpr(e.index, f) as Expr })
    case 'field':
      return f({ ...e, target: rewriteExpr(e.target, f) as Expr })
    case 'neg':
      return f({ ...e, target: rewriteExpr(e.target, f) as Dataview })
    case 'unary':
      return f({ ...e, arg: rewriteExpr(e.arg, f) as Expr })
    case 'binary':
      return f({ ...e, left: rewriteExpr(e.left, f) as Expr, right: rewriteExpr(e.right, f) as Expr })
    case 'call':
      return f({ ...e, args: e.args.map((a) => rewriteExpr(a, f) as Expr) })
    default:
      return f(e)
  }
}

/**
 * A copy of `body` with every expression rewritten by `f` (see `rewriteExpr`). `stop(s)` true
 * leaves a nested block as it is (a loop that binds the variable being substituted, say).
 */
export function rewriteBlock(body: Stmt[], f: NodeRewriter, stop: (s: Stmt) => boolean = () => false): Stmt[] {
  const x = (e: Expr): Expr => rewriteExpr(e, f) as Expr
  const pairs = (d: Array<[Expr, Expr]> | undefined) =>
    d ? { distinct: d.map(([a, b]) => [x(a), x(b)] as [Expr, Expr]) } : {}
  return body.map((s): Stmt => {
    if (stop(s)) return s
    switch (s.kind) {
      case 'update':
        return { ...s, target: rewriteExpr(s.target, f) as Dataview, value: x(s.value), ...pairs(s.distinct) }
      case 'callstmt':
        return { ...s, args: s.args.map((a) => rewriteExpr(a, f)), ...pairs(s.distinct) }
      case 'alloc':
      case 'dealloc':
        return { ...s, value: s.value.kind === 'emptystack' ? s.value : x(s.value) } as Stmt
      case 'if':
        return {
          ...s,
          pre: x(s.pre),
          post: s.post ? x(s.post) : null,
          then: rewriteBlock(s.then, f, stop),
          else: rewriteBlock(s.else, f, stop),
        }
      case 'while':
        return { ...s, pre: x(s.pre), post: x(s.post), body: rewriteBlock(s.body, f, stop) }
      case 'for':
        return {
          ...s,
          start: x(s.start),
          stop: x(s.stop),
          step: s.step ? x(s.step) : null,
          body: rewriteBlock(s.body, f, stop),
        }
      case 'push':
      case 'pop':
        return { ...s, value: rewriteExpr(s.value, f) as Dataview }
      case 'safe':
        return { ...s, expr: x(s.expr) }
      case 'unchecked':
        return { ...s, body: rewriteBlock(s.body, f, stop) }
      case 'assert':
        return { ...s, cond: x(s.cond), args: s.args.map((a) => (typeof a === 'string' ? a : x(a))) }
      default:
        return s
    }
  })
}

/**
 * A copy of `body` with each block nested one level down (a loop's body, both arms of an `if`,
 * and an `@unchecked` block's body where `intoUnchecked`) replaced by `f` of it, every other
 * statement as it is. A pass that rewrites each block innermost first calls this from its own
 * block function before rewriting the block itself.
 */
export function mapInnerBlocks(body: Stmt[], f: (block: Stmt[]) => Stmt[], intoUnchecked = true): Stmt[] {
  return body.map((s): Stmt => {
    switch (s.kind) {
      case 'for':
      case 'while':
        return { ...s, body: f(s.body) }
      case 'unchecked':
        return intoUnchecked ? { ...s, body: f(s.body) } : s
      case 'if':
        return { ...s, then: f(s.then), else: f(s.else) }
      default:
        return s
    }
  })
}
