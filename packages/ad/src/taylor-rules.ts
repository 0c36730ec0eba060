/**
 * Taylor rules read from the registry. A primitive's series comes from its spec: its `taylor`
 * rule (`ode` or `expression`, written in its own file, `ir/src/stdlib/<NAME>.ts` or a user's
 * module), or, without one, from its `partialExprs`, as the ODE z′ = Σᵢ ∂ᵢf·xᵢ′ (so a primitive
 * whose partials are written as expressions gets Taylor mode with no rule at all). A bijection's
 * comes from its `taylor.map`. This package keeps no table by primitive name.
 *
 * Rules are expressions over placeholder arguments (`$$taylor<k>`); `ruleSeries` evaluates one
 * on series, each placeholder bound to an argument's series. A rule that calls a primitive on the
 * same argument series as a call already formed in the scope reads that call's series (exp's
 * ψ = exp(x) is its own result; sin's ψ = cos x and cos's ψ = −sin x read each other), so the
 * recurrences cost what the hand-written ones did.
 */
import {
  printExpr,
  type BijectionSpec,
  type Expr,
  type PurePrimitiveSpec,
  type Registry,
  type ScalarTypeName,
} from '@tenet/ir'
import { call, derivativeOrigin, lit, ref, registryPartials, typeOf, type PartialsResolver } from './expr.js'
import {
  type SeriesScope,
  binarySeries,
  constantSeries,
  lazySeries,
  negSeries,
  noRule,
  odeSeries,
  quotientOdeSeries,
  type Series,
} from './taylor-series.js'

/** The placeholder of argument k in a rule (the result of an `ode` rule is argument `arity`). */
const placeholder = (k: number): string => `$$taylor${k}`
const placeholders = (n: number): Expr[] => Array.from({ length: n }, (_, k) => ref(placeholder(k)))

/** How a bijection's rule changes one `inout` argument. */
export type TargetChange =
  /** The new value is the old one plus (`+=`) or minus (`-=`) an expression of the `in` arguments (`null`: a constant). */
  | { kind: 'update'; op: '+=' | '-='; value: Expr | null }
  /** Anything else: the new series is computed from the old ones. */
  | { kind: 'map'; value: Expr }

/** A bijection's Taylor rule, over placeholders of its arguments. */
export interface BijectionRule {
  spec: BijectionSpec
  /** Per `inout` argument, in order. */
  changes: TargetChange[]
  /** The new values of the `inout` arguments, in order (the rule's `map`). */
  maps: Expr[]
  linear: boolean
}

/** The Taylor rules of a registry's primitives (one per Taylor transform: its helper primitives go into `registry`). */
export class TaylorRules {
  private readonly partials: PartialsResolver
  /** Primitives whose `expression` rule is being expanded (one that calls itself is an error, not a stack overflow). */
  private readonly expanding = new Set<string>()

  constructor(
    readonly registry: Registry,
    hosts: unknown[],
  ) {
    this.partials = registryPartials(registry, hosts)
  }

