/**
 * The Taylor transform (univariate Taylor propagation, seed 002 §III): core IR function → core
 * IR function. The Taylor function of `f` at order k runs f's statements in order and carries,
 * beside every f64 value x, the coefficients x₁ … x_k of x(t) = x + x₁t + … + x_k t^k, where
 * t ↦ (inputs + t·v) is a line through the inputs. So one sweep gives every directional
 * derivative up to order k (the j-th is j!·x_j), at a cost that grows like k² (the Cauchy
 * products), where nesting first-order transforms k times grows like 2^k.
 *
 * Layout: an f64 scalar `x` gets k parameters/ancillas `c1$x … ck$x`; an f64 array `a` gets k
 * arrays `c1$a … ck$a` of its length; an f64 stack gets k stacks. Coefficient parameters follow
 * f's parameters, parameter-major (x's k coefficients, then the next parameter's). Values of
 * other types carry none (integers, booleans); f32, fixed point and ulog values are refused.
 *
 * Each update `y += e` becomes itself plus `c_j$y += e_j` for j = 1…k, where e_j comes from the
 * series rules of `taylor-series.ts` (arithmetic) and the primitives' own rules, read from their
 * specs by `taylor-rules.ts`; the intermediate coefficients live in ancillas allocated
 * and freed (without checks, recomputed in reverse) inside one `@unchecked` block per statement,
 * so the Taylor function stays reversible IR that every backend compiles.
 */
import {
  TenetStaticError,
  printExpr,
  type Arg,
  type CallStmt,
  type Dataview,
  type Expr,
  type FunctionDef,
  type Param,
  type Program,
  type Registry,
  type Stmt,
  type Type,
} from '@tenet/ir'
import { OnDemandTransform } from './on-demand.js'
import { at, clone, lit, namesIn, ref, typeOf } from './expr.js'
import { hasGradient } from './transform.js'
import { SeriesScope, binarySeries, constantSeries, negSeries, noRule, type Series } from './taylor-series.js'
import { TaylorRules } from './taylor-rules.js'

/** Name of the order-k Taylor function of `name` (of its inverse when `inverse`). */
export function taylorName(name: string, inverse: boolean, order: number): string {
  return `${name}${inverse ? '$inv' : ''}$taylor${order}`
}

/** Where a parameter's Taylor coefficients travel in the Taylor function. */
export interface TaylorSlot {
  kind: 'scalar' | 'array' | 'stack'
  /** Index of the parameter holding coefficient 1; coefficient j is at `index + j − 1`. */
  index: number
}

/** The coefficient slots of each parameter of `f` in its order-k Taylor function (null: none). */
export function taylorSlots(params: Param[], registry: Registry, order: number): Array<TaylorSlot | null> {
  let k = params.length
  return params.map((p) => {
    if (!carries(p.type, registry, p.name)) return null
    const s = { kind: p.type.kind, index: k }
    k += order
    return s
  })
}

const fail = (msg: string, loc?: Expr['loc']): never => {
  throw new TenetStaticError('ad/unsupported', msg, loc)
}

/** Whether values of type t carry Taylor coefficients: f64 does; other differentiable types are refused. */
function carries(t: Type, registry: Registry, what: string, loc?: Expr['loc']): boolean {
  if (!hasGradient(t, registry)) return false
  const elem = t.kind === 'scalar' ? t.name : t.elem
  if (elem !== 'f64') fail(`Taylor mode propagates f64 values only; \`${what}\` is ${elem}`, loc)
  return true
}

const F64: Type = { kind: 'scalar', name: 'f64' }

/** Generates Taylor functions on demand (see `OnDemandTransform`), callees included. */
export class TaylorBuilder extends OnDemandTransform {
  /** The primitives' rules, read from the registry. */
  readonly rules: TaylorRules

  constructor(
    program: Program,
    inverses: Map<string, FunctionDef>,
    readonly registry: Registry,
    readonly order: number,
  ) {
    super(program, inverses)
    this.rules = new TaylorRules(registry, program.hosts)
    if (!Number.isInteger(order) || order < 1)
      throw new RangeError(`the Taylor order must be a positive integer, got ${order}`)
  }

