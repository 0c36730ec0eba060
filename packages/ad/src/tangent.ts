/**
 * The tangent (forward-mode) transform: core IR function → core IR function. The tangent of `f`
 * runs f's statements in order and, beside every float value, carries its directional
 * derivatives in `w` directions at once (the width). Because the adjoint of a function is
 * ordinary IR too, the tangent of the adjoint gives exact Hessian-vector products
 * (forward-over-reverse), w Hessian columns per sweep.
 *
 * Layout of the tangents (width w):
 * - a float scalar `x` gets w scalar slots: `t$x` when w = 1, else `t$0$x … t$<w−1>$x`;
 * - a float array `a` of length n gets one array `t$a` of length n·w, element-major:
 *   the tangent of `a[i]` in direction k is `t$a[i·w + k]` (`t$a[i]` when w = 1);
 * - a float stack `s` gets a stack `t$s` onto which every `push` pushes the w tangents.
 * Tangent updates are unrolled over the w directions, each repeating the same coefficients
 * (the cpu backend computes a repeated subexpression once). The tangent of an expression follows
 * its structure where that takes fewer operations per direction than Σ ∂e/∂x · ẋ.
 *
 * Unit seeds (the variant `unitVariant(positions)`, used by `hessian`): the tangents of the float
 * arrays at those parameter positions hold unit seeds, `t$a[i·w + k] = (i − o == k ? 1 : 0)` for an
 * offset `o` passed as an extra i32 parameter (`t$unit$a`, after the tangents), and the function
 * writes neither the arrays nor their tangents. A tangent update `t$y[j·w + k] ±= Σ c·t$a[i·w + k]
 * + rest` then adds `c` to the one direction i − o instead of reading w seeds:
 * `if 0 <= i − o && i − o < w { t$y[j·w + (i − o)] ±= c }`, and `rest` as before (the sparse
 * tangent propagation of a Hessian's first layer: per direction the seed is one element, not w).
 * The seed arrays stay parameters with their values, so a read that is not rewritten (a scalar
 * target, a call argument, a bijection) stays exact. Callees that receive a seed array where they
 * do not write it get the same variant for that position.
 *
 * Skipped rows (the second part of the variant, `rows`): the tangents of the arrays at those
 * positions are outputs that the program only accumulates into (`accumulatesOnly`) and whose
 * elements below an offset (`t$from$a`, an extra i32 parameter after the unit offsets) nobody
 * reads: every tangent update of `a[j]` runs under `if j >= t$from$a`. `hessian` passes the
 * gradient of a unit-seeded array with the same offset, so that a sweep over Hessian columns
 * c0… skips the rows above c0, which symmetry gives from earlier sweeps.
 */
import {
  TenetStaticError,
  printExpr,
  type Arg,
  type CallStmt,
  type Dataview,
  type Expr,
  type FunctionDef,
  type IndexExpr,
  type Param,
  type Program,
  type Registry,
  type Stmt,
  type Type,
} from '@tenet/ir'
import { OnDemandTransform } from './on-demand.js'
// a tangent has the type and presence of a gradient: the same shape, f32 for f32, else f64
import { gradientType, hasGradient } from './transform.js'
import { rejectHostPullback } from './dual-host.js'
import { instantiateTangentRule } from './tangent-rule.js'
import {
  add,
  at,
  bin,
  clone,
  differentiate,
  gradientScalar,
  isDiffType,
  isRealViewType,
  lit,
  mul,
  namesIn,
  neg,
  readsFloat,
  realAs,
  realF64,
  realView,
  ref,
  scaleDerivative,
  typeOf,
  type Contribution,
  type PartialsResolver,
} from './expr.js'

/** Name of the tangent of function `name` (of its inverse when `inverse`) at width `width`. */
export function tangentName(name: string, inverse: boolean, width: number, variant = ''): string {
  return `${name}${inverse ? '$inv' : ''}$tan${width === 1 ? '' : width}${variant ? variantSuffix(variant) : ''}`
}

/**
 * The `TangentBuilder` variant in which the float arrays at the parameter positions `positions`
 * hold unit seeds and those at `rows` skip the rows below their offsets (see the module
 * comment); '' for none.
 */
export function unitVariant(positions: readonly number[], rows: readonly number[] = []): string {
  const list = (xs: readonly number[]) => [...new Set(xs)].sort((a, b) => a - b).join('_')
  return positions.length === 0 && rows.length === 0 ? '' : `${list(positions)}/${list(rows)}`
}

/** The unit and row positions of a variant (`unitVariant`'s inverse). */
function variantPositions(variant: string): { units: number[]; rows: number[] } {
  const [u = '', r = ''] = variant.split('/')
  const list = (x: string) => (x === '' ? [] : x.split('_').map(Number))
  return { units: list(u), rows: list(r) }
}

/** The name suffix of a variant. */
function variantSuffix(variant: string): string {
  const { units, rows } = variantPositions(variant)
  return `${units.length ? `$unit${units.join('_')}` : ''}${rows.length ? `$rows${rows.join('_')}` : ''}`
}

