/**
 * Expression helpers of the adjoint transform: small constructors for untyped IR expressions
 * (the checker types them when the adjoint is checked), and reverse-mode differentiation of a
 * pure expression tree into straight-line partial-derivative expressions.
 */
import {
  TenetStaticError,
  printExpr,
  type BinaryOp,
  type Dataview,
  type Expr,
  type FunctionDef,
  type IndexExpr,
  type PartialFunction,
  type PureEmitters,
  type PurePrimitiveSpec,
  type Registry,
  type ScalarTypeName,
  type Stmt,
  type VarRef,
} from '@tenet/ir'
import { arrayElementType, arrayPrimitivePartials, dualHostPartials, type HostPullback } from './dual-host.js'

/**
 * A deep copy of an expression (the checker annotates nodes in place; copies keep them apart).
 * Iterative, so a chain of thousands of terms does not overflow the stack; source locations
 * are immutable and shared, not copied.
 */
export function clone<T>(e: T): T {
  if (typeof e !== 'object' || e === null) return e
  const fresh = (v: object): Record<string, unknown> =>
    Array.isArray(v) ? (new Array(v.length) as unknown as Record<string, unknown>) : {}
  const root = fresh(e)
  const stack: Array<[Record<string, unknown>, Record<string, unknown>]> = [[e as Record<string, unknown>, root]]
  while (stack.length) {
    const [from, to] = stack.pop()!
    for (const k of Object.keys(from)) {
      const v = from[k]
      if (typeof v !== 'object' || v === null || k === 'loc') {
        to[k] = v
        continue
      }
      const c = fresh(v)
      to[k] = c
      stack.push([v as Record<string, unknown>, c])
    }
  }
  return root as T
}

/** A float literal (typed f64, or f32 where the context is f32). */
export const lit = (value: number): Expr => ({ kind: 'num', value, isFloat: true })
export const ref = (name: string): VarRef => ({ kind: 'var', name })
export const at = (name: string, index: Expr): IndexExpr => ({ kind: 'index', array: ref(name), index })
export const call = (callee: string, ...args: Expr[]): Expr => ({ kind: 'call', callee, args })
export const bin = (op: BinaryOp, left: Expr, right: Expr): Expr => ({ kind: 'binary', op, left, right })

const isLit = (e: Expr, v: number) => e.kind === 'num' && e.value === v

/** `a * b`, dropping literal ones. */
export function mul(a: Expr, b: Expr): Expr {
  if (isLit(a, 1)) return b
  if (isLit(b, 1)) return a
  return bin('*', a, b)
}
/** `-a`, folding double negation. */
export function neg(a: Expr): Expr {
  if (a.kind === 'unary' && a.op === '-') return a.arg
  if (a.kind === 'num') return { ...a, value: -a.value }
  return { kind: 'unary', op: '-', arg: a }
}
/** `a + b`. */
export const add = (a: Expr, b: Expr): Expr => bin('+', a, b)

/**
 * `e` as ±|e|: the negations of a product, quotient, sum or difference moved out of it (`-a * b`
 * → −(a·b), `-a + -b` → −(a + b), `a + -b` → a − b, `a * -2.0` → −(a·2.0)), so that an update
 * `g += e` can be `g -= |e|` without computing a negation. Each step is exact in floating point
 * (negation commutes with rounding; `x + (−y)` is `x − y`), so the value is bit for bit the same.
 * Calls, indices and other leaves are left as they are.
 */
export function pullSign(e: Expr): { negative: boolean; value: Expr } {
  if (e.kind === 'unary' && e.op === '-') {
    const r = pullSign(e.arg)
    return { negative: !r.negative, value: r.value }
  }
  if (e.kind === 'num' && e.value < 0) return { negative: true, value: { ...e, value: -e.value } }
  if (e.kind !== 'binary') return { negative: false, value: e }
  const l = pullSign(e.left),
    r = pullSign(e.right)
  if (!l.negative && !r.negative)
    return {
      negative: false,
      value: l.value === e.left && r.value === e.right ? e : { ...e, left: l.value, right: r.value },
    }
  switch (e.op) {
    case '*':
    case '/':
      return { negative: l.negative !== r.negative, value: { ...e, left: l.value, right: r.value } }
    case '+':
      // −a + −b = −(a + b); a + −b = a − b; −a + b = b − a
      if (l.negative && r.negative) return { negative: true, value: { ...e, left: l.value, right: r.value } }
      return l.negative
        ? { negative: false, value: { ...e, op: '-', left: r.value, right: l.value } }
        : { negative: false, value: { ...e, op: '-', left: l.value, right: r.value } }
    case '-':
      // a − −b = a + b; −a − b = −(a + b); −a − −b = −(a − b)
      if (l.negative && r.negative) return { negative: true, value: { ...e, left: l.value, right: r.value } }
      return { negative: l.negative, value: { ...e, op: '+', left: l.value, right: r.value } }
    default:
      return { negative: false, value: e }
  }
}