  protected nameOf(name: string, inverse: boolean): string {
    return taylorName(name, inverse, this.order)
  }
  protected transform(f: FunctionDef, name: string): FunctionDef {
    return new FunctionTaylor(this, f, name).build()
  }
}

/** The Taylor function of one function. */
class FunctionTaylor {
  private readonly k: number
  private readonly registry: Registry
  private readonly used: Set<string>
  private counter = 0

  constructor(
    private readonly builder: TaylorBuilder,
    private readonly f: FunctionDef,
    private readonly name: string,
  ) {
    this.k = builder.order
    this.registry = builder.registry
    this.used = namesIn(f)
    // the Taylor function of a Taylor function already has `c<j>$` names: its own get a longer prefix
    const names = [...this.used]
    while (names.some((n) => new RegExp(`^${this.prefix}\\d+\\$`).test(n))) this.prefix += 'c'
  }

  /** The prefix of coefficient names: `c`, or a longer run of `c` where the function already uses `c<j>$` names. */
  private prefix = 'c'

  build(): FunctionDef {
    const extra: Param[] = []
    for (const p of this.f.params) {
      if (!carries(p.type, this.registry, p.name, p.loc)) continue
      for (let j = 1; j <= this.k; j++) extra.push({ name: this.cn(p.name, j), type: clone(p.type) })
    }
    return {
      kind: 'fn',
      name: this.name,
      params: [...this.f.params.map((p) => ({ name: p.name, type: p.type })), ...extra],
      body: this.body(this.f.body),
      ...(this.f.loc ? { loc: this.f.loc } : {}),
    }
  }

  /** Name of coefficient j of variable x. */
  private cn(x: string, j: number): string {
    return `${this.prefix}${j}$${x}`
  }
  private fresh = (kind: string): string => {
    let n: string
    do n = `$${kind}${this.counter++}`
    while (this.used.has(n))
    return n
  }
  private isF64(e: Expr | Dataview): boolean {
    return typeOf(e) === 'f64'
  }

  /** Coefficient j of a value dataview (sign of negated views kept). */
  private coefView(dv: Dataview | Arg, j: number): Dataview {
    switch (dv.kind) {
      case 'var':
        return ref(this.cn(dv.name, j))
      case 'index':
        return at(this.cn(dv.array.name, j), clone(dv.index))
      case 'neg':
        return { kind: 'neg', target: this.coefView(dv.target, j) }
      default:
        return fail(
          `Taylor mode cannot follow \`${printExpr(dv as Expr)}\` (only variables, array elements and negated views carry coefficients)`,
          dv.loc,
        )
    }
  }

  /** The Taylor series of a (checked) expression; intermediate coefficients go to `scope`. */
  private series(e: Expr, scope: SeriesScope): Series {
    switch (e.kind) {
      case 'num':
      case 'bool':
        return constantSeries(e)
      case 'var':
      case 'index': {
        if (!this.isF64(e)) {
          if (this.registry.findNumberSystem(typeOf(e) ?? '')?.float)
            fail(`Taylor mode propagates f64 values only; \`${printExpr(e)}\` is ${typeOf(e)}`, e.loc)
          return constantSeries(e)
        }
        const leaf = clone(e)
        return { constant: false, coef: (j) => (j === 0 ? clone(leaf) : (this.coefView(leaf as Dataview, j) as Expr)) }
      }
      case 'field':
        return fail(`Taylor mode cannot follow the field \`${printExpr(e)}\``, e.loc)
      case 'unary':
        return e.op === '-' ? negSeries(this.series(e.arg, scope)) : constantSeries(e)
      case 'binary': {
        const { op } = e
        if (op !== '+' && op !== '-' && op !== '*' && op !== '/' && op !== '**' && op !== '%') return constantSeries(e)
        const a = this.series(e.left, scope),
          b = this.series(e.right, scope)
        if (a.constant && b.constant) return constantSeries(e)
        return (
          binarySeries(scope, op, a, b) ??
          noRule(`Taylor mode has no rule for \`%\` on a varying f64 value (in \`${printExpr(e)}\`)`, e.loc)
        )
      }
      case 'call': {
        const { callee } = e
        if (callee === 'f64' || callee === 'convert') {
          const arg = e.args[0]!
          if (this.isF64(arg)) return this.series(arg, scope)
          if (readsF64(arg))
            fail(`Taylor mode propagates f64 values only; \`${printExpr(arg)}\` rounds to ${typeOf(arg)}`, e.loc)
          return constantSeries(e)
        }
        if (callee === 'f32' && readsF64(e.args[0]!))
          fail(`Taylor mode propagates f64 values only; \`${printExpr(e)}\` rounds to f32`, e.loc)
        if (callee === 'i32' || callee === 'div' || callee === 'len' || callee === 'f32') return constantSeries(e)
        const args = e.args.map((a) => this.series(a, scope))
        if (args.every((a) => a.constant)) return constantSeries(e)
        // the primitive's own rule (or its partials), from the registry
        return this.builder.rules.call(
          scope,
          callee,
          args,
          { kind: 'call', callee, args: args.map((a) => a.coef(0)!) } as Expr,
          e.loc,
        )
      }
    }
  }

