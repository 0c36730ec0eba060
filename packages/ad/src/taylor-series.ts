/**
 * Truncated Taylor series as IR expressions, and the propagation rule of every standard
 * primitive (univariate Taylor arithmetic, as in Griewank & Walther ch. 13 and JAX's `jet`).
 *
 * A series of order k stands for x(t) = x₀ + x₁t + … + x_k t^k; coefficient j is an IR
 * expression (null: exactly zero). Series are lazy: coefficient j is formed when first asked
 * for, from the operands' coefficients 0…j and its own lower ones, and stored in a fresh f64
 * ancilla (`SeriesScope.temp`) so that each is computed once. The rules:
 * - products by Cauchy convolution, quotients by solving a·b = c for c's next coefficient;
 * - a primitive z = φ(a) by the linear ODE it satisfies, z′ = a′·ψ (exp: ψ = z; sin: ψ = cos a;
 *   tan: ψ = 1 + z²; …), in coefficients z_j = (1/j) Σ_{i=1..j} i·a_i·ψ_{j−i};
 * - a primitive defined through its inverse (log, sqrt, atan, asin) by solving ψ·z′ = a′ for z_j.
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
  for (let i = from; i <= to; i++) out = plus(out, scaled(w(i), times(a.coef(i), b.coef(j - i))))
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

/** z with z′ = a′·ψ (ψ may read z's lower coefficients): z_j = (1/j) Σ_{i=1..j} i·a_i·ψ_{j−i}. */
function integrate(scope: SeriesScope, a: Series, value: Expr, psi: (z: Series) => Series, sign = 1): Series {
  let p: Series | undefined
  const z: Series = lazySeries(scope, value, (j) => {
    p ??= psi(z)
    return divideBy(
      scaled(
        sign,
        convolve(a, p, j, 1, j, (i) => i),
      ),
      j,
    )
  })
  return z
}

/** z with ψ·z′ = a′: z_j = (j·a_j − Σ_{i=1..j−1} i·z_i·ψ_{j−i}) / (j·ψ₀). */
function solve(scope: SeriesScope, a: Series, value: Expr, psi: Series, sign = 1): Series {
  const z: Series = lazySeries(scope, value, (j) => {
    const rhs = minus(
      scaled(sign * j, a.coef(j)),
      convolve(z, psi, j, 1, j - 1, (i) => i),
    )
    return over(rhs, j === 1 ? psi.coef(0)! : bin('*', lit(j), psi.coef(0)!))
  })
  return z
}

const call = (callee: string, ...args: Expr[]): Expr => ({ kind: 'call', callee, args }) as Expr
const one = constantSeries(lit(1))

/** sin and cos of a together (each one's ODE reads the other). */
function sinCos(scope: SeriesScope, a: Series, hyperbolic: boolean): [Series, Series] {
  const a0 = () => a.coef(0)!
  const s: Series = integrate(scope, a, call(hyperbolic ? 'sinh' : 'sin', a0()), () => c)
  const c: Series = integrate(scope, a, call(hyperbolic ? 'cosh' : 'cos', a0()), () => s, hyperbolic ? 1 : -1)
  return [s, c]
}