/** Where a parameter's tangent travels in the tangent function. */
export interface TangentSlot {
  kind: 'scalar' | 'array' | 'stack'
  /** Index of the (first) tangent parameter; a float scalar has `width` consecutive ones. */
  index: number
  type: Type
}

/** The tangent slot of each parameter of `f` in its tangent at width `width` (null: none). */
export function tangentSlots(params: Param[], registry: Registry, width: number): Array<TangentSlot | null> {
  let k = params.length
  return params.map((p) => {
    if (!hasGradient(p.type, registry)) return null
    const s = { kind: p.type.kind, index: k, type: p.type }
    k += p.type.kind === 'scalar' ? width : 1
    return s
  })
}

const fail = (msg: string, loc?: Expr['loc']): never => {
  throw new TenetStaticError('ad/unsupported', msg, loc)
}

const int = (value: number): Expr => ({ kind: 'num', value, isFloat: false })

/** Generates tangents on demand (see `OnDemandTransform`), callees included. */
export class TangentBuilder extends OnDemandTransform {
  constructor(
    program: Program,
    inverses: Map<string, FunctionDef>,
    readonly registry: Registry,
    readonly partials: PartialsResolver,
    readonly width: number,
  ) {
    super(program, inverses)
    if (!Number.isInteger(width) || width < 1)
      throw new RangeError(`the tangent width must be a positive integer, got ${width}`)
  }

  protected nameOf(name: string, inverse: boolean, variant: string): string {
    return tangentName(name, inverse, this.width, variant)
  }
  protected transform(f: FunctionDef, name: string, variant: string): FunctionDef {
    const { units, rows } = variantPositions(variant)
    return new FunctionTangent(this, f, name, units, rows).build()
  }
}

/** The tangent of one function. */
class FunctionTangent {
  private readonly w: number
  private readonly registry: Registry
  private readonly used: Set<string>
  private counter = 0
  /**
   * Float scalars whose tangent is zero here by construction: ancillas allocated from values
   * that carry none (integers, literals, such ancillas) and not written since, such as
   * `r <- 1.0 / f64(k)`. Every tangent expression leaves them out (no `ṙ · c` terms of zeros).
   */
  private zero = new Set<string>()

  /** The unit-seeded arrays (see the module comment): array name → its offset parameter's name. */
  private readonly units = new Map<string, string>()
  /** The arrays whose tangents skip rows (see the module comment): array name → its offset parameter's name. */
  private readonly rows = new Map<string, string>()

  constructor(
    private readonly builder: TangentBuilder,
    private readonly f: FunctionDef,
    private readonly name: string,
    unitPositions: readonly number[] = [],
    rowPositions: readonly number[] = [],
  ) {
    this.w = builder.width
    this.registry = builder.registry
    this.used = namesIn(f)
    // a tangent of a tangent (nested forward mode) already has `t$` names: its own go one `t` longer
    const names = [...this.used]
    while (names.some((n) => n.startsWith(`${this.prefix}$`))) this.prefix += 't'
    const writes = builder.program.writes.get(f.name)
    for (const i of unitPositions) {
      const p = f.params[i]
      // only arrays of f64 that carry a tangent and that nothing here writes
      if (p?.type.kind !== 'array' || p.type.elem !== 'f64' || writes?.[i] !== false) continue
      this.units.set(p.name, `${this.prefix}$unit$${p.name}`)
    }
    for (const i of rowPositions) {
      const p = f.params[i]
      // (whoever asks has checked that the program only accumulates into it: `accumulatesOnly`)
      if (p?.type.kind !== 'array' || p.type.elem !== 'f64') continue
      this.rows.set(p.name, `${this.prefix}$from$${p.name}`)
    }
  }

  /** The prefix of tangent names: `t`, or a longer run of `t` where the function already uses `t$` names. */
  private prefix = 't'

  build(): FunctionDef {
    const slots = tangentSlots(this.f.params, this.registry, this.w)
    const extra: Param[] = []
    this.f.params.forEach((p, i) => {
      if (!slots[i]) return
      const t = gradientType(p.type)
      if (p.type.kind === 'scalar') for (let k = 0; k < this.w; k++) extra.push({ name: this.ts(p.name, k), type: t })
      else extra.push({ name: this.ta(p.name), type: t })
    })
    for (const offsets of [this.units, this.rows])
      for (const p of this.f.params) {
        const o = offsets.get(p.name)
        if (o) extra.push({ name: o, type: { kind: 'scalar', name: 'i32' } })
      }
    return {
      kind: 'fn',
      name: this.name,
      params: [...this.f.params.map((p) => ({ name: p.name, type: p.type })), ...extra],
      body: this.body(this.f.body),
      ...(this.f.loc ? { loc: this.f.loc } : {}),
    }
  }

  /** Tangent name of scalar `x` in direction k. */
  private ts(x: string, k: number): string {
    return this.w === 1 ? `${this.prefix}$${x}` : `${this.prefix}$${k}$${x}`
  }
  /** Tangent name of array or stack `x`. */
  private ta(x: string): string {
    return `${this.prefix}$${x}`
  }
  private fresh(kind: string): string {
    let n: string
    do n = `$${kind}${this.counter++}`
    while (this.used.has(n))
    return n
  }
  private isFloat(t: string | undefined): boolean {
    return isDiffType(this.registry, t)
  }