  /** The series of `callee(args)`, `value` its coefficient 0; a clear error when the primitive has no rule. */
  call(scope: SeriesScope, callee: string, args: Series[], value: Expr, loc?: Expr['loc']): Series {
    if (args.every((a) => a.constant)) return constantSeries(value)
    const known = scope.recall(callee, args)
    if (known) return known
    if (callee.startsWith('$host'))
      noRule(
        'an interpolated host function has no Taylor rule; register it as a pure primitive with partials written as Tenet text (or a `taylor` rule) to propagate Taylor series through it',
        loc,
      )
    const spec = this.registry.findPrimitive(callee)
    if (spec?.kind !== 'pure') return noRule(`\`${callee}\` is not a pure primitive`, loc)
    if (spec.argKinds?.some((k) => k === 'array'))
      noRule(`the primitive \`${callee}\` takes an array: Taylor mode propagates scalar primitives only`, loc)
    const xs = args.map(f64Series)
    const env = (extra: Series[] = []) => new Map([...xs, ...extra].map((a, k) => [placeholder(k), a]))
    const rule = spec.taylor
    if (rule?.kind === 'expression') {
      if (this.expanding.has(callee))
        noRule(
          `the Taylor expression of primitive \`${callee}\` calls \`${callee}\` again: write its rule as an \`ode\``,
          loc,
        )
      this.expanding.add(callee)
      let e: Series
      try {
        e = this.ruleSeries(scope, rule.expression(placeholders(spec.arity)), env(), loc)
      } finally {
        this.expanding.delete(callee)
      }
      // the value is the primitive's own; the higher coefficients the expression's
      const out = lazySeries(scope, value, (j) => e.coef(j))
      scope.remember(callee, args, out)
      return out
    }
    const psi =
      rule?.kind === 'ode'
        ? rule.derivatives(placeholders(spec.arity), ref(placeholder(spec.arity)))
        : this.derivedPartials(spec, loc)
    // ψ = 0 wherever the argument moves: a step function, constant along the line
    if (psi.every((p, k) => args[k]!.constant || (p.kind === 'num' && p.value === 0))) return constantSeries(value)
    // ψᵢ = uᵢ/v with one v for every moving argument: v·z′ = Σ uᵢ·xᵢ′, one convolution less per coefficient
    const quotients = psi.map((p, k) => (args[k]!.constant ? null : quotient(p)))
    const moving = quotients.filter((q) => q !== null)
    const den = moving.length > 0 && moving.length === args.filter((a) => !a.constant).length ? moving[0]!.v : null
    const out =
      den && moving.every((q) => printExpr(q.v) === printExpr(den))
        ? quotientOdeSeries(scope, xs, value, (z) => ({
            u: quotients.map((q) => (q ? this.ruleSeries(scope, q.u, env([z]), loc) : constantSeries(lit(0)))),
            v: this.ruleSeries(scope, den, env([z]), loc),
          }))
        : odeSeries(scope, xs, value, (z) => psi.map((p) => this.ruleSeries(scope, p, env([z]), loc)))
    scope.remember(callee, args, out)
    return out
  }

  /** The partials as expressions over placeholders (the default rule), or the error naming the primitive. */
  private derivedPartials(spec: PurePrimitiveSpec, loc?: Expr['loc']): Expr[] {
    if (!spec.partialExprs) {
      const origin = derivativeOrigin(spec)
      if (origin !== undefined)
        noRule(
          `${origin} has a piecewise partial without partials of its own, so Taylor mode cannot propagate it; give the piecewise partial \`partials\` (its derivatives as Tenet text) or the primitive a \`taylor\` rule`,
          loc,
        )
      noRule(
        `primitive \`${spec.name}\` has no Taylor rule; write its partials as Tenet expression text (\`partials: ['3.0 * x * x']\` with \`unary\`, \`binary\` or \`pure\`), from which Taylor mode derives its series, or give it a \`taylor\` rule (\`taylor: { ode: […] }\` or \`{ expression: '…' }\`)`,
        loc,
      )
    }
    return this.partials.partials(spec.name, placeholders(spec.arity), loc)
  }

  /** The series of a rule's expression, each placeholder bound to its series in `env`. */
  ruleSeries(scope: SeriesScope, e: Expr, env: Map<string, Series>, loc?: Expr['loc']): Series {
    switch (e.kind) {
      case 'num':
        return constantSeries(lit(e.value))
      case 'var': {
        const s = env.get(e.name)
        if (!s) return noRule(`a Taylor rule reads \`${e.name}\`, which is not one of its arguments`, loc)
        return s
      }
      case 'unary':
        if (e.op === '-') return negSeries(this.ruleSeries(scope, e.arg, env, loc))
        break
      case 'binary': {
        const a = this.ruleSeries(scope, e.left, env, loc),
          b = this.ruleSeries(scope, e.right, env, loc)
        const out = binarySeries(scope, e.op, a, b)
        if (out) return out
        break
      }
      case 'call': {
        const args = e.args.map((x) => this.ruleSeries(scope, x, env, loc))
        if (e.callee === 'f64' || e.callee === 'convert') return args[0]!
        return this.call(scope, e.callee, args, call(e.callee, ...args.map((a) => a.coef(0)!)), loc)
      }
      default:
        break
    }
    return noRule(`Taylor mode cannot propagate a rule's \`${e.kind}\` expression`, loc)
  }