/** The Taylor rule of a standard primitive applied to its arguments' series; undefined when it has none. */
export function primitiveSeries(scope: SeriesScope, name: string, args: Series[], value: Expr): Series | undefined {
  const a = args[0]!
  if (args.every((x) => x.constant)) return constantSeries(value)
  const a0 = () => a.coef(0)!
  switch (name) {
    case 'identity':
      return a
    case 'exp':
      return integrate(scope, a, value, (z) => z)
    case 'log':
      return solve(scope, a, value, a)
    case 'sin':
      return sinCos(scope, a, false)[0]
    case 'cos':
      return sinCos(scope, a, false)[1]
    case 'sinh':
      return sinCos(scope, a, true)[0]
    case 'cosh':
      return sinCos(scope, a, true)[1]
    case 'tan':
      return integrate(scope, a, value, (z) =>
        addSeries(one, mulSeries(scope, z, z, bin('*', z.coef(0)!, z.coef(0)!)), 1),
      )
    case 'tanh':
      return integrate(scope, a, value, (z) =>
        addSeries(one, mulSeries(scope, z, z, bin('*', z.coef(0)!, z.coef(0)!)), -1),
      )
    case 'sqrt': {
      // z² = a: z_j = (a_j − Σ_{i=1..j−1} z_i z_{j−i}) / (2 z₀)
      const z: Series = lazySeries(scope, value, (j) =>
        over(minus(a.coef(j), convolve(z, z, j, 1, j - 1)), bin('*', lit(2), z.coef(0)!)),
      )
      return z
    }
    case 'atan':
      return solve(scope, a, value, addSeries(one, mulSeries(scope, a, a, bin('*', a0(), a0())), 1))
    case 'asin':
    case 'acos': {
      const q = sqrtOf(scope, addSeries(one, mulSeries(scope, a, a, bin('*', a0(), a0())), -1))
      return solve(scope, a, value, q, name === 'asin' ? 1 : -1)
    }
    case 'abs': {
      const s = scope.selector(bin('<', a0(), lit(0)), -1, 1)
      return lazySeries(scope, value, (j) => times(clone(s), a.coef(j)))
    }
    case 'abs2':
      return mulSeries(scope, a, a, value)
    case 'max':
    case 'min': {
      const b = args[1]!
      // s = 1 where a is chosen: max picks a when a ≥ b, min when a ≤ b
      const s = scope.selector(bin(name === 'max' ? '>=' : '<=', a0(), b.coef(0)!), 1, 0)
      return lazySeries(scope, value, (j) =>
        plus(times(clone(s), a.coef(j)), times(minus(lit(1), clone(s)), b.coef(j))),
      )
    }
    case 'pow':
      return powSeries(scope, a, args[1]!, value)
    case 'atan2': {
      // z = atan2(y, x): (x² + y²)·z′ = x·y′ − y·x′
      const [y, x] = args as [Series, Series]
      const q = addSeries(
        mulSeries(scope, x, x, bin('*', x.coef(0)!, x.coef(0)!)),
        mulSeries(scope, y, y, bin('*', y.coef(0)!, y.coef(0)!)),
        1,
      )
      // w_m, the coefficient m of x·y′ − y·x′ ((u′)_m = (m+1)·u_{m+1})
      const w = (m: number): Expr | null => {
        let out: Expr | null = null
        for (let l = 0; l <= m; l++)
          out = plus(
            out,
            scaled(m - l + 1, minus(times(x.coef(l), y.coef(m - l + 1)), times(y.coef(l), x.coef(m - l + 1)))),
          )
        return out
      }
      const z: Series = lazySeries(scope, value, (j) =>
        over(
          minus(
            w(j - 1),
            convolve(z, q, j, 1, j - 1, (i) => i),
          ),
          j === 1 ? q.coef(0)! : bin('*', lit(j), q.coef(0)!),
        ),
      )
      return z
    }
    default:
      return undefined
  }
}

function sqrtOf(scope: SeriesScope, a: Series): Series {
  const z: Series = lazySeries(scope, call('sqrt', a.coef(0)!), (j) =>
    over(minus(a.coef(j), convolve(z, z, j, 1, j - 1)), bin('*', lit(2), z.coef(0)!)),
  )
  return z
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
  const la = primitiveSeries(scope, 'log', [a], call('log', a.coef(0)!))!
  const prod = mulSeries(scope, p, la, bin('*', p.coef(0)!, la.coef(0)!))
  return integrate(scope, prod, value, (z) => z)
}

/** A clear error for an expression Taylor mode cannot propagate. */
export function noRule(what: string, loc?: Expr['loc']): never {
  throw new TenetStaticError('ad/taylor-rule', what, loc)
}