  /** The tangent dataview of a value dataview in direction k. */
  private tan(dv: Dataview | Arg, k: number): Dataview {
    switch (dv.kind) {
      case 'var':
        return ref(this.ts(dv.name, k))
      case 'index': {
        if (this.w === 1) return at(this.ta(dv.array.name), clone(dv.index))
        const base = bin('*', clone(dv.index), int(this.w))
        return at(this.ta(dv.array.name), k === 0 ? base : bin('+', base, int(k)))
      }
      case 'neg':
        return { kind: 'neg', target: this.tan(dv.target, k) }
      default:
        return fail(
          `cannot differentiate through \`${printExpr(dv as Expr)}\` (only variables, array elements and negated views carry tangents)`,
          dv.loc,
        )
    }
  }

  private body(body: Stmt[]): Stmt[] {
    return body.flatMap((s) => this.stmt(s))
  }

  /** The partials of e, one per distinct float location read (occurrences summed). */
  private terms(e: Expr): Contribution[] {
    if (!readsFloat(e, this.registry)) return []
    const grouped = new Map<string, Contribution>()
    for (const t of differentiate(e, lit(1), this.registry, this.builder.partials)) {
      if (this.zero.has(rootName(t.leaf) ?? '')) continue
      const key = printExpr(t.leaf)
      const prev = grouped.get(key)
      if (prev) prev.coefficient = add(prev.coefficient, t.coefficient)
      else grouped.set(key, { leaf: t.leaf, coefficient: t.coefficient })
    }
    return [...grouped.values()]
  }

  /**
   * The tangent of e as a tree that follows e's structure (forward mode on the expression):
   * `(x[a] − x[b])²` gives 2(x[a] − x[b]) · (ẋ[a] − ẋ[b]), with the tangent of a subexpression
   * formed once and the same text wherever the subexpression recurs (so the code generator can
   * share it between statements). Null when e reads no float.
   */
  private tree(e: Expr): Tan | null {
    if (!readsFloat(e, this.registry)) return null
    const sum = (...ts: Array<[1 | -1, Tan | null]>): Tan | null => {
      const terms = ts.filter((x): x is [1 | -1, Tan] => x[1] !== null).map(([sign, t]) => ({ sign, t }))
      return terms.length === 0
        ? null
        : terms.length === 1 && terms[0]!.sign === 1
          ? terms[0]!.t
          : { kind: 'sum', terms }
    }
    const scale = (c: Expr, t: Tan | null): Tan | null => {
      if (!t) return null
      if (c.kind === 'num' && c.value === 1) return t
      return t.kind === 'scale' ? { kind: 'scale', coef: mul(c, t.coef), t: t.t } : { kind: 'scale', coef: c, t }
    }
    switch (e.kind) {
      case 'var':
        return this.zero.has(e.name) ? null : { kind: 'leaf', leaf: e }
      case 'index':
        return { kind: 'leaf', leaf: e }
      case 'unary':
        return e.op === '-' ? sum([-1, this.tree(e.arg)]) : null
      case 'binary': {
        const l = e.left,
          r = e.right
        switch (e.op) {
          case '+':
            return sum([1, this.tree(l)], [1, this.tree(r)])
          case '-':
            return sum([1, this.tree(l)], [-1, this.tree(r)])
          case '*':
            if (printExpr(l) === printExpr(r)) return scale(mul(lit(2), clone(l)), this.tree(l))
            return sum([1, scale(clone(r), this.tree(l))], [1, scale(clone(l), this.tree(r))])
          case '/': {
            // (l/r)' = l'/r − (l/r)·r'/r. One direction, r without a tangent: l'/r, one division.
            // With one: l'·(1/r) − (l/r)·(r'·(1/r)), one division (the reciprocal) where
            // l'/r − (l/r)·(r'/r) has two, and neither form waits for l/r except in its last
            // product: a loop whose values run through l/r (an approximate multiplier's
            // `out -= anc / x`) carries its tangent as fast as its values. (The one-division
            // form (l' − (l/r)·r')/r put a second division after the value's on the tangent's
            // chain: the Bessel tangent ran 1.3× slower in V8; with the two-division form the
            // single-z Bessel gradient took 47 ns on cpu and 58 ns on wasm, with the reciprocal
            // 43 and 52 ns: fastest of 4 processes each, loaded 2-core machine, Node 20.)
            // w directions: the coefficients 1/r and l/r/r, two divisions shared by all
            // directions instead of 2w
            const tr = this.tree(r)
            if (this.w === 1) {
              const tl = this.tree(l)
              if (!tr) return tl && { kind: 'quot', t: tl, by: clone(r) }
              const inv = (): Expr => bin('/', lit(1), clone(r))
              return sum(
                [1, tl && { kind: 'scale', coef: inv(), t: tl, reciprocal: true }],
                [
                  -1,
                  {
                    kind: 'scale',
                    coef: bin('/', clone(l), clone(r)),
                    t: { kind: 'scale', coef: inv(), t: tr, reciprocal: true },
                  },
                ],
              )
            }
            return sum(
              [1, scale(bin('/', lit(1), clone(r)), this.tree(l))],
              [-1, tr && scale(bin('/', bin('/', clone(l), clone(r)), clone(r)), tr)],
            )
          }
          case '**':
            if (r.kind === 'num') {
              const p = r.value
              return scale(
                p === 1 ? lit(1) : p === 2 ? mul(lit(2), clone(l)) : mul(lit(p), bin('**', clone(l), lit(p - 1))),
                this.tree(l),
              )
            }
            break
          default:
            break
        }
        break
      }
      case 'call':
        if (e.callee === 'f64' || e.callee === 'f32' || e.callee === 'convert') {
          // between f64 and f32 the tangent is converted like the value
          const inner = this.tree(e.args[0]!),
            to = gradientScalar(typeOf(e) ?? 'f64')
          return inner && gradientScalar(typeOf(e.args[0]!) ?? to) !== to ? { kind: 'convert', to, t: inner } : inner
        }
        if (e.callee === 'i32' || e.callee === 'div' || e.callee === 'len') return null
        if (!e.callee.startsWith('$host')) {
          const ps = this.builder.partials.partials(e.callee, e.args.map(clone), e.loc)
          return sum(
            ...e.args.map((a, k): [1, Tan | null] => [
              1,
              readsFloat(a, this.registry) ? scale(ps[k]!, this.tree(a)) : null,
            ]),
          )
        }
        break
      default:
        break
    }
    // anything else (powers, %, host calls and their errors): by the partials of each leaf
    return this.grouped(e)
  }

