/**
 * A bijection's tangent rule (`BijectionSpec.tangent`, Tenet text over its parameters and their
 * tangents `t_<param>`), parsed once per spec and instantiated at each call: the arguments, their
 * tangents in one direction and fresh ancilla names are substituted into the statements, so the
 * rule costs what its statements cost (no helper call). Updates whose value is a product with a
 * zero tangent (a constant angle of `ROT`) are dropped.
 */
import {
  TenetStaticError,
  parse,
  type Arg,
  type BijectionSpec,
  type Dataview,
  type Expr,
  type Stmt,
  type Type,
} from '@tenet/ir'
import { preprocess } from '@tenet/reversible'
import { clone, lit, neg } from './expr.js'

/** What one instantiation substitutes for the rule's names. */
export interface RuleBinding {
  /** The value of parameter i as it is read (a real f64 view of the argument). */
  value: (i: number) => Expr
  /** The tangent of parameter i: a dataview (writable), an expression (read only), or null (zero). */
  tangent: (i: number) => Dataview | Expr | null
  /** A fresh name for an ancilla of the rule. */
  fresh: () => string
  /** The type of the rule's ancillas (they hold tangents). */
  ancilla: Type
}

const parsed = new WeakMap<BijectionSpec, Stmt[]>()

const fail = (msg: string, loc?: Expr['loc']): never => {
  throw new TenetStaticError('ad/unsupported', msg, loc)
}

/** The statements of `spec.tangent` (core IR, parsed once). */
function ruleBody(spec: BijectionSpec): Stmt[] {
  let body = parsed.get(spec)
  if (body) return body
  const rule = spec.tangent!
  if (rule.params.length !== spec.roles.length)
    fail(
      `the tangent rule of \`${spec.name}\` names ${rule.params.length} parameters, but \`${spec.name}\` takes ${spec.roles.length}`,
    )
  const params = [...rule.params, ...rule.params.map((p) => `t_${p}`)].map((p) => `${p}: f64`)
  try {
    body = preprocess(
      parse({
        text: `fn tangent_rule(${params.join(', ')}) {\n${rule.source}\n}`,
        name: `tangent rule of ${spec.name}`,
      }).functions[0]!,
    ).body
  } catch (e) {
    if (e instanceof Error) e.message = `in the tangent rule of bijection \`${spec.name}\`: ${e.message}`
    throw e
  }
  parsed.set(spec, body)
  return body
}

/** Whether an expression is zero by its form (a literal zero, or a product, quotient or negation of one). */
function isZero(e: Expr): boolean {
  switch (e.kind) {
    case 'num':
      return e.value === 0
    case 'unary':
      return e.op === '-' && isZero(e.arg)
    case 'binary':
      if (e.op === '*') return isZero(e.left) || isZero(e.right)
      if (e.op === '/') return isZero(e.left)
      if (e.op === '+' || e.op === '-') return isZero(e.left) && isZero(e.right)
      return false
    default:
      return false
  }
}

const asExpr = (dv: Arg): Expr => (dv.kind === 'neg' ? neg(asExpr(dv.target)) : clone(dv as Expr))
const isView = (x: Arg) => x.kind === 'var' || x.kind === 'index' || x.kind === 'neg'

/**
 * The statements of the tangent rule of `spec` for one call and one direction, at `loc`. Errors
 * name the bijection: a rule that writes an argument's value, or the tangent of an `in` argument
 * that is not a variable, or reads a name it does not declare.
 */
