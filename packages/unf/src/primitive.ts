/**
 * Tenet primitives defined by a body expression: the UNF engine derives their partial
 * derivatives, so a user writes no `partials`. `unfPrimitive` returns an ordinary
 * `PurePrimitiveSpec` (the registry and `@tenet/ad` need no change): `evaluate` and numeric
 * `partials` are the compiled value and gradient, and `partialExprs` is the partially evaluated
 * gradient term translated to Tenet expressions, so `@tenet/ad` emits it inline as straight-line
 * code (when the gradient is a plain scalar expression; conditionals and loops fall back to the
 * compiled `partials`).
 */
import type { Expr, PurePrimitiveSpec, Registry } from '@tenet/ir'
import { compile } from './compile.js'
import { UnfError } from './errors.js'
import { parseProgram } from './parse.js'
import type { Term } from './term.js'
import { R } from './types.js'

/** What `unfPrimitive` needs: a name, the scalar parameters, and the body. */
export interface UnfPrimitiveDefinition {
  name: string
  /** the parameter names (all real) */
  params: string[]
  /** the body: a source term, or text in the UNF syntax over the parameters (`log(1 + exp(x * y))`) */
  body: Term | string
  description?: string
  /** a registry whose primitives the body may call */
  registry?: Registry
}

/** Largest partial-derivative expression tree `partialExprs` inlines before falling back to `partials`. */
const MAX_EXPR_NODES = 4000

/**
 * A pure Tenet primitive whose value is `body` and whose partial derivatives are derived by the
 * UNF reverse transform. Register it with `registry.registerPrimitive(unfPrimitive({...}))`.
 */
export function unfPrimitive(def: UnfPrimitiveDefinition): PurePrimitiveSpec {
  const body =
    typeof def.body === 'string'
      ? parseProgram(`(${def.params.map((p) => `${p}: R`).join(', ')}) => ${def.body}`).body
      : def.body
  const compiled = compile(
    def.params.map((p) => [p, R]),
    body,
    def.registry ? { registry: def.registry } : {},
  )
  const value = compiled.value as (...a: number[]) => number
  const gradient = compiled.gradient as (...a: number[]) => [number, number[]]
  const template = gradientExprs(compiled.stages.optimized, def.params)
  return {
    specificationVersion: 'v1',
    name: def.name,
    kind: 'pure',
    arity: def.params.length,
    description: def.description ?? `${def.name} (partials derived by @tenet/unf)`,
    evaluate: value,
    partials: (...a: number[]) => gradient(...a)[1],
    ...(template ? { partialExprs: (args: Expr[]) => template.map((t) => instantiate(t, args)) } : {}),
  }
}

/** The gradient components of ⟨value, ⟨g…⟩⟩ as Tenet expressions over `$argI` placeholders, or undefined. */
function gradientExprs(t: Term, params: string[]): Expr[] | undefined {
  const env = new Map<string, Expr>(params.map((p, i) => [p, { kind: 'var', name: `$arg${i}` }]))
  let nodes = 0
  type Shape = Expr | Shape[]
  const go = (x: Term, e: Map<string, Expr>): Shape | undefined => {
    if (++nodes > MAX_EXPR_NODES) return undefined
    switch (x.k) {
      case 'const':
        return { kind: 'num', value: x.value, isFloat: true }
      case 'var':
        return e.get(x.name)
      case 'let': {
        const val = go(x.value, e)
        if (val === undefined || Array.isArray(val)) return undefined
        return go(x.body, new Map(e).set(x.name, val))
      }
      case 'tuple': {
        const items = x.items.map((i) => go(i, e))
        return items.some((i) => i === undefined) ? undefined : (items as Expr[])
      }
      case 'proj': {
        const of = go(x.of, e)
        return Array.isArray(of) ? of[x.index] : undefined
      }
      case 'op': {
        const args = x.args.map((a) => go(a, e))
        if (args.some((a) => a === undefined || Array.isArray(a))) return undefined
        const as = args as Expr[]
        if (['+', '-', '*', '/'].includes(x.op)) return { kind: 'binary', op: x.op as '+', left: as[0]!, right: as[1]! }
        if (x.op === 'neg') return { kind: 'unary', op: '-', arg: as[0]! }
        if (x.op === 'square') return { kind: 'binary', op: '*', left: as[0]!, right: structuredClone(as[0]!) }
        if (['<', '<=', '>', '>=', '==', '!='].includes(x.op)) return undefined
        return { kind: 'call', callee: x.op, args: as }
      }
      default:
        return undefined // conditionals and loops: no expression form
    }
  }
  const r = go(t, env)
  if (!Array.isArray(r) || r.length !== 2) return undefined
  const grads = r[1]
  return Array.isArray(grads) && grads.every((g) => g !== undefined && !Array.isArray(g))
    ? (grads as Expr[])
    : undefined
}

/** A copy of a partial-derivative template with the call's argument expressions put in. */
function instantiate(t: Expr, args: Expr[]): Expr {
  const go = (x: Expr): Expr => {
    switch (x.kind) {
      case 'var': {
        const m = /^\$arg(\d+)$/.exec(x.name)
        if (!m) throw new UnfError('unf/internal', `unexpected variable ${x.name} in a derived partial`)
        return structuredClone(args[Number(m[1])]!)
      }
      case 'unary':
        return { ...x, arg: go(x.arg) }
      case 'binary':
        return { ...x, left: go(x.left), right: go(x.right) }
      case 'call':
        return { ...x, args: x.args.map(go) }
      default:
        return structuredClone(x)
    }
  }
  return go(t)
}