  /** The tangent of e as Σ ∂e/∂x · ẋ over the distinct float locations x it reads. */
  private grouped(e: Expr): Tan | null {
    const terms = this.terms(e).map((t) => ({
      sign: 1 as const,
      t: (t.coefficient.kind === 'num' && t.coefficient.value === 1
        ? { kind: 'leaf', leaf: t.leaf }
        : { kind: 'scale', coef: t.coefficient, t: { kind: 'leaf', leaf: t.leaf } }) as Tan,
    }))
    return terms.length === 0 ? null : terms.length === 1 ? terms[0]!.t : { kind: 'sum', terms }
  }

  /**
   * The tangent tree of e with the fewest operations per direction: by e's structure or by its
   * partials. Values of fixed-point and ulog types are read as reals (`realView`), so every
   * coefficient is f64 arithmetic.
   */
  private tangentTree(e0: Expr): Tan | null {
    const e = realView(e0, this.registry)
    const a = this.tree(e)
    // with a conversion between f64 and f32 inside, only the structural tangent keeps the types apart
    if (a && converts(a)) return a
    // with a quotient inside, the structural tangent divides beside the value (see `tree`),
    // where the partials' coefficients (1/r, −(l/r)/r) measured slower though they count fewer
    // operations
    if (a && divides(a)) return a
    const b = this.grouped(e)
    return a && b && cost(a) <= cost(b) ? a : b
  }

  /** The tangent tree in direction k, with each coefficient replaced by `coef(node)`. */
  private instantiate(t: Tan, k: number, coef: (node: Extract<Tan, { kind: 'scale' }>) => Expr): Expr {
    switch (t.kind) {
      case 'leaf':
        return this.tan(t.leaf, k) as Expr
      case 'scale':
        return mul(coef(t), this.instantiate(t.t, k, coef))
      case 'convert':
        return { kind: 'call', callee: t.to, args: [this.instantiate(t.t, k, coef)] } as Expr
      case 'quot':
        return bin('/', this.instantiate(t.t, k, coef), clone(t.by))
      case 'sum': {
        let out: Expr | null = null
        for (const { sign, t: x } of t.terms) {
          const v = this.instantiate(x, k, coef)
          out = out === null ? (sign > 0 ? v : neg(v)) : bin(sign > 0 ? '+' : '-', out, v)
        }
        return out!
      }
    }
  }

  /**
   * Sets a tangent location to zero without checking its value (the ancilla theorem): `value`
   * is what it holds in exact arithmetic, never evaluated forwards (the inverse recomputes it).
   */
  private zeroOut(dv: Dataview, value: Expr, type: string): Stmt {
    const z = this.fresh('z')
    return {
      kind: 'unchecked',
      body: [
        { kind: 'alloc', name: z, declared: { kind: 'scalar', name: type }, value: lit(0) } as Stmt,
        { kind: 'callstmt', callee: 'SWAP', args: [ref(z), dv], inverse: false },
        { kind: 'dealloc', name: z, value } as Stmt,
      ],
    }
  }

  /** The tangent of expression e in direction k, without shared coefficients (for unevaluated positions). */
  private tangentExpr(e: Expr, k: number): Expr | null {
    const t = this.tangentTree(e)
    return t && this.instantiate(t, k, (node) => clone(node.coef))
  }