export function instantiateTangentRule(spec: BijectionSpec, b: RuleBinding, loc: Expr['loc']): Stmt[] {
  const params = spec.tangent!.params
  const locals = new Map<string, string>()
  const where = loc ? { loc } : {}
  const bad = (what: string): never => fail(`the tangent rule of \`${spec.name}\` ${what}`, loc)

  const read = (name: string): Expr => {
    const l = locals.get(name)
    if (l !== undefined) return { kind: 'var', name: l }
    const i = params.indexOf(name)
    if (i >= 0) return b.value(i)
    if (name.startsWith('t_')) {
      const j = params.indexOf(name.slice(2))
      if (j >= 0) {
        const t = b.tangent(j)
        return t === null ? lit(0) : asExpr(t)
      }
    }
    return bad(`reads \`${name}\`, which is neither a parameter, a tangent \`t_<param>\` nor one of its ancillas`)
  }
  const write = (dv: Dataview): Dataview => {
    if (dv.kind === 'neg') return { kind: 'neg', target: write(dv.target) }
    if (dv.kind !== 'var')
      return bad(
        `writes \`${dv.kind === 'index' ? dv.array.name : '…'}[…]\`: a rule updates scalar tangents and its own ancillas only`,
      )
    const l = locals.get(dv.name)
    if (l !== undefined) return { kind: 'var', name: l }
    if (params.includes(dv.name))
      return bad(`writes its argument \`${dv.name}\`: a tangent rule may update only tangents (\`t_${dv.name}\`)`)
    const j = dv.name.startsWith('t_') ? params.indexOf(dv.name.slice(2)) : -1
    if (j < 0) return bad(`writes \`${dv.name}\`, which is neither a tangent \`t_<param>\` nor one of its ancillas`)
    if (spec.roles[j] !== 'inout')
      return bad(`writes \`${dv.name}\`, the tangent of the read-only argument \`${params[j]}\``)
    const t = b.tangent(j)
    if (t === null || !isView(t as Arg)) return bad(`writes \`${dv.name}\`, which has no tangent here`)
    return clone(t as Dataview)
  }
  const expr = (e: Expr): Expr => {
    switch (e.kind) {
      case 'var':
        return read(e.name)
      case 'num':
      case 'bool':
        return { ...e }
      case 'unary':
        return { kind: 'unary', op: e.op, arg: expr(e.arg) }
      case 'binary':
        return { kind: 'binary', op: e.op, left: expr(e.left), right: expr(e.right) }
      case 'call':
        return { kind: 'call', callee: e.callee, args: e.args.map(expr) }
      default:
        return bad(`uses \`${e.kind}\` expressions, which a tangent rule cannot`)
    }
  }
  const stmt = (s: Stmt): Stmt[] => {
    switch (s.kind) {
      case 'update': {
        const value = expr(s.value)
        if (isZero(value)) return []
        return [{ kind: 'update', op: s.op, target: write(s.target), value, ...where } as Stmt]
      }
      case 'callstmt': {
        const callee = s.callee
        const args = s.args.map((a): Arg => {
          if (a.kind === 'neg') return write(a)
          if (a.kind === 'var') {
            // a tangent or ancilla passed to a bijection may be written; a value is read
            const isTangent = locals.has(a.name) || (a.name.startsWith('t_') && params.includes(a.name.slice(2)))
            if (isTangent) {
              const j = params.indexOf(a.name.slice(2))
              if (!locals.has(a.name) && spec.roles[j] !== 'inout') return read(a.name)
              return write(a)
            }
          }
          return expr(a as Expr)
        })
        return [{ kind: 'callstmt', callee, args, inverse: s.inverse, ...where } as Stmt]
      }
      case 'alloc': {
        const fresh = b.fresh()
        const value = expr(s.value as Expr)
        locals.set(s.name, fresh)
        return [{ kind: 'alloc', name: fresh, declared: b.ancilla, value, ...where } as Stmt]
      }
      case 'dealloc': {
        const name = locals.get(s.name) ?? bad(`frees \`${s.name}\`, which it did not allocate`)
        const value = expr(s.value as Expr)
        locals.delete(s.name)
        return [{ kind: 'dealloc', name, declared: b.ancilla, value, ...where } as Stmt]
      }
      case 'unchecked':
        return [{ kind: 'unchecked', body: s.body.flatMap(stmt), ...where } as Stmt]
      default:
        return bad(
          `uses a \`${s.kind}\` statement: a tangent rule is straight-line code (updates, bijection calls, ancillas)`,
        )
    }
  }
  return ruleBody(spec).flatMap(stmt)
}
