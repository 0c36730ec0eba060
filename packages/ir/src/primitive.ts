/**
 * Builders of primitive specs: one primitive is one file (`stdlib/<NAME>.ts`, or a user's own
 * module) that states its forward semantics, inverse, derivatives and lowerings together, with
 * `unary`, `binary`, `pure`, `bijection` and `selfInverse`. Partial derivatives may be written
 * as Tenet expression text over the parameter names (`partials: ['3.0 * x * x']`): they become
 * `partialExprs` (the AD transforms inline them, and differentiate them again for Hessians and
 * forward mode) and numeric `partials` (for engines that want numbers). A Taylor-mode rule may be
 * written the same way (`taylor: { ode: ['y'] }` for exp: y′ = y·x′); without one, Taylor mode
 * derives it from the partials.
 */
import type { Expr, Stmt } from './ast.js'
import { RegistryError, TenetError } from './errors.js'
import { parse } from './parser.js'
import type {
  BijectionEmitters,
  BijectionSpec,
  BijectionTaylorRule,
  PartialFunction,
  PureEmitters,
  PurePrimitiveSpec,
  PureTaylorRule,
} from './plugin.js'

/**
 * A partial derivative that no expression writes (piecewise: ∂abs, ∂min, ∂max), as the builders
 * take it: evaluated by a helper primitive that `@tenet/ad` generates. `partials` (expression
 * text over the primitive's parameter names) are its own derivatives, for second order.
 */
export interface PiecewisePartial {
  piecewise: (...args: number[]) => number
  emit?: PureEmitters
  partials?: string[]
}

/**
 * A pure primitive's Taylor-mode rule as Tenet text (see `PureTaylorRule`):
 * - `{ ode: [ψ₁, …] }`: the result z satisfies z′ = Σᵢ ψᵢ·xᵢ′, each ψᵢ an expression over the
 *   parameters and the result, named `y` unless `result` names it otherwise (exp: `['y']`;
 *   tan: `['1.0 + y * y']`; log: `['1.0 / x']`; atan2(y, x) with `result: 'z'`);
 * - `{ expression }`: the primitive equals this expression over its parameters (pow: `'x ** p'`).
 */
export type TaylorText = { ode: string[]; result?: string } | { expression: string }

/** A bijection's Taylor-mode rule as Tenet text (see `BijectionTaylorRule`): the new value of each `inout` parameter, in order, over the old values of the parameters. */
export interface BijectionTaylorText {
  map: string[]
  /** The new values are linear in the `inout` parameters (see `BijectionTaylorRule.linear`). */
  linear?: boolean
}

/** What `pure` takes (`unary` and `binary` name the parameters for you). */
export interface PureOptions {
  name: string
  /** One line for docs and error messages. */
  description?: string
  /** Parameter names, as the partials' text reads them (also the arity). */
  params: string[]
  /** Reference semantics on JS numbers. */
  evaluate: (...args: number[]) => number
  /**
   * ∂f/∂paramᵢ, one per parameter: Tenet expression text (`'cos(x)'`), or a `PiecewisePartial`;
   * or a JS function returning all of them as numbers (a gradient only: no second order).
   */
  partials?: Array<string | PiecewisePartial> | ((...args: number[]) => number[])
  /**
   * The Taylor-mode rule (see `TaylorText`). Optional: without it, Taylor mode derives one from
   * partials written as text (z′ = Σᵢ ∂ᵢf·xᵢ′); give one where the result's own series makes it
   * cheaper (exp, tan) or where the partials are numeric.
   */
  taylor?: TaylorText
  /** Lowerings per backend (cpu, wasm, wgsl). */
  emit?: PureEmitters
  signature?: PurePrimitiveSpec['signature']
  /** Replace an existing primitive of the same name. */
  override?: boolean
}

/** `pure` with one parameter, named `x` unless `params` says otherwise. */
export function unary(o: Omit<PureOptions, 'params'> & { params?: [string] }): PurePrimitiveSpec {
  return pure({ ...o, params: o.params ?? ['x'] })
}

/** `pure` with two parameters, named `x` and `y` unless `params` says otherwise. */
export function binary(o: Omit<PureOptions, 'params'> & { params?: [string, string] }): PurePrimitiveSpec {
  return pure({ ...o, params: o.params ?? ['x', 'y'] })
}

/**
 * A pure primitive (`y += f(x, …)`). Partials written as text are parsed now: a syntax error, or
 * a name that is neither a parameter nor a function, is a `RegistryError` naming the primitive.
 */
