/**
 * Truncated Taylor series as IR expressions, and the propagation rules of the language's
 * arithmetic (univariate Taylor arithmetic, as in Griewank & Walther ch. 13 and JAX's `jet`);
 * a primitive's rule comes from its spec (`taylor-rules.ts`), not from here.
 *
 * A series of order k stands for x(t) = x₀ + x₁t + … + x_k t^k; coefficient j is an IR
 * expression (null: exactly zero). Series are lazy: coefficient j is formed when first asked
 * for, from the operands' coefficients 0…j and its own lower ones, and stored in a fresh f64
 * ancilla (`SeriesScope.temp`) so that each is computed once. The rules:
 * - products by Cauchy convolution, quotients by solving a·b = c for c's next coefficient;
 * - a primitive z = φ(a) by the linear ODE it satisfies, z′ = a′·ψ (exp: ψ = z; sin: ψ = cos a;
 *   tan: ψ = 1 + z²; …), in coefficients z_j = (1/j) Σ_{i=1..j} i·a_i·ψ_{j−i} (`odeSeries`);
 * - powers a^p with a constant exponent by a·z′ = p·z·a′, and with a varying one as exp(p log a).
 */
import { TenetStaticError, type Expr, type Stmt } from '@tenet/ir'
import { bin, clone, lit, neg, ref } from './expr.js'

/** A lazily formed truncated Taylor series: `coef(j)` is coefficient j (null: zero). */
export interface Series {
  coef(j: number): Expr | null
  /** True when every coefficient after the first is zero (a constant along the direction). */
  readonly constant: boolean
}

/**
 * Where a series' coefficients are computed: `temp` puts an expression in a fresh f64 ancilla
 * (`defs`), and `frees` releases them in reverse order, each against the expression that
 * defined it (the statements run inside `@unchecked`, so the release costs nothing forwards and
 * recomputes the value backwards).
 */
export class SeriesScope {
  readonly defs: Stmt[] = []
  private readonly temps: Array<{ name: string; value: Expr }> = []
  /** Statements that free what `selector` allocated, run before the temps are freed. */
  private readonly undo: Stmt[][] = []

  constructor(private readonly fresh: (kind: string) => string) {}

  /** Series of the primitive calls formed in this scope, by callee (a rule that calls its primitive again on the same argument series reads the same series). */
  private readonly calls = new Map<string, Array<{ args: Series[]; series: Series }>>()

  /** The series formed here for `callee` on exactly these argument series, if any. */
  recall(callee: string, args: Series[]): Series | undefined {
    return this.calls
      .get(callee)
      ?.find((c) => c.args.length === args.length && c.args.every((a, i) => same(a, args[i]!)))?.series
  }
  /** Records the series of `callee` on these argument series (see `recall`). */
  remember(callee: string, args: Series[], series: Series): void {
    let list = this.calls.get(callee)
    if (!list) this.calls.set(callee, (list = []))
    list.push({ args, series })
  }

  /** An atom (variable, element, literal) as it is; anything else in a fresh ancilla. */
  temp(value: Expr): Expr {
    if (value.kind === 'var' || value.kind === 'num' || value.kind === 'index') return value
    const name = this.fresh('tc')
    this.defs.push({ kind: 'alloc', name, declared: { kind: 'scalar', name: 'f64' }, value: clone(value) } as Stmt)
    this.temps.push({ name, value })
    return ref(name)
  }

  /**
   * An f64 ancilla that is `ifTrue` where `cond` holds and `ifFalse` elsewhere, for the
   * branches of abs, max and min (an expression has no conditional).
   */
  selector(cond: Expr, ifTrue: number, ifFalse: number): Expr {
    const name = this.fresh('sel')
    const change = (op: '+=' | '-='): Stmt =>
      ({
        kind: 'if',
        pre: clone(cond),
        post: null,
        then: [{ kind: 'update', op, target: ref(name), value: lit(ifTrue - ifFalse) } as Stmt],
        else: [],
      }) as Stmt
    this.defs.push(
      { kind: 'alloc', name, declared: { kind: 'scalar', name: 'f64' }, value: lit(ifFalse) } as Stmt,
      change('+='),
    )
    this.undo.push([change('-='), { kind: 'dealloc', name, value: lit(ifFalse) } as Stmt])
    return ref(name)
  }

  /** The statements that free every temp, newest first. */
  frees(): Stmt[] {
    const out: Stmt[] = []
    for (let i = this.temps.length - 1; i >= 0; i--)
      out.push({ kind: 'dealloc', name: this.temps[i]!.name, value: clone(this.temps[i]!.value) } as Stmt)
    // selectors were allocated before the temps that read them: freed after
    for (let i = this.undo.length - 1; i >= 0; i--) out.push(...this.undo[i]!)
    return out
  }

  get empty(): boolean {
    return this.defs.length === 0
  }
}

/** The same series: one object, or two constants of one value expression. */
function same(a: Series, b: Series): boolean {
  return a === b || (a.constant && b.constant && JSON.stringify(a.coef(0)) === JSON.stringify(b.coef(0)))
}