  /**
   * `use(series)` inside one `@unchecked` block that allocates the intermediate coefficients
   * first and frees them last; nothing when it emits nothing.
   */
  private scoped(make: (scope: SeriesScope) => Stmt[]): Stmt[] {
    const scope = new SeriesScope(this.fresh)
    const use = make(scope)
    if (scope.empty) return use
    return [{ kind: 'unchecked', body: [...scope.defs, ...use, ...scope.frees()] } as Stmt]
  }

  private body(body: Stmt[]): Stmt[] {
    return body.flatMap((s) => this.stmt(s))
  }

  private stmt(s: Stmt): Stmt[] {
    switch (s.kind) {
      case 'update':
        return this.update(s)
      case 'callstmt':
        return s.target === 'function' ? this.call(s) : this.bijection(s)
      case 'alloc':
        return this.alloc(s)
      case 'dealloc':
        return this.dealloc(s)
      case 'if':
        return [
          {
            ...s,
            pre: clone(s.pre),
            post: s.post ? clone(s.post) : null,
            then: this.body(s.then),
            else: this.body(s.else),
          },
        ]
      case 'while':
        return [{ ...s, pre: clone(s.pre), post: clone(s.post), body: this.body(s.body) }]
      case 'for':
        return [
          {
            ...s,
            start: clone(s.start),
            stop: clone(s.stop),
            step: s.step ? clone(s.step) : null,
            body: this.body(s.body),
          },
        ]
      case 'push':
      case 'pop': {
        const elem = (s.stack.type as { elem?: string } | undefined)?.elem
        if (elem === undefined || !carries({ kind: 'stack', elem } as Type, this.registry, s.stack.name, s.loc))
          return [clone(s)]
        const moves: Stmt[] = []
        for (let j = 1; j <= this.k; j++)
          moves.push({
            kind: s.kind,
            stack: ref(this.cn(s.stack.name, j)),
            value: this.coefView(s.value, j),
            ...loc(s),
          } as Stmt)
        return [clone(s), ...moves]
      }
      case 'safe':
        return [clone(s)]
      case 'unchecked':
        return [{ ...s, body: this.body(s.body) }]
      default:
        return fail(`\`${s.kind}\` must be expanded before Taylor propagation`, s.loc)
    }
  }

  /** `y += e` → itself, then `c_j$y += e_j` for j = 1…k. */
  private update(s: Extract<Stmt, { kind: 'update' }>): Stmt[] {
    const same = clone(s)
    if (!this.isF64(s.target)) {
      if (carriesLoose(typeOf(s.target) ?? 'i32', this.registry)) {
        fail(`Taylor mode propagates f64 values only; \`${printExpr(s.target as Expr)}\` is ${typeOf(s.target)}`, s.loc)
      }
      return [same]
    }
    if (s.op !== '+=' && s.op !== '-=') fail(`Taylor mode cannot follow \`${s.op}\` on f64`, s.loc)
    let target: Dataview = s.target
    let sign = s.op === '+=' ? 1 : -1
    while (target.kind === 'neg') {
      target = target.target
      sign = -sign
    }
    const rest = this.scoped((scope) => {
      const ser = this.series(s.value, scope)
      const out: Stmt[] = []
      if (ser.constant) return out
      for (let j = 1; j <= this.k; j++) {
        const c = ser.coef(j)
        if (c)
          out.push({
            kind: 'update',
            op: sign > 0 ? '+=' : '-=',
            target: this.coefView(target, j),
            value: c,
            ...loc(s),
          } as Stmt)
      }
      return out
    })
    return [same, ...rest]
  }