export function pure(o: PureOptions): PurePrimitiveSpec {
  const spec: PurePrimitiveSpec = {
    specificationVersion: 'v1',
    name: o.name,
    kind: 'pure',
    arity: o.params.length,
    evaluate: o.evaluate,
    ...(o.description !== undefined ? { description: o.description } : {}),
    ...(o.emit ? { emit: o.emit } : {}),
    ...(o.signature ? { signature: o.signature } : {}),
    ...(o.override ? { override: true } : {}),
    ...(o.taylor ? { taylor: pureTaylor(o.name, o.params, o.taylor) } : {}),
  }
  const ps = o.partials
  if (typeof ps === 'function') return { ...spec, partials: ps }
  if (!ps) return spec
  if (ps.length !== o.params.length) {
    throw new RegistryError(
      'registry/spec',
      `primitive \`${o.name}\` has ${o.params.length} parameter${o.params.length === 1 ? '' : 's'} but ${ps.length} partial${ps.length === 1 ? '' : 's'}`,
    )
  }
  const rules = ps.map((p, k) =>
    typeof p === 'string' ? partialExpression(o.name, o.params, p, k) : piecewise(o.name, o.params, p, k),
  )
  const numeric = rules.map((r) => r.numeric)
  return {
    ...spec,
    partialExprs: (args) => rules.map((r) => r.expr(args)),
    ...(numeric.every((f) => f !== undefined)
      ? { partials: numericPartials(numeric as Array<(a: number[]) => number>) }
      : {}),
  }
}

/** What `bijection` takes. */
export interface BijectionOptions {
  name: string
  description?: string
  /** Parameter names, as the `adjoint` and `tangent` snippets read them. */
  params: string[]
  /** `inout` (updated) or `in` (read only), per parameter. */
  roles: Array<'inout' | 'in'>
  types?: BijectionSpec['types']
  /** New values of the `inout` arguments, in order, given all arguments. */
  apply: (...args: number[]) => number[]
  /** `'self'` for an involution, otherwise the name of the registered inverse bijection. */
  inverse: 'self' | string
  /** The adjoint rule as Tenet text over the params and `g_<param>` (see `BijectionSpec.adjoint`). */
  adjoint?: string
  /** Whether the adjoint rule reads the old values (default) or the new ones (see `BijectionSpec.adjointReads`). */
  adjointReads?: 'old' | 'new'
  /** The tangent rule as Tenet text over the params and `t_<param>` (see `BijectionSpec.tangent`). */
  tangent?: string
  /** Linear and its own transpose: the tangent and adjoint apply the bijection itself (see `BijectionSpec.selfAdjoint`). */
  selfAdjoint?: boolean
  /** The Taylor-mode rule (see `BijectionTaylorText`); a `selfAdjoint` bijection needs none. */
  taylor?: BijectionTaylorText
  emit?: BijectionEmitters
  override?: boolean
}

/**
 * A bijection (`ROT(a, b, θ)`). The snippets are parsed now: a syntax error is a
 * `RegistryError` naming the bijection and the rule.
 */
export function bijection(o: BijectionOptions): BijectionSpec {
  if (o.roles.length !== o.params.length) {
    throw new RegistryError(
      'registry/spec',
      `bijection \`${o.name}\` has ${o.params.length} parameters but ${o.roles.length} roles`,
    )
  }
  if (o.selfAdjoint && o.roles.some((r) => r !== 'inout')) {
    throw new RegistryError(
      'registry/spec',
      `bijection \`${o.name}\` is \`selfAdjoint\`, so every argument must be \`inout\``,
    )
  }
  if (o.adjointReads !== undefined && o.adjointReads !== 'old' && o.adjointReads !== 'new') {
    throw new RegistryError(
      'registry/spec',
      `bijection \`${o.name}\`: \`adjointReads\` is 'old' or 'new', not ${JSON.stringify(o.adjointReads)}`,
    )
  }
  const rule = (kind: 'adjoint' | 'tangent', text: string | undefined, prefix: string) => {
    if (text === undefined) return {}
    const params = [...o.params, ...o.params.map((p) => `${prefix}${p}`)].map((p) => `${p}: f64`)
    parseChecked(o.name, `${kind} rule`, `fn ${kind}_rule(${params.join(', ')}) {\n${text}\n}`)
    return { [kind]: { params: [...o.params], source: text } }
  }
  return {
    specificationVersion: 'v1',
    name: o.name,
    kind: 'bijection',
    roles: [...o.roles],
    apply: o.apply,
    inverse: o.inverse,
    ...(o.types ? { types: o.types } : {}),
    ...rule('adjoint', o.adjoint, 'g_'),
    ...(o.adjointReads === 'new' ? { adjointReads: 'new' as const } : {}),
    ...rule('tangent', o.tangent, 't_'),
    ...(o.selfAdjoint ? { selfAdjoint: true } : {}),
    ...(o.taylor ? { taylor: bijectionTaylor(o.name, o.params, o.roles, o.taylor) } : {}),
    ...(o.description !== undefined ? { description: o.description } : {}),
    ...(o.emit ? { emit: o.emit } : {}),
    ...(o.override ? { override: true } : {}),
  }
}