  private stmt(s: Stmt): Stmt[] {
    // calls, bijections, pushes, pops and frees end what is known of the tangents they may write
    // (this.zero); updates and allocations say themselves
    if (s.kind !== 'update' && s.kind !== 'alloc') for (const x of writtenBy(s)) this.zero.delete(x)
    switch (s.kind) {
      case 'update':
        return this.update(s)
      case 'callstmt':
        return s.target === 'function' ? this.call(s) : this.bijection(s)
      case 'alloc':
        return this.alloc(s)
      case 'dealloc':
        return this.dealloc(s)
      case 'if': {
        // what holds after an if holds after both branches
        const entry = this.zero
        this.zero = new Set(entry)
        const then = this.body(s.then)
        const afterThen = this.zero
        this.zero = new Set(entry)
        const els = this.body(s.else)
        this.zero = intersect(afterThen, this.zero)
        return [{ ...s, pre: clone(s.pre), post: s.post ? clone(s.post) : null, then, else: els }]
      }
      case 'while':
      case 'for': {
        // a loop body starts from what holds on entry and after every iteration: the greatest
        // such set, found by shrinking the entry's until one more pass of the body keeps it
        let start = this.zero
        while (start.size > 0) {
          const counter = this.counter
          this.zero = new Set(start)
          this.body(s.body)
          this.counter = counter
          const next = intersect(start, this.zero)
          if (next.size === start.size) break
          start = next
        }
        this.zero = new Set(start)
        const body = this.body(s.body)
        this.zero = start
        return s.kind === 'while'
          ? [{ ...s, pre: clone(s.pre), post: clone(s.post), body }]
          : [{ ...s, start: clone(s.start), stop: clone(s.stop), step: s.step ? clone(s.step) : null, body }]
      }
      case 'push':
      case 'pop': {
        const elem = (s.stack.type as { elem?: string } | undefined)?.elem
        if (!this.isFloat(elem)) return [clone(s)]
        const ts = ref(this.ta(s.stack.name))
        const moves: Stmt[] = []
        for (let k = 0; k < this.w; k++)
          moves.push({ kind: s.kind, stack: clone(ts), value: this.tan(s.value, k), ...loc(s) } as Stmt)
        // pop takes the w tangents back in the reverse order of the push
        return [clone(s), ...(s.kind === 'push' ? moves : moves.reverse())]
      }
      case 'safe':
        rejectHostPullback(s, this.builder.program.hosts)
        return [clone(s)]
      case 'unchecked':
        return [{ ...s, body: this.body(s.body) }]
      default:
        return fail(`\`${s.kind}\` must be expanded before differentiation`, s.loc)
    }
  }

  /** `y op= e` → the same, then `t$y op= Σ ∂e/∂x · t$x` in each direction. */
  private update(s: Extract<Stmt, { kind: 'update' }>): Stmt[] {
    const same = clone(s)
    if (!this.isFloat(typeOf(s.target))) return [same]
    if (s.op === '*=' || s.op === '/=') {
      this.zero.delete(rootName(s.target) ?? '')
      return [...this.scaleUpdate(s), same]
    }
    if (s.op !== '+=' && s.op !== '-=') fail(`cannot differentiate \`${s.op}\` on ${typeOf(s.target)}`, s.loc)
    let target: Dataview = s.target
    let sign = s.op === '+=' ? 1 : -1
    while (target.kind === 'neg') {
      target = target.target
      sign = -sign
    }
    if (target.kind === 'field') fail(`cannot differentiate through the field \`${printExpr(target)}\` yet`, s.loc)
    const tree = this.tangentTree(s.value)
    // unit-seeded reads go to their one direction (an array target's direction is an index)
    const split = tree && this.units.size > 0 && target.kind === 'index' ? this.splitUnits(tree) : null
    const rest = split ? split.rest : tree
    const out: Stmt[] = []
    // the w directions repeat the same coefficients (value expressions): a backend that shares
    // common subexpressions (the cpu backend) computes each once
    for (let k = 0; rest && k < this.w; k++) {
      const t = this.instantiate(rest, k, (node) => clone(node.coef))
      out.push({ kind: 'update', op: sign > 0 ? '+=' : '-=', target: this.tan(target, k), value: t, ...loc(s) } as Stmt)
    }
    for (const u of split?.units ?? []) out.push(this.unitUpdate(target as IndexExpr, sign * u.sign, u, s))
    if (out.length > 0) this.zero.delete(rootName(target) ?? '')
    const from = target.kind === 'index' ? this.rows.get(target.array.name) : undefined
    if (from && out.length > 0) {
      // a row nobody reads: its tangent updates are skipped
      const cond = bin('>=', clone((target as IndexExpr).index), ref(from))
      return [same, { kind: 'if', pre: cond, post: clone(cond), then: out, else: [], ...loc(s) } as Stmt]
    }
    return [same, ...out]
  }