  /** The Taylor rule of a bijection (over placeholders of its arguments), or the error naming it. */
  bijection(spec: BijectionSpec, loc?: Expr['loc']): BijectionRule {
    const rule = spec.taylor
    if (!rule)
      return noRule(
        `bijection \`${spec.name}\` has no Taylor rule; give it \`taylor: { map: […] }\` (the new value of each inout argument as Tenet text over its arguments), or mark it \`selfAdjoint\` if it is linear and its own transpose`,
        loc,
      )
    const n = spec.roles.length
    const maps = rule.map(placeholders(n))
    const inout = spec.roles.flatMap((r, k) => (r === 'inout' ? [placeholder(k)] : []))
    const readsInout = (e: Expr): boolean => reads(e).some((v) => inout.includes(v))
    const changes = maps.map((m, i): TargetChange => {
      const self = inout[i]!
      if (m.kind === 'var' && m.name === self) return { kind: 'update', op: '+=', value: null }
      if (m.kind === 'binary' && (m.op === '+' || m.op === '-') && !readsInout(m.right)) {
        if (m.left.kind === 'var' && m.left.name === self)
          return { kind: 'update', op: m.op === '+' ? '+=' : '-=', value: constantRule(m.right) ? null : m.right }
        if (m.op === '+' && m.right.kind === 'var' && m.right.name === self && !readsInout(m.left))
          return { kind: 'update', op: '+=', value: constantRule(m.left) ? null : m.left }
      }
      return { kind: 'map', value: m }
    })
    return { spec, changes, maps, linear: rule.linear === true }
  }

  /** The placeholder environment of a bijection's arguments. */
  bijectionEnv(series: Array<Series | undefined>): Map<string, Series> {
    const env = new Map<string, Series>()
    series.forEach((s, k) => {
      if (s) env.set(placeholder(k), f64Series(s))
    })
    return env
  }
}

/** A constant argument as an f64 value (an integer literal as a float one, another type converted). */
function f64Series(a: Series): Series {
  if (!a.constant) return a
  const v = a.coef(0)!
  if (v.kind === 'num') return constantSeries(lit(v.value))
  const t: ScalarTypeName | undefined = typeOf(v)
  return t === undefined || t === 'f64' ? a : constantSeries(call('f64', v))
}

/** A rule's ψ as numerator and denominator (`u / v`, `−(u / v)`), or null. */
function quotient(e: Expr): { u: Expr; v: Expr } | null {
  if (e.kind === 'binary' && e.op === '/') return { u: e.left, v: e.right }
  if (e.kind === 'unary' && e.op === '-') {
    const q = quotient(e.arg)
    return q && { u: { kind: 'unary', op: '-', arg: q.u }, v: q.v }
  }
  return null
}

/** Placeholder names an expression reads. */
function reads(e: Expr, out: string[] = []): string[] {
  switch (e.kind) {
    case 'var':
      out.push(e.name)
      break
    case 'unary':
      reads(e.arg, out)
      break
    case 'binary':
      reads(e.left, out)
      reads(e.right, out)
      break
    case 'call':
      for (const a of e.args) reads(a, out)
      break
    default:
      break
  }
  return out
}

/** Whether a rule's expression reads no argument (a literal, or arithmetic of literals). */
function constantRule(e: Expr): boolean {
  return reads(e).length === 0
}
