/**
 * Tenet IR expressions (the right-hand sides of `y += e`) as source terms, so that the UNF
 * engine can differentiate exactly what `@tenet/ad`'s expression-level adjoint differentiates
 * (and serve as its oracle in tests).
 */
import type { Expr } from '@tenet/ir'
import { UnfError } from './errors.js'
import type { Term } from './term.js'

/** Translates a pure, real-valued Tenet expression over scalar variables to a source term. */
export function termFromTenetExpr(e: Expr): Term {
  const go = (x: Expr): Term => {
    switch (x.kind) {
      case 'num':
        return { k: 'const', value: x.value }
      case 'var':
        return { k: 'var', name: x.name }
      case 'unary':
        if (x.op === '-') return { k: 'op', op: 'neg', args: [go(x.arg)] }
        break
      case 'binary':
        if (x.op === '**' && x.right.kind === 'num' && x.right.value === 2)
          return { k: 'op', op: 'square', args: [go(x.left)] }
        if (x.op === '**') return { k: 'op', op: 'pow', args: [go(x.left), go(x.right)] }
        if (['+', '-', '*', '/', '<', '<=', '>', '>=', '==', '!='].includes(x.op))
          return { k: 'op', op: x.op, args: [go(x.left), go(x.right)] }
        break
      case 'call':
        if (x.callee === 'f64') return go(x.args[0]!)
        return { k: 'op', op: x.callee, args: x.args.map(go) }
      default:
        break
    }
    throw new UnfError('unf/unsupported', `the Tenet expression (${x.kind}) has no UNF counterpart`)
  }
  return go(e)
}