  /**
   * A tangent tree without its reads of unit-seeded arrays, and those reads with their
   * coefficients (null: 1) and signs. A quotient or conversion is kept whole in the rest.
   */
  private splitUnits(t: Tan): { rest: Tan | null; units: UnitTerm[] } {
    switch (t.kind) {
      case 'leaf':
        return t.leaf.kind === 'index' && this.units.has(t.leaf.array.name)
          ? { rest: null, units: [{ leaf: t.leaf, coef: null, sign: 1 }] }
          : { rest: t, units: [] }
      case 'scale': {
        const r = this.splitUnits(t.t)
        return {
          rest: r.rest && { kind: 'scale', coef: t.coef, t: r.rest },
          units: r.units.map((u) => ({ ...u, coef: u.coef ? mul(clone(t.coef), u.coef) : clone(t.coef) })),
        }
      }
      case 'sum': {
        const terms: Array<{ sign: 1 | -1; t: Tan }> = []
        const units: UnitTerm[] = []
        for (const x of t.terms) {
          const r = this.splitUnits(x.t)
          if (r.rest) terms.push({ sign: x.sign, t: r.rest })
          for (const u of r.units) units.push({ ...u, sign: (u.sign * x.sign) as 1 | -1 })
        }
        const rest: Tan | null =
          terms.length === 0 ? null : terms.length === 1 && terms[0]!.sign === 1 ? terms[0]!.t : { kind: 'sum', terms }
        return { rest, units }
      }
      default:
        return { rest: t, units: [] }
    }
  }

  /**
   * `t$y[j·w + d] ±= c` where d = i − o is the direction in which the unit-seeded read `a[i]` is 1
   * (if it is one of the w): the sum of the read's term over the directions.
   */
  private unitUpdate(target: IndexExpr, sign: number, u: UnitTerm, s: Stmt): Stmt {
    const d = (): Expr => bin('-', clone(u.leaf.index), ref(this.units.get(u.leaf.array.name)!))
    const w = this.w
    const cond = w === 1 ? bin('==', d(), int(0)) : bin('&&', bin('<=', int(0), d()), bin('<', d(), int(w)))
    const index = w === 1 ? clone(target.index) : bin('+', bin('*', clone(target.index), int(w)), d())
    const update = {
      kind: 'update',
      op: sign > 0 ? '+=' : '-=',
      target: at(this.ta(target.array.name), index),
      value: u.coef ?? lit(1),
      ...loc(s),
    } as Stmt
    return { kind: 'if', pre: cond, post: clone(cond), then: [update], else: [], ...loc(s) } as Stmt
  }

  /**
   * The tangent of `y *= e` / `y /= e` on a number system with real semantics Y ← Y·E (Y ← Y/E),
   * ulog, emitted before the update itself (it reads the old Y): Ẏ ← Ẏ·E + Y·Ė, or
   * Ẏ ← Ẏ/E − (Y/E/E)·Ė, Ė the tangent of the real-valued e. The scaling of Ẏ is
   * `scaleDerivative` (one rounding, as an f64 product). A negated target scales the same way.
   */
  private scaleUpdate(s: Extract<Stmt, { kind: 'update' }>): Stmt[] {
    const tt = typeOf(s.target)
    if (!isRealViewType(this.registry, tt) && tt !== 'f64') fail(`cannot differentiate \`${s.op}\` on ${tt}`, s.loc)
    let target: Dataview = s.target
    while (target.kind === 'neg') target = target.target
    if (target.kind === 'field') fail(`cannot differentiate \`${s.op}\` on \`${printExpr(s.target as Expr)}\``, s.loc)
    const op = s.op as '*=' | '/='
    const at = loc(s)
    const E = realF64(s.value, this.registry)
    const y = (): Expr => ({ kind: 'call', callee: 'f64', args: [clone(target) as Expr], type: 'f64' }) as Expr
    // ∂(Y·E)/∂E = Y, ∂(Y/E)/∂E = −Y/E² (as Y/E/E: E² overflows long before Y/E/E does)
    const dE = (): Expr => (op === '*=' ? y() : neg(bin('/', bin('/', y(), clone(E)), clone(E))))
    const tree = this.tangentTree(E)
    const out: Stmt[] = []
    for (let k = 0; k < this.w; k++) {
      const ty = this.tan(target, k)
      out.push(...scaleDerivative(ty, op, E, this.fresh('tau'), at))
      if (tree)
        out.push({
          kind: 'update',
          op: '+=',
          target: clone(ty),
          value: mul(
            dE(),
            this.instantiate(tree, k, (node) => clone(node.coef)),
          ),
          ...at,
        } as Stmt)
    }
    return out
  }

  private alloc(s: Extract<Stmt, { kind: 'alloc' }>): Stmt[] {
    const t = s.type!
    if (!hasGradient(t, this.registry)) return [clone(s)]
    const tx = this.ta(s.name)
    const tt = gradientType(t)
    if (t.kind === 'stack')
      return [clone(s), { kind: 'alloc', name: tx, declared: tt, value: { kind: 'emptystack' } } as Stmt]
    if (t.kind === 'array')
      return [clone(s), { kind: 'alloc', name: tx, declared: tt, value: this.zeros(s.value as Expr) } as Stmt]
    // `x <- e` → `ẋ <- ė` in each direction; where e carries no tangent, `ẋ <- 0`, and ẋ is then
    // known to be zero until something writes it
    const te = this.tangentTree(s.value as Expr)
    const allocs: Stmt[] = []
    for (let k = 0; k < this.w; k++) {
      allocs.push({
        kind: 'alloc',
        name: this.ts(s.name, k),
        declared: tt,
        value: te ? this.instantiate(te, k, (node) => clone(node.coef)) : lit(0),
        ...loc(s),
      } as Stmt)
    }
    if (!te) this.zero.add(s.name)
    else this.zero.delete(s.name)
    return [clone(s), ...allocs]
  }