/** The scalar type recorded on a checked expression, if any. */
export function typeOf(e: Expr | Dataview): ScalarTypeName | undefined {
  const t = (e as { type?: unknown }).type
  if (typeof t === 'string') return t
  if (t && typeof t === 'object' && (t as { kind: string }).kind === 'scalar') return (t as { name: string }).name
  return undefined
}

/** Whether a scalar type is a floating-point number system (differentiable). */
export function isFloatType(registry: Registry, t: ScalarTypeName | undefined): boolean {
  return t !== undefined && registry.findNumberSystem(t)?.float === true
}

/**
 * Whether a scalar type is differentiable: a floating-point number system, or one that encodes
 * real numbers (a `toHost` decoding, its own arithmetic and `*=`/`/=` updates: the logarithmic
 * `ulog`). Tropical numbers (no decoding) are not.
 */
export function isDiffType(registry: Registry, t: ScalarTypeName | undefined): boolean {
  const ns = t === undefined ? undefined : registry.findNumberSystem(t)
  return (
    ns !== undefined &&
    (ns.float || (ns.toHost !== undefined && ns.update !== undefined && ns.arithmetic !== undefined))
  )
}

/**
 * Whether a differentiable type is differentiated through its real value (every type but the
 * native floats f64 and f32: fixed point, ulog): its gradient is an f64, and the derivative
 * expressions read its values converted with `f64(...)`.
 */
export function isRealViewType(registry: Registry, t: ScalarTypeName | undefined): boolean {
  return t !== 'f64' && t !== 'f32' && isDiffType(registry, t)
}

/** The scalar type of the gradient (or tangent) of a value of type `t`: f32 for f32, else f64. */
export function gradientScalar(t: ScalarTypeName): ScalarTypeName {
  return t === 'f32' ? 'f32' : 'f64'
}

/**
 * The real-valued version of a checked expression: a copy in which every leaf of a real-view type
 * (fixed, ulog) is read as `f64(leaf)`, `convert(…)` into such a type is the real value of its
 * argument, and the arithmetic between them is f64 arithmetic. Expressions of f64/f32 only are
 * returned as copies, unchanged.
 */
export function realView(e: Expr, registry: Registry): Expr {
  const isReal = (x: Expr | Dataview) => isRealViewType(registry, typeOf(x))
  const asF64 = (x: Expr): Expr =>
    ({ kind: 'call', callee: 'f64', args: [x], type: 'f64', ...(x.loc ? { loc: x.loc } : {}) }) as Expr
  const go = (x: Expr): Expr => {
    switch (x.kind) {
      case 'var':
      case 'index':
        return isReal(x) ? asF64(clone(x)) : clone(x)
      case 'num':
        return isReal(x) ? ({ ...x, isFloat: true, type: 'f64' } as Expr) : clone(x)
      case 'unary':
        return retype({ ...x, arg: go(x.arg) })
      case 'binary':
        return retype({ ...x, left: go(x.left), right: go(x.right) })
      case 'call':
        if (x.callee === 'convert' && isReal(x)) {
          const a = go(x.args[0]!)
          return typeOf(a) === 'f64' ? a : asF64(a)
        }
        return retype({ ...x, args: x.args.map(go) })
      case 'field': {
        // a field of a real-view value (ulog's `x.log`) as its number system's function of the real value
        const ns = isReal(x.target) ? registry.findNumberSystem(typeOf(x.target)!) : undefined
        const rf = ns?.realFields?.[x.field]
        return rf ? typedF64(rf(asF64(go(x.target)))) : clone(x)
      }
      default:
        return clone(x)
    }
  }
  const retype = (x: Expr): Expr => {
    if (isReal(x)) (x as { type?: string }).type = 'f64'
    return x
  }
  // no node of a real-view type (the usual f64 code): the copy, made without recursion
  const todo: Expr[] = [e]
  let any = false
  while (todo.length && !any) {
    const x = todo.pop()!
    if (isReal(x)) any = true
    else if (x.kind === 'binary') todo.push(x.left, x.right)
    else if (x.kind === 'unary') todo.push(x.arg)
    else if (x.kind === 'call') todo.push(...x.args)
    else if (x.kind === 'index') todo.push(x.index)
    else if (x.kind === 'field') todo.push(x.target)
  }
  return any ? go(e) : clone(e)
}