  private alloc(s: Extract<Stmt, { kind: 'alloc' }>): Stmt[] {
    const t = s.type!
    if (!carries(t, this.registry, s.name, s.loc)) return [clone(s)]
    const names = Array.from({ length: this.k }, (_, j) => this.cn(s.name, j + 1))
    if (t.kind === 'stack')
      return [
        clone(s),
        ...names.map((n) => ({ kind: 'alloc', name: n, declared: clone(t), value: { kind: 'emptystack' } }) as Stmt),
      ]
    if (t.kind === 'array')
      return [
        clone(s),
        ...names.map((n) => ({ kind: 'alloc', name: n, declared: clone(t), value: clone(s.value) }) as Stmt),
      ]
    // x <- e: the coefficients start at zero and receive e's
    const allocs = names.map((n) => ({ kind: 'alloc', name: n, declared: F64, value: lit(0), ...loc(s) }) as Stmt)
    const fill = this.scoped((scope) => {
      const ser = this.series(s.value as Expr, scope)
      const out: Stmt[] = []
      if (ser.constant) return out
      for (let j = 1; j <= this.k; j++) {
        const c = ser.coef(j)
        if (c) out.push({ kind: 'update', op: '+=', target: ref(names[j - 1]!), value: c } as Stmt)
      }
      return out
    })
    return [clone(s), ...allocs, ...fill]
  }

  /**
   * Coefficient ancillas are emptied without checks (their value in exact arithmetic is the
   * coefficient of the deallocation's expression, which the inverse recomputes), then freed at zero.
   */
  private dealloc(s: Extract<Stmt, { kind: 'dealloc' }>): Stmt[] {
    const t = s.type!
    if (!carries(t, this.registry, s.name, s.loc)) return [clone(s)]
    const names = Array.from({ length: this.k }, (_, j) => this.cn(s.name, j + 1))
    if (t.kind === 'stack')
      return [...names.map((n) => ({ kind: 'dealloc', name: n, value: { kind: 'emptystack' } }) as Stmt), clone(s)]
    if (t.kind === 'array') {
      const out: Stmt[] = []
      for (const n of names) {
        const i = this.fresh('i')
        const z = this.fresh('z')
        out.push(
          {
            kind: 'for',
            variable: i,
            start: { kind: 'num', value: 0, isFloat: false },
            stop: { kind: 'call', callee: 'len', args: [ref(n)] },
            step: null,
            inclusive: false,
            body: [
              {
                kind: 'unchecked',
                body: [
                  { kind: 'alloc', name: z, declared: F64, value: lit(0) } as Stmt,
                  { kind: 'callstmt', callee: 'SWAP', args: [ref(z), at(n, ref(i))], inverse: false } as Stmt,
                  { kind: 'dealloc', name: z, value: lit(0) } as Stmt,
                ],
              },
            ],
          } as Stmt,
          { kind: 'dealloc', name: n, value: clone(s.value) } as Stmt,
        )
      }
      return [...out, clone(s)]
    }
    const empty = this.scoped((scope) => {
      const ser = this.series(s.value as Expr, scope)
      const out: Stmt[] = []
      for (let j = 1; j <= this.k; j++) {
        const z = this.fresh('z')
        out.push(
          { kind: 'alloc', name: z, declared: F64, value: lit(0) } as Stmt,
          { kind: 'callstmt', callee: 'SWAP', args: [ref(z), ref(names[j - 1]!)], inverse: false } as Stmt,
          { kind: 'dealloc', name: z, value: ser.constant ? lit(0) : (ser.coef(j) ?? lit(0)) } as Stmt,
        )
      }
      return out
    })
    return [...empty, ...names.map((n) => ({ kind: 'dealloc', name: n, value: lit(0), ...loc(s) }) as Stmt), clone(s)]
  }