  /** `zeros(n)` → `zeros(n · w)`. */
  private zeros(v: Expr): Expr {
    const n = clone((v as Extract<Expr, { kind: 'call' }>).args[0]!)
    return { kind: 'call', callee: 'zeros', args: [this.w === 1 ? n : bin('*', n, int(this.w))] }
  }

  /** Tangent ancillas are zeroed without checks (the ancilla theorem), then freed at zero, before the value. */
  private dealloc(s: Extract<Stmt, { kind: 'dealloc' }>): Stmt[] {
    const t = s.type!
    if (!hasGradient(t, this.registry)) return [clone(s)]
    const out: Stmt[] = []
    const tt = gradientType(t)
    if (t.kind === 'stack')
      out.push({ kind: 'dealloc', name: this.ta(s.name), declared: tt, value: { kind: 'emptystack' } } as Stmt)
    else if (t.kind === 'array') {
      const i = this.fresh('i')
      const tx = this.ta(s.name)
      out.push(
        {
          kind: 'for',
          variable: i,
          start: int(0),
          stop: { kind: 'call', callee: 'len', args: [ref(tx)] },
          step: null,
          inclusive: false,
          body: [this.zeroOut(at(tx, ref(i)), lit(0), gradientScalar(t.elem))],
        } as Stmt,
        { kind: 'dealloc', name: tx, declared: tt, value: this.zeros(s.value as Expr) } as Stmt,
      )
    } else {
      for (let k = 0; k < this.w; k++) {
        out.push(
          this.zeroOut(ref(this.ts(s.name, k)), this.tangentExpr(s.value as Expr, k) ?? lit(0), gradientScalar(t.name)),
          { kind: 'dealloc', name: this.ts(s.name, k), declared: tt, value: lit(0) } as Stmt,
        )
      }
    }
    return [...out, clone(s)]
  }

  /** `g(args)` → `g$tan(args, tangents)`; `~g(args)` → the tangent of g's inverse. */
  private call(s: CallStmt): Stmt[] {
    const callee = this.builder.program.functions.get(s.callee)!
    // seed arrays passed where the callee does not write them stay unit-seeded there
    const writes = this.builder.program.writes.get(s.callee)
    const unitAt: number[] = []
    const rowsAt: number[] = []
    callee.params.forEach((p, i) => {
      const a = s.args[i]
      if (p.type.kind !== 'array' || a?.kind !== 'var') return
      if (this.units.has(a.name) && writes?.[i] === false) unitAt.push(i)
      // (an array the caller only accumulates into is only accumulated into where it is passed)
      if (this.rows.has(a.name)) rowsAt.push(i)
    })
    const name = this.builder.request(s.callee, s.inverse, unitVariant(unitAt, rowsAt))
    const before: Stmt[] = [],
      after: Stmt[] = []
    const targs: Arg[] = []
    callee.params.forEach((p, i) => {
      if (!hasGradient(p.type, this.registry)) return
      const a = s.args[i]!
      const isView = a.kind === 'var' || a.kind === 'index' || a.kind === 'neg'
      if (p.type.kind !== 'scalar') {
        if (a.kind !== 'var')
          fail(`argument ${i + 1} of \`${s.callee}\` must be a variable to carry tangents`, a.loc ?? s.loc)
        targs.push(ref(this.ta((a as { name: string }).name)))
        return
      }
      for (let k = 0; k < this.w; k++) {
        if (isView) {
          targs.push(this.tan(a, k))
          continue
        }
        const te = this.tangentExpr(a as Expr, k)
        if (!te) {
          targs.push(lit(0))
          continue
        }
        // a read-only expression argument: its tangent goes through a temporary ancilla
        const c = this.fresh('ct')
        const ct = gradientType(p.type)
        before.push({ kind: 'alloc', name: c, declared: ct, value: te } as Stmt)
        after.unshift(this.zeroOut(ref(c), clone(te), gradientScalar(p.type.name)), {
          kind: 'dealloc',
          name: c,
          declared: ct,
          value: lit(0),
        } as Stmt)
        targs.push(ref(c))
      }
    })
    return [
      ...before,
      {
        kind: 'callstmt',
        callee: name,
        args: [
          ...s.args.map(clone),
          ...targs,
          ...unitAt.map((i) => ref(this.units.get((s.args[i] as { name: string }).name)!)),
          ...rowsAt.map((i) => ref(this.rows.get((s.args[i] as { name: string }).name)!)),
        ],
        inverse: false,
        ...loc(s),
      },
      ...after,
    ]
  }