/** A series given coefficient by coefficient; each formed once (in an ancilla when not an atom). */
export function lazySeries(
  scope: SeriesScope,
  first: Expr | null,
  next: (j: number) => Expr | null,
  constant = false,
): Series {
  // the value (coefficient 0) is formed only when read: the higher ones seldom need it
  let value: Expr | null | undefined
  const cache: Array<Expr | null> = [null]
  return {
    constant,
    coef(j) {
      if (j === 0) {
        if (value === undefined) value = first === null ? null : scope.temp(first)
        return value ? clone(value) : null
      }
      for (let m = cache.length; m <= j; m++) {
        const e = constant ? null : next(m)
        cache.push(e === null ? null : scope.temp(e))
      }
      return cache[j] ? clone(cache[j]!) : null
    },
  }
}

/** The constant series of a value expression. */
export function constantSeries(value: Expr): Series {
  return { constant: true, coef: (j) => (j === 0 ? clone(value) : null) }
}

// —— sums of terms (nulls dropped) ——

function plus(a: Expr | null, b: Expr | null): Expr | null {
  return a === null ? b : b === null ? a : bin('+', a, b)
}
function minus(a: Expr | null, b: Expr | null): Expr | null {
  return b === null ? a : a === null ? neg(b) : bin('-', a, b)
}
function times(a: Expr | null, b: Expr | null): Expr | null {
  if (a === null || b === null) return null
  if (a.kind === 'num' && a.value === 1) return b
  if (b.kind === 'num' && b.value === 1) return a
  return bin('*', a, b)
}
function scaled(c: number, a: Expr | null): Expr | null {
  return a === null ? null : c === 1 ? a : c === -1 ? neg(a) : bin('*', lit(c), a)
}
function over(a: Expr | null, b: Expr): Expr | null {
  return a === null ? null : bin('/', a, b)
}
function divideBy(a: Expr | null, j: number): Expr | null {
  return a === null || j === 1 ? a : bin('/', a, lit(j))
}

/** Σ_{i=from..to} w(i) · a_i · b_{j−i}, nulls dropped. */
function convolve(
  a: Series,
  b: Series,
  j: number,
  from: number,
  to: number,
  w: (i: number) => number = () => 1,
): Expr | null {
  let out: Expr | null = null
  for (let i = from; i <= to; i++) {
    // b's coefficient is formed only where a's is not zero
    const ai = a.coef(i)
    if (ai !== null) out = plus(out, scaled(w(i), times(ai, b.coef(j - i))))
  }
  return out
}

// —— the rules ——

/** −a, termwise. */
export function negSeries(a: Series): Series {
  return {
    constant: a.constant,
    coef: (j) => {
      const c = a.coef(j)
      return c === null ? null : neg(c)
    },
  }
}
/** a + b (sign 1) or a − b (sign −1), termwise. */
export function addSeries(a: Series, b: Series, sign: 1 | -1): Series {
  return {
    constant: a.constant && b.constant,
    coef: (j) => (sign > 0 ? plus(a.coef(j), b.coef(j)) : minus(a.coef(j), b.coef(j))),
  }
}

/** a·b by Cauchy convolution (one factor constant: a scaling). */
export function mulSeries(scope: SeriesScope, a: Series, b: Series, value: Expr): Series {
  if (a.constant && b.constant) return constantSeries(value)
  return lazySeries(scope, value, (j) => {
    if (a.constant) return times(a.coef(0), b.coef(j))
    if (b.constant) return times(b.coef(0), a.coef(j))
    return convolve(a, b, j, 0, j)
  })
}

/** a/b: c_j = (a_j − Σ_{i=1..j} b_i c_{j−i}) / b₀. */
export function divSeries(scope: SeriesScope, a: Series, b: Series, value: Expr): Series {
  if (a.constant && b.constant) return constantSeries(value)
  const self: Series = lazySeries(scope, value, (j) => {
    if (b.constant) return over(a.coef(j), b.coef(0)!)
    return over(minus(a.coef(j), convolve(b, self, j, 1, j)), b.coef(0)!)
  })
  return self
}

/**
 * z with z′ = Σᵢ ψᵢ·aᵢ′ (a primitive's `ode` Taylor rule, or its partials): z_j = Σᵢ cᵢ,
 * where an argument whose ψ is constant along the line gives cᵢ = ψᵢ₀·(aᵢ)_j, and any other
 * cᵢ = (1/j) Σ_{m=1..j} m·(aᵢ)_m·(ψᵢ)_{j−m}. `psi` is called once, when the first coefficient
 * after the value is formed; it may read z (its lower coefficients), as exp's ψ = z does.
 */