  /** `g(args)` → `g$taylor<k>(args, coefficients)`; `~g(args)` → the Taylor function of g's inverse. */
  private call(s: CallStmt): Stmt[] {
    const callee = this.builder.program.functions.get(s.callee)!
    // a callee without f64 parameters moves no coefficient: the call stays as it is
    if (!callee.params.some((p) => carries(p.type, this.registry, p.name, s.loc))) return [clone(s)]
    const name = this.builder.request(s.callee, s.inverse)
    return this.scoped((scope) => {
      const cargs: Arg[] = []
      callee.params.forEach((p, i) => {
        if (!carries(p.type, this.registry, p.name, s.loc)) return
        const a = s.args[i]!
        if (p.type.kind !== 'scalar') {
          if (a.kind !== 'var')
            fail(`argument ${i + 1} of \`${s.callee}\` must be a variable to carry Taylor coefficients`, a.loc ?? s.loc)
          for (let j = 1; j <= this.k; j++) cargs.push(ref(this.cn((a as { name: string }).name, j)))
          return
        }
        if (a.kind === 'var' || a.kind === 'index' || a.kind === 'neg') {
          for (let j = 1; j <= this.k; j++) cargs.push(this.coefView(a, j))
          return
        }
        // a read-only expression argument: its coefficients as expressions
        const ser = this.series(a as Expr, scope)
        for (let j = 1; j <= this.k; j++) cargs.push((ser.constant ? null : ser.coef(j)) ?? lit(0))
      })
      return [
        { kind: 'callstmt', callee: name, args: [...s.args.map(clone), ...cargs], inverse: false, ...loc(s) } as Stmt,
      ]
    })
  }

  private bijection(s: CallStmt): Stmt[] {
    const spec0 = this.registry.bijection(s.callee)
    const spec = s.inverse && spec0.inverse !== 'self' ? this.registry.bijection(spec0.inverse) : spec0
    const same = clone(s)
    if (!s.args.some((a) => this.isF64(a as Expr))) return [same]
    const a = s.args
    const bij = (callee: string, args: Arg[]): Stmt => ({ kind: 'callstmt', callee, args, inverse: false, ...loc(s) })
    if (spec.selfAdjoint) {
      // a linear map acts on every coefficient alike
      const out: Stmt[] = [same]
      for (let j = 1; j <= this.k; j++)
        out.push(
          bij(
            spec.name,
            a.map((x) => this.coefView(x, j)),
          ),
        )
      return out
    }
    // the bijection's own rule (its file's `taylor.map`), from the registry
    const rules = this.builder.rules
    const rule = rules.bijection(spec, s.loc)
    const targets = spec.roles.flatMap((r, k) => (r === 'inout' ? [k] : []))
    const inputs = (scope: SeriesScope, targetSeries: Series[]): Map<string, Series> =>
      // (an update rule reads no target: none is bound)
      rules.bijectionEnv(
        a.map((x, k) => {
          const t = targets.indexOf(k)
          return t >= 0 ? targetSeries[t]! : this.series(x as Expr, scope)
        }),
      )
    if (rule.changes.every((c) => c.kind === 'update')) {
      // updates of the targets by functions of read-only values (AddConst, INC, sincos)
      return [
        same,
        ...this.scoped((scope) => {
          const out: Stmt[] = []
          const env = inputs(scope, [])
          rule.changes.forEach((c, i) => {
            if (c.kind !== 'update' || c.value === null) return
            const target = a[targets[i]!]!
            const ser = rules.ruleSeries(scope, c.value, env, s.loc)
            if (ser.constant || !this.isF64(target as Expr)) return
            for (let j = 1; j <= this.k; j++) {
              const v = ser.coef(j)
              if (v)
                out.push({ kind: 'update', op: c.op, target: this.coefView(target, j), value: v, ...loc(s) } as Stmt)
            }
          })
          return out
        }),
      ]
    }
    if (rule.linear) {
      const probe = new SeriesScope(this.fresh)
      if (spec.roles.every((r, k) => r === 'inout' || this.series(a[k] as Expr, probe).constant)) {
        // linear in the targets, the read-only operands constant along the line: the bijection acts on every coefficient alike
        const out: Stmt[] = [same]
        for (let j = 1; j <= this.k; j++)
          out.push(
            bij(
              spec.name,
              a.map((x, k) => (spec.roles[k] === 'inout' ? this.coefView(x, j) : clone(x))),
            ),
          )
        return out
      }
    }
    // the targets' series in place: the rule forwards, the inverse's rule to free the old coefficients
    const inverse = spec.inverse === 'self' ? rule : rules.bijection(this.registry.bijection(spec.inverse), s.loc)
    const through =
      (r: typeof rule) =>
      (scope: SeriesScope, old: Series[]): Series[] => {
        const env = inputs(scope, old)
        return r.maps.map((m) => rules.ruleSeries(scope, m, env, s.loc))
      }
    return this.inPlace(
      s,
      targets.map((k) => a[k]!),
      through(rule),
      through(inverse),
    )
  }