/** Marks every untyped node of an expression built by a number system (`realFields`) as f64. */
function typedF64(e: Expr): Expr {
  const todo: Expr[] = [e]
  while (todo.length) {
    const x = todo.pop()!
    if ((x as { type?: unknown }).type === undefined) (x as { type?: string }).type = 'f64'
    if (x.kind === 'num') (x as { isFloat: boolean }).isFloat = true
    else if (x.kind === 'binary') todo.push(x.left, x.right)
    else if (x.kind === 'unary') todo.push(x.arg)
    else if (x.kind === 'call') todo.push(...x.args)
  }
  return e
}

/** `realView(e)` as an f64 expression (an f32 result is converted), for scaling factors of f64 derivatives. */
export function realF64(e: Expr, registry: Registry): Expr {
  return realAs(e, registry, 'f64')
}

/**
 * e read as a real of the float type `to` (`realView`, then converted to `to` unless it is of that
 * type already): how a bijection's tangent rule reads its arguments, in the type of the tangents.
 */
export function realAs(e: Expr, registry: Registry, to: 'f64' | 'f32'): Expr {
  const r = realView(e, registry)
  const t = typeOf(r)
  return t === undefined || t === to
    ? r
    : ({ kind: 'call', callee: to, args: [r], type: to, ...(r.loc ? { loc: r.loc } : {}) } as Expr)
}

/**
 * `d ← d·E` (`d ← d/E` for `/=`) on an f64 derivative location d (a gradient or a tangent), which
 * has no reversible scaling: d moves into a fresh ancilla τ (`SWAP`), `d += τ·E` (`τ/E`) rounds
 * once, exactly as an f64 product would, and τ is freed without a check; in reverse, τ is
 * recomputed from d (as d/E, or d·E). `tau` must be a fresh name.
 */
export function scaleDerivative(
  d: Dataview,
  op: '*=' | '/=',
  E: Expr,
  tau: string,
  at: { loc?: NonNullable<Expr['loc']> },
): Stmt[] {
  const f64 = { kind: 'scalar', name: 'f64' } as const
  const t = (): Expr => ({ kind: 'var', name: tau, type: 'f64' }) as Expr
  const dv = (): Expr => clone(d) as Expr
  return [
    { kind: 'alloc', name: tau, declared: f64, value: { kind: 'num', value: 0, isFloat: true }, ...at },
    { kind: 'callstmt', callee: 'SWAP', args: [t() as Dataview, clone(d)], inverse: false, ...at },
    { kind: 'update', op: '+=', target: clone(d), value: bin(op === '*=' ? '*' : '/', t(), clone(E)), ...at },
    {
      kind: 'unchecked',
      body: [{ kind: 'dealloc', name: tau, value: bin(op === '*=' ? '/' : '*', dv(), clone(E)), ...at }],
    },
  ] as Stmt[]
}

/** Whether an expression reads differentiable memory (so it has a nonzero derivative somewhere). */
export function readsFloat(e: Expr, registry: Registry): boolean {
  // an explicit stack: a chain of thousands of terms does not recurse per term
  const todo: Expr[] = [e]
  while (todo.length) {
    const x = todo.pop()!
    switch (x.kind) {
      case 'num':
      case 'bool':
        break
      case 'var':
      case 'index':
        if (isDiffType(registry, typeOf(x))) return true
        break
      case 'field':
        if (isDiffType(registry, typeOf(x))) return true
        todo.push(x.target)
        break
      case 'unary':
        todo.push(x.arg)
        break
      case 'binary':
        todo.push(x.right, x.left)
        break
      case 'call':
        if (x.callee === 'len' || x.callee === 'i32' || x.callee === 'div') break
        // a host function reading a float array reads float memory (its derivative must not be a silent zero)
        if (
          (x.callee.startsWith('$host') || registry.findPrimitive(x.callee)?.kind === 'pure') &&
          x.args.some((a) => {
            const t = arrayElementType(a)
            return t !== undefined && isDiffType(registry, t)
          })
        )
          return true
        for (let k = x.args.length - 1; k >= 0; k--) todo.push(x.args[k]!)
        break
    }
  }
  return false
}