  private bijection(s: CallStmt): Stmt[] {
    const spec0 = this.registry.bijection(s.callee)
    const spec = s.inverse && spec0.inverse !== 'self' ? this.registry.bijection(spec0.inverse) : spec0
    const types = s.args.map((a) => typeOf(a) ?? 'f64')
    const same = clone(s)
    if (!types.some((t) => this.isFloat(t))) return [same]
    const out: Stmt[] = [same]
    const a = s.args
    if (spec.selfAdjoint) {
      // linear: the tangents go through the bijection itself
      for (let k = 0; k < this.w; k++)
        out.push({ kind: 'callstmt', callee: spec.name, args: a.map((x) => this.tan(x, k)), inverse: false, ...loc(s) })
      return out
    }
    if (!spec.tangent) {
      return fail(
        `the bijection \`${spec.name}\` has no tangent rule: give its spec a \`tangent\` snippet (or mark a linear, self-transposed one \`selfAdjoint\`) for forward mode, jvp, Hessians and hvp through it`,
        s.loc,
      )
    }
    const asExpr = (dv: Arg): Expr => (dv.kind === 'neg' ? neg(asExpr(dv.target)) : clone(dv as Expr))
    const isView = (x: Arg) => x.kind === 'var' || x.kind === 'index' || x.kind === 'neg'
    const firstFloat = types.find((t) => this.isFloat(t))!
    // the rule computes in the type of the tangents: f32 at f32, else f64 (real views read as f64)
    const ruleType = gradientScalar(firstFloat) === 'f32' ? 'f32' : 'f64'
    for (let k = 0; k < this.w; k++) {
      out.push(
        ...instantiateTangentRule(
          spec,
          {
            // a value in a coefficient, as a real of the tangents' type (fixed point is read with f64(…))
            value: (i) => realAs(asExpr(a[i]!), this.registry, ruleType),
            tangent: (i) =>
              !this.isFloat(types[i]) ? null : isView(a[i]!) ? this.tan(a[i]!, k) : this.tangentExpr(a[i] as Expr, k),
            fresh: () => this.fresh('r'),
            ancilla: { kind: 'scalar', name: gradientScalar(firstFloat) },
          },
          s.loc,
        ),
      )
    }
    return out
  }
}

/** A read of a unit-seeded array in a tangent, with its coefficient (null: 1) and sign. */
interface UnitTerm {
  leaf: IndexExpr
  coef: Expr | null
  sign: 1 | -1
}

/**
 * A tangent expression before it is written out per direction: the tangent of a float location,
 * a signed sum, or a tangent times a coefficient (a value expression, the same in every direction).
 */
type Tan =
  | { kind: 'leaf'; leaf: Dataview }
  | { kind: 'sum'; terms: Array<{ sign: 1 | -1; t: Tan }> }
  /** (\`reciprocal\`: the coefficient is the reciprocal of a quotient's denominator, see \`tree\`) */
  | { kind: 'scale'; coef: Expr; t: Tan; reciprocal?: boolean }
  | { kind: 'convert'; to: string; t: Tan }
  | { kind: 'quot'; t: Tan; by: Expr }

/** Whether a tangent tree converts between f64 and f32 somewhere. */
function converts(t: Tan): boolean {
  switch (t.kind) {
    case 'leaf':
      return false
    case 'convert':
      return true
    case 'scale':
    case 'quot':
      return converts(t.t)
    case 'sum':
      return t.terms.some((x) => converts(x.t))
  }
}

/** Whether a tangent tree divides somewhere (the tangent of a quotient). */
function divides(t: Tan): boolean {
  switch (t.kind) {
    case 'leaf':
      return false
    case 'quot':
      return true
    case 'scale':
      return t.reciprocal === true || divides(t.t)
    case 'convert':
      return divides(t.t)
    case 'sum':
      return t.terms.some((x) => divides(x.t))
  }
}

/** Operations per direction of a tangent tree (loads, multiplications, additions). */
function cost(t: Tan): number {
  switch (t.kind) {
    case 'leaf':
      return 1
    case 'scale':
      return 1 + cost(t.t)
    case 'convert':
    case 'quot':
      return 1 + cost(t.t)
    case 'sum':
      return t.terms.length - 1 + t.terms.reduce((n, x) => n + cost(x.t), 0)
  }
}

/** The variable a scalar location belongs to (`x`, `-x`, `x.re`); undefined for array elements. */
function rootName(dv: Dataview | Arg): string | undefined {
  switch (dv.kind) {
    case 'var':
      return dv.name
    case 'neg':
      return rootName(dv.target)
    case 'field':
      return rootName(dv.target as Dataview)
    default:
      return undefined
  }
}

/** The scalar variables whose tangents a call, bijection, push, pop or free may write. */
function writtenBy(s: Stmt): string[] {
  const root = (dv: Dataview | Arg) => rootName(dv)
  switch (s.kind) {
    case 'callstmt':
      return s.args.map(root).filter((n): n is string => n !== undefined)
    case 'push':
    case 'pop': {
      const n = root(s.value)
      return n === undefined ? [] : [n]
    }
    case 'dealloc':
      return [s.name]
    default:
      return []
  }
}

function intersect<T>(a: Set<T>, b: Set<T>): Set<T> {
  return new Set([...a].filter((x) => b.has(x)))
}

function loc(s: { loc?: Expr['loc'] }): { loc?: NonNullable<Expr['loc']> } {
  return s.loc ? { loc: s.loc } : {}
}