  /**
   * A bijection that rewrites its targets' series in place: `next` gives the new series from the
   * old targets (and the statement's other operands), `back` the old from the new. In one
   * `@unchecked` block: the new coefficients go to fresh ancillas n_j, computed from the old ones
   * (whose intermediates are freed while the old values are still there to recompute them);
   * the value statement runs; each n_j is swapped with its slot, so n_j holds the old coefficient;
   * and n_j is freed against its value recomputed from the new coefficients by `back`. Every
   * free can thus be recomputed when the block runs backwards.
   */
  private inPlace(
    s: CallStmt,
    targets: Arg[],
    next: (scope: SeriesScope, old: Series[]) => Series[],
    back: (scope: SeriesScope, now: Series[]) => Series[],
  ): Stmt[] {
    for (const t of targets)
      if (t.kind !== 'var' && t.kind !== 'index')
        fail(`Taylor mode follows \`${s.callee}\` on variables and array elements only`, s.loc)
    const leaves = (): Series[] => targets.map((t) => this.series(t as Expr, new SeriesScope(this.fresh)))
    const before = new SeriesScope(this.fresh)
    const fresh = next(before, leaves())
    const slots: Array<{ name: string; target: Arg; j: number }> = []
    const allocs: Stmt[] = []
    targets.forEach((t, i) => {
      for (let j = 1; j <= this.k; j++) {
        const name = this.fresh('n')
        slots.push({ name, target: t, j })
        allocs.push({ kind: 'alloc', name, declared: F64, value: fresh[i]!.coef(j) ?? lit(0) } as Stmt)
      }
    })
    const swaps = slots.map(
      ({ name, target, j }) =>
        ({ kind: 'callstmt', callee: 'SWAP', args: [ref(name), this.coefView(target, j)], inverse: false }) as Stmt,
    )
    const after = new SeriesScope(this.fresh)
    const old = back(after, leaves())
    const frees = slots.map(
      ({ name, j }, n) => ({ kind: 'dealloc', name, value: old[Math.floor(n / this.k)]!.coef(j) ?? lit(0) }) as Stmt,
    )
    return [
      {
        kind: 'unchecked',
        body: [
          ...before.defs,
          ...allocs,
          ...before.frees(),
          clone(s),
          ...swaps,
          ...after.defs,
          ...frees.reverse(),
          ...after.frees(),
        ],
      } as Stmt,
    ]
  }
}

/** Whether an expression reads an f64 location (so it varies along the line). */
function readsF64(e: Expr): boolean {
  switch (e.kind) {
    case 'var':
    case 'index':
      return typeOf(e) === 'f64'
    case 'unary':
      return readsF64(e.arg)
    case 'binary':
      return readsF64(e.left) || readsF64(e.right)
    case 'call':
      return e.callee !== 'len' && e.args.some(readsF64)
    default:
      return false
  }
}

/** Whether a scalar type name is a differentiable type other than f64 (refused by Taylor mode). */
function carriesLoose(t: string, registry: Registry): boolean {
  return t !== 'f64' && hasGradient({ kind: 'scalar', name: t } as Type, registry)
}

function loc(s: { loc?: Expr['loc'] }): { loc?: NonNullable<Expr['loc']> } {
  return s.loc ? { loc: s.loc } : {}
}