/** One term of `∂e/∂leaf · seed`: the float memory location read and its coefficient. */
export interface Contribution {
  leaf: VarRef | IndexExpr
  coefficient: Expr
}

/** Resolves how the partial derivatives of a pure primitive are written in the adjoint. */
export interface PartialsResolver {
  /** The partial derivatives of `callee` at `args` (copies), as expressions. */
  partials(callee: string, args: Expr[], loc: Expr['loc']): Expr[]
  /**
   * The partials of the interpolated host function `callee` (`$hostN`) at `args`, seeded by `seed`
   * (see `dual-host.ts`): an expression per scalar argument, null per array argument (whose
   * contribution is pushed to `collect`).
   */
  hostPartials?(callee: string, args: Expr[], seed: Expr, loc: Expr['loc']): Array<Expr | null>
  /**
   * The partials of a registered primitive with array arguments (`argKinds`) at `args`, seeded by
   * `seed`: an expression per scalar argument, null per array argument (contribution to `collect`).
   */
  arrayPartials?(spec: PurePrimitiveSpec, args: Expr[], seed: Expr, loc: Expr['loc']): Array<Expr | null>
  /** Where array contributions of host calls go while the adjoint transform differentiates (unset: an error). */
  collect?: HostPullback[]
}

/**
 * Partials from the registry: the spec's `partialExprs` (expressions inlined; a `PartialFunction`
 * entry becomes a call of a helper pure primitive `__tenet_d_<name>_<k>`, registered into
 * `registry`, a clone owned by the compilation); else, from numeric `partials`, such a helper
 * for each argument. A helper without partial expressions of its own cannot be differentiated
 * again: differentiating it is an error naming the user's primitive.
 */
export function registryPartials(registry: Registry, hosts: unknown[] = []): PartialsResolver {
  const helper = (
    name: string,
    k: number,
    evaluate: (...a: number[]) => number,
    arity: number,
    origin: string,
    emit?: PureEmitters,
    partialExprs?: (args: Expr[]) => Expr[],
  ): string => {
    const hname = `__tenet_d_${name}_${k}`
    if (!registry.findPrimitive(hname)) {
      const spec: PurePrimitiveSpec = {
        specificationVersion: 'v1',
        name: hname,
        kind: 'pure',
        arity,
        evaluate,
        description: `∂${name}/∂arg${k} (generated by @tenet/ad)`,
        ...(emit ? { emit } : {}),
        ...(partialExprs ? { partialExprs } : {}),
      }
      derivativeOf.set(spec, origin)
      registry.registerPrimitive(spec)
    }
    return hname
  }
  return {
    hostPartials(callee, args, seed, loc) {
      return dualHostPartials(
        hosts as unknown[],
        callee,
        args,
        seed,
        loc,
        (k, evaluate) => helper(`dual${callee.slice(1)}`, k, evaluate, args.length, 'an interpolated host function'),
        clone,
        this.collect,
      )
    },
    arrayPartials(spec, args, seed, loc) {
      return arrayPrimitivePartials(hosts as unknown[], spec, args, seed, loc, clone, this.collect)
    },
    partials(callee, args, loc) {
      const spec = registry.pure(callee)
      if (spec.partialExprs) {
        return spec
          .partialExprs(args)
          .map((p, k) =>
            isPartialFunction(p)
              ? call(
                  helper(
                    callee,
                    k,
                    p.evaluate,
                    spec.arity,
                    derivativeOf.get(spec) ?? `the primitive \`${callee}\``,
                    p.emit,
                    p.partialExprs,
                  ),
                  ...args.map(clone),
                )
              : p,
          )
      }
      if (!spec.partials) {
        const of = derivativeOf.get(spec)
        if (of !== undefined) {
          throw new TenetStaticError(
            'ad/no-derivative',
            `${of} has no second derivative: a partial of it is a JS function (numeric \`partials\`), so only its gradient exists; write its partials as expressions (\`partials: ['…']\` with \`pure\`/\`unary\`/\`binary\`, or \`partialExprs\`) for forward mode through its gradient, Hessians and \`hvp\``,
            loc,
          )
        }
        throw new TenetStaticError(
          'ad/no-derivative',
          `the pure primitive \`${callee}\` has no derivative: register it with \`partials\` or \`partialExprs\` to differentiate through it`,
          loc,
        )
      }
      const partials = spec.partials
      const origin = derivativeOf.get(spec) ?? `the primitive \`${callee}\``
      return args.map((_, k) =>
        call(
          helper(callee, k, (...a: number[]) => partials(...a)[k]!, spec.arity, origin),
          ...args.map(clone),
        ),
      )
    },
  }
}