/** A bijection that is its own inverse (`inverse: 'self'`). */
export function selfInverse(o: Omit<BijectionOptions, 'inverse'>): BijectionSpec {
  return bijection({ ...o, inverse: 'self' })
}

// ---------- partials as text ----------

interface Rule {
  /** The partial at the argument expressions (fresh nodes). */
  expr: (args: Expr[]) => Expr | PartialFunction
  /** The partial on numbers, when every function it calls is known here. */
  numeric: ((a: number[]) => number) | undefined
}

function parseChecked(name: string, what: string, text: string) {
  try {
    return parse({ text, name: `${what} of ${name}` })
  } catch (e) {
    if (TenetError.isInstance(e))
      throw new RegistryError('registry/spec', `in the ${what} of primitive \`${name}\`: ${e.message}`)
    throw e
  }
}

/** Parses `what` (partial `k + 1`, a Taylor rule) of primitive `name`, written as expression text over `params`. */
function template(name: string, params: string[], text: string, k: number | string): Expr {
  const what = typeof k === 'number' ? `partial ${k + 1}` : k
  const sink = '__tenet_partial'
  const m = parseChecked(
    name,
    what,
    `fn partial(${[...params, sink].map((p) => `${p}: f64`).join(', ')}) {\n${sink} += (${text})\n}`,
  )
  const body: Stmt[] = m.functions[0]!.body
  const s = body[0]
  if (body.length !== 1 || s?.kind !== 'update')
    throw new RegistryError(
      'registry/spec',
      `${what} of primitive \`${name}\` (${JSON.stringify(text)}) is not one expression`,
    )
  const e = s.value
  const bad = freeNames(e).filter((v) => !params.includes(v))
  if (bad.length) {
    throw new RegistryError(
      'registry/spec',
      `${what} of primitive \`${name}\` (${JSON.stringify(text)}) reads \`${bad[0]}\`, which is not one of its parameters (${params.join(', ')})`,
    )
  }
  return e
}

function partialExpression(name: string, params: string[], text: string, k: number): Rule {
  const t = template(name, params, text, k)
  return { expr: (args) => substitute(t, params, args), numeric: compileNumeric(t, params) }
}

function piecewise(name: string, params: string[], p: PiecewisePartial, k: number): Rule {
  const own = p.partials?.map((text, j) => template(`∂${name}/∂${params[k]}`, params, text, j))
  const fn: PartialFunction = {
    evaluate: p.piecewise,
    ...(p.emit ? { emit: p.emit } : {}),
    ...(own ? { partialExprs: (args: Expr[]) => own.map((t) => substitute(t, params, args)) } : {}),
  }
  const f = p.piecewise
  return { expr: () => fn, numeric: (a) => f(...a) }
}

/** A pure primitive's Taylor rule from text: parsed and checked now (`RegistryError` naming the primitive). */
function pureTaylor(name: string, params: string[], t: TaylorText): PureTaylorRule {
  if ('expression' in t) {
    const e = template(name, params, t.expression, 'Taylor expression')
    return { kind: 'expression', expression: (args) => substitute(e, params, args) }
  }
  const result = t.result ?? 'y'
  if (params.includes(result))
    throw new RegistryError(
      'registry/spec',
      `the Taylor rule of primitive \`${name}\` names its result \`${result}\`, which is a parameter: name the result with \`result\``,
    )
  if (!Array.isArray(t.ode) || t.ode.length !== params.length)
    throw new RegistryError(
      'registry/spec',
      `the Taylor rule of primitive \`${name}\` needs one \`ode\` entry per parameter (${params.length}), got ${Array.isArray(t.ode) ? t.ode.length : typeof t.ode}`,
    )
  const names = [...params, result]
  const ts = t.ode.map((text, k) => template(name, names, text, `Taylor rule ${k + 1}`))
  return { kind: 'ode', derivatives: (args, r) => ts.map((e) => substitute(e, names, [...args, r])) }
}

/** A bijection's Taylor rule from text: one expression per `inout` parameter, over the parameters. */
function bijectionTaylor(
  name: string,
  params: string[],
  roles: Array<'inout' | 'in'>,
  t: BijectionTaylorText,
): BijectionTaylorRule {
  const outs = roles.filter((r) => r === 'inout').length
  if (!Array.isArray(t.map) || t.map.length !== outs)
    throw new RegistryError(
      'registry/spec',
      `the Taylor rule of bijection \`${name}\` needs one \`map\` entry per inout parameter (${outs}), got ${Array.isArray(t.map) ? t.map.length : typeof t.map}`,
    )
  const ts = t.map.map((text, k) => template(name, params, text, `Taylor map ${k + 1}`))
  return {
    map: (args) => ts.map((e) => substitute(e, params, args)),
    ...(t.linear ? { linear: true } : {}),
  }
}