export function odeSeries(scope: SeriesScope, args: Series[], value: Expr, psi: (z: Series) => Series[]): Series {
  let ps: Series[] | undefined
  const z: Series = lazySeries(scope, value, (j) => {
    ps ??= psi(z)
    let direct: Expr | null = null,
      sum: Expr | null = null
    args.forEach((a, i) => {
      if (a.constant) return
      const p = ps![i]!
      if (p.constant) direct = plus(direct, times(p.coef(0), a.coef(j)))
      else
        sum = plus(
          sum,
          convolve(a, p, j, 1, j, (m) => m),
        )
    })
    return plus(direct, divideBy(sum, j))
  })
  return z
}

/**
 * z with v·z′ = Σᵢ uᵢ·aᵢ′ (an `ode` whose ψᵢ = uᵢ/v share one denominator: log, atan, asin,
 * sqrt's 0.5/z, atan2), without forming the quotients' series: z_j = (Σᵢ Σ_{m=1..j} m·(aᵢ)_m·(uᵢ)_{j−m}
 * − Σ_{l=1..j−1} l·z_l·v_{j−l}) / (j·v₀). `parts` is called once, like `odeSeries`' ψ, and may read z.
 */
export function quotientOdeSeries(
  scope: SeriesScope,
  args: Series[],
  value: Expr,
  parts: (z: Series) => { u: Series[]; v: Series },
): Series {
  let p: { u: Series[]; v: Series } | undefined
  const z: Series = lazySeries(scope, value, (j) => {
    p ??= parts(z)
    let sum: Expr | null = null
    args.forEach((a, i) => {
      if (!a.constant)
        sum = plus(
          sum,
          convolve(a, p!.u[i]!, j, 1, j, (m) => m),
        )
    })
    const rhs = minus(
      sum,
      convolve(z, p.v, j, 1, j - 1, (l) => l),
    )
    return over(rhs, j === 1 ? p.v.coef(0)! : bin('*', lit(j), p.v.coef(0)!))
  })
  return z
}

/** z with ψ·z′ = a′: z_j = (j·a_j − Σ_{i=1..j−1} i·z_i·ψ_{j−i}) / (j·ψ₀). */
function solve(scope: SeriesScope, a: Series, value: Expr, psi: Series): Series {
  const z: Series = lazySeries(scope, value, (j) => {
    const rhs = minus(
      scaled(j, a.coef(j)),
      convolve(z, psi, j, 1, j - 1, (i) => i),
    )
    return over(rhs, j === 1 ? psi.coef(0)! : bin('*', lit(j), psi.coef(0)!))
  })
  return z
}

/** exp(a) (z′ = z·a′), for `**` with a varying exponent. */
function expSeries(scope: SeriesScope, a: Series, value: Expr): Series {
  return odeSeries(scope, [a], value, (z) => [z])
}

const call = (callee: string, ...args: Expr[]): Expr => ({ kind: 'call', callee, args }) as Expr

/** The series of `a op b` for an arithmetic operator of the language (+ − * / **); undefined for another. */
export function binarySeries(scope: SeriesScope, op: string, a: Series, b: Series): Series | undefined {
  const value = () => bin(op as '+', a.coef(0)!, b.coef(0)!)
  switch (op) {
    case '+':
      return addSeries(a, b, 1)
    case '-':
      return addSeries(a, b, -1)
    case '*':
      return mulSeries(scope, a, b, value())
    case '/':
      return divSeries(scope, a, b, value())
    case '**':
      return powSeries(scope, a, b, value())
    default:
      return undefined
  }
}

/**
 * a^p. A constant exponent: a·z′ = p·z·a′, z_j = Σ_{i=1..j} ((p+1)i − j)·a_i·z_{j−i} / (j·a₀)
 * (a literal 2 as a product, which also holds at a₀ = 0); a varying one: exp(p·log a).
 */
export function powSeries(scope: SeriesScope, a: Series, p: Series, value: Expr): Series {
  if (p.constant) {
    const pe = p.coef(0)!
    if (pe.kind === 'num' && pe.value === 2) return mulSeries(scope, a, a, value)
    if (pe.kind === 'num' && pe.value === 1) return a
    const pf: Expr = pe.kind === 'num' ? lit(pe.value) : call('f64', pe)
    const z: Series = lazySeries(scope, value, (j) => {
      let sum: Expr | null = null
      for (let i = 1; i <= j; i++) {
        const t = times(a.coef(i), z.coef(j - i))
        if (t === null) continue
        // ((p+1)·i − j) as an expression of p
        const w =
          pe.kind === 'num'
            ? lit((pe.value + 1) * i - j)
            : bin('-', bin('*', bin('+', clone(pf), lit(1)), lit(i)), lit(j))
        sum = plus(sum, bin('*', w, t))
      }
      return over(sum, bin('*', lit(j), a.coef(0)!))
    })
    return z
  }
  // log a by a·(log a)′ = a′
  const la = solve(scope, a, call('log', a.coef(0)!), a)
  const prod = mulSeries(scope, p, la, bin('*', p.coef(0)!, la.coef(0)!))
  return expSeries(scope, prod, value)
}

/** A clear error for an expression Taylor mode cannot propagate. */
export function noRule(what: string, loc?: Expr['loc']): never {
  throw new TenetStaticError('ad/taylor-rule', what, loc)
}