/** The primitive (or host function) behind each helper primitive `registryPartials` generates, for errors. */
const derivativeOf = new WeakMap<PurePrimitiveSpec, string>()

/** For a helper primitive that `registryPartials` generated: what it is a partial of (for errors); undefined otherwise. */
export function derivativeOrigin(spec: PurePrimitiveSpec): string | undefined {
  return derivativeOf.get(spec)
}

/** Whether a partial is a `PartialFunction` (evaluated by a helper) rather than an expression. */
function isPartialFunction(p: Expr | PartialFunction): p is PartialFunction {
  return typeof (p as PartialFunction).evaluate === 'function'
}

/**
 * Reverse-mode differentiation of a pure expression: returns, for every occurrence of a float
 * memory location read by `e`, the coefficient `seed · ∂e/∂(that occurrence)` as an expression.
 * Subexpressions that read no float memory are constants and contribute nothing.
 */
export function differentiate(
  e: Expr,
  seed: Expr,
  registry: Registry,
  partials: PartialsResolver,
  out: Contribution[] = [],
): Contribution[] {
  if (!readsFloat(e, registry)) return out
  const go = (x: Expr, s: Expr) => differentiate(x, s, registry, partials, out)
  if (e.kind === 'binary' && (e.op === '+' || e.op === '-')) {
    // the left spine of a chain `a + b - c + …` in a loop (every node of it has the same seed):
    // the leftmost operand first, then the right operands bottom up, as the recursion would
    const spine: Array<Extract<Expr, { kind: 'binary' }>> = []
    let n: Expr = e
    while (n.kind === 'binary' && (n.op === '+' || n.op === '-')) {
      spine.push(n)
      n = n.left
    }
    go(n, seed)
    for (let k = spine.length - 1; k >= 0; k--) go(spine[k]!.right, spine[k]!.op === '+' ? seed : neg(seed))
    return out
  }
  switch (e.kind) {
    case 'var':
    case 'index':
      out.push({ leaf: e, coefficient: seed })
      return out
    case 'field':
      throw new TenetStaticError(
        'ad/unsupported',
        `cannot differentiate through the field \`${printExpr(e)}\` yet`,
        e.loc,
      )
    case 'unary':
      if (e.op === '-') go(e.arg, neg(seed))
      return out
    case 'binary': {
      const l = e.left,
        r = e.right
      switch (e.op) {
        case '+':
          go(l, seed)
          go(r, seed)
          return out
        case '-':
          go(l, seed)
          go(r, neg(seed))
          return out
        case '*':
          go(l, mul(seed, clone(r)))
          go(r, mul(seed, clone(l)))
          return out
        case '/':
          go(l, bin('/', seed, clone(r)))
          // −seed·l/r² as −(seed/r)·(l/r): both quotients are computed anyway (the partial for l,
          // the value itself), so the generated code shares them instead of dividing again
          go(r, neg(mul(bin('/', seed, clone(r)), bin('/', clone(l), clone(r)))))
          return out
        case '%':
          // l % r = l - trunc(l / r) · r (JS semantics)
          go(l, seed)
          go(r, neg(mul(seed, call(typeOf(e) ?? 'f64', call('i32', bin('/', clone(l), clone(r)))))))
          return out
        case '**': {
          const ft = typeOf(e) ?? 'f64'
          if (r.kind === 'num') {
            const p = r.value
            // the square's partial as (2·seed)·l, not seed·(2·l): the same product (a factor of 2 is
            // exact; only where 2·seed or 2·l overflows do they differ), whose 2·seed a loop that
            // runs over l with the seed fixed computes once (pass hoist-invariants), one multiply
            // per iteration fewer (the graph embedding's Σ (x[a+j] − x[b+j])²)
            if (p === 2) go(l, mul(mul(lit(2), seed), clone(l)))
            else go(l, mul(seed, p === 1 ? lit(1) : mul(lit(p), bin('**', clone(l), lit(p - 1)))))
            return out
          }
          const rt = typeOf(r)
          if (!isFloatType(registry, rt)) {
            // integer exponent n: n · l^(n−1)
            go(
              l,
              mul(
                seed,
                mul(
                  call(ft, clone(r)),
                  bin('**', clone(l), bin('-', clone(r), { kind: 'num', value: 1, isFloat: false })),
                ),
              ),
            )
            return out
          }
          go(l, mul(seed, mul(clone(r), bin('**', clone(l), bin('-', clone(r), lit(1))))))
          if (readsFloat(r, registry)) go(r, mul(seed, mul(clone(e), call('log', clone(l)))))
          return out
        }
        default:
          return out // comparisons and logic: bool results, no derivative
      }
    }
    case 'call': {
      const c = e.callee
      if (c === 'f64' || c === 'f32' || c === 'convert') {
        // a conversion between f64 and f32: the inner derivatives are in the argument's precision
        go(e.args[0]!, convertedSeed(seed, typeOf(e), typeOf(e.args[0]!)))
        return out
      }
      if (c === 'i32' || c === 'div' || c === 'len') return out
      if (c.startsWith('$host')) {
        if (!partials.hostPartials) {
          throw new TenetStaticError(
            'ad/no-derivative',
            `an interpolated host function has no derivative; register it as a pure primitive with \`partials\` (registry.registerPrimitive) to differentiate through it`,
            e.loc,
          )
        }
        const ps = partials.hostPartials(c, e.args, seed, e.loc)
        e.args.forEach((a, k) => {
          const p = ps[k]
          if (p && readsFloat(a, registry)) go(a, mul(seed, p))
        })
        return out
      }
      break
    }
    default:
      return out
  }
  // a registered pure primitive
  const callExpr = e as Extract<Expr, { kind: 'call' }>
  const spec = registry.findPrimitive(callExpr.callee)
  if (spec?.kind === 'pure' && spec.argKinds?.includes('array')) {
    // array arguments (`det(A)`): whole-array contributions go to `collect` (see dual-host.ts)
    if (!partials.arrayPartials)
      throw new TenetStaticError(
        'ad/array-primitive',
        `the primitive \`${spec.name}\` takes an array: it cannot be differentiated here`,
        callExpr.loc,
      )
    const ps = partials.arrayPartials(spec, callExpr.args, seed, callExpr.loc)
    callExpr.args.forEach((a, k) => {
      const p = ps[k]
      if (p && readsFloat(a, registry)) go(a, mul(seed, p))
    })
    return out
  }
  const ps = partials.partials(callExpr.callee, callExpr.args.map(clone), callExpr.loc)
  callExpr.args.forEach((a, k) => {
    if (readsFloat(a, registry)) go(a, mul(seed, ps[k]!))
  })
  return out
}

/**
 * The seed of a conversion's argument: the conversion's seed converted to the argument's
 * derivative precision where that differs (f32 ↔ f64), else the seed itself.
 */
export function convertedSeed(seed: Expr, outer: ScalarTypeName | undefined, inner: ScalarTypeName | undefined): Expr {
  if (outer === undefined || inner === undefined) return seed
  const to = gradientScalar(inner)
  return gradientScalar(outer) === to ? seed : call(to, seed)
}

/** Every name a function binds: parameters, ancillas and loop variables (for fresh-name prefixes). */
export function namesIn(f: FunctionDef): Set<string> {
  const names = new Set(f.params.map((p) => p.name))
  const visit = (body: Stmt[]) => {
    for (const s of body) {
      if (s.kind === 'alloc') names.add(s.name)
      if (s.kind === 'for') names.add(s.variable)
      if (s.kind === 'if') {
        visit(s.then)
        visit(s.else)
      }
      if (s.kind === 'while' || s.kind === 'for' || s.kind === 'unchecked') visit(s.body)
    }
  }
  visit(f.body)
  return names
}