function numericPartials(fs: Array<(a: number[]) => number>): (...args: number[]) => number[] {
  return (...args) => fs.map((f) => f(args))
}

/** Names read by an expression (variables and arrays). */
function freeNames(e: Expr, out: string[] = []): string[] {
  switch (e.kind) {
    case 'var':
      out.push(e.name)
      break
    case 'index':
      out.push(e.array.name)
      freeNames(e.index, out)
      break
    case 'field':
      freeNames(e.target, out)
      break
    case 'unary':
      freeNames(e.arg, out)
      break
    case 'binary':
      freeNames(e.left, out)
      freeNames(e.right, out)
      break
    case 'call':
      for (const a of e.args) freeNames(a, out)
      break
    default:
      break
  }
  return out
}

/** A fresh copy of template `t` with each parameter replaced by (a copy of) its argument; source locations dropped. */
function substitute(t: Expr, params: string[], args: Expr[]): Expr {
  const go = (e: Expr): Expr => {
    switch (e.kind) {
      case 'var': {
        const i = params.indexOf(e.name)
        return i >= 0 ? copy(args[i]!) : { kind: 'var', name: e.name }
      }
      case 'num':
        return { kind: 'num', value: e.value, isFloat: e.isFloat }
      case 'bool':
        return { kind: 'bool', value: e.value }
      case 'unary':
        return { kind: 'unary', op: e.op, arg: go(e.arg) }
      case 'binary':
        return { kind: 'binary', op: e.op, left: go(e.left), right: go(e.right) }
      case 'call':
        return { kind: 'call', callee: e.callee, args: e.args.map(go) }
      case 'index':
        return { kind: 'index', array: { kind: 'var', name: e.array.name }, index: go(e.index) }
      case 'field':
        return { kind: 'field', target: go(e.target), field: e.field }
    }
  }
  return go(t)
}

/** A deep copy (argument expressions are shared between partials; the checker annotates in place). */
function copy<T>(x: T): T {
  if (typeof x !== 'object' || x === null) return x
  if (Array.isArray(x)) return x.map(copy) as T
  const out: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(x)) out[k] = k === 'loc' ? v : copy(v)
  return out as T
}

/** The JS functions numeric partials may call (the standard elementary functions). */
const MATH: Record<string, (...a: number[]) => number> = {
  sin: Math.sin,
  cos: Math.cos,
  tan: Math.tan,
  exp: Math.exp,
  log: Math.log,
  sqrt: Math.sqrt,
  abs: Math.abs,
  sinh: Math.sinh,
  cosh: Math.cosh,
  tanh: Math.tanh,
  asin: Math.asin,
  acos: Math.acos,
  atan: Math.atan,
  atan2: Math.atan2,
  pow: Math.pow,
  min: Math.min,
  max: Math.max,
  f64: (x) => x,
  identity: (x) => x,
  f32: Math.fround,
  abs2: (x) => x * x,
}

/** The template as a closure over the argument vector (no code generation), or undefined when it calls a function not in `MATH`. */
function compileNumeric(t: Expr, params: string[]): ((a: number[]) => number) | undefined {
  const go = (e: Expr): ((a: number[]) => number) | undefined => {
    switch (e.kind) {
      case 'num': {
        const v = e.value
        return () => v
      }
      case 'var': {
        const i = params.indexOf(e.name)
        return i < 0 ? undefined : (a) => a[i]!
      }
      case 'unary': {
        const f = go(e.arg)
        return f && e.op === '-' ? (a) => -f(a) : undefined
      }
      case 'binary': {
        const l = go(e.left),
          r = go(e.right)
        if (!l || !r) return undefined
        switch (e.op) {
          case '+':
            return (a) => l(a) + r(a)
          case '-':
            return (a) => l(a) - r(a)
          case '*':
            return (a) => l(a) * r(a)
          case '/':
            return (a) => l(a) / r(a)
          case '**':
            return (a) => Math.pow(l(a), r(a))
          default:
            return undefined
        }
      }
      case 'call': {
        const f = Object.hasOwn(MATH, e.callee) ? MATH[e.callee]! : undefined
        const as = e.args.map(go)
        if (!f || as.some((x) => !x)) return undefined
        const fs = as as Array<(a: number[]) => number>
        if (fs.length === 1) {
          const [x] = fs
          return (a) => f(x!(a))
        }
        if (fs.length === 2) {
          const [x, y] = fs
          return (a) => f(x!(a), y!(a))
        }
        return (a) => f(...fs.map((g) => g(a)))
      }
      default:
        return undefined
    }
  }
  return go(t)
}
