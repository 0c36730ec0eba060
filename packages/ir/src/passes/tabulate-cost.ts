/**
 * The cost guard of pass `tabulate`: a lower bound, as an expression evaluated before the loop,
 * of how many times a loop evaluates the values a table would hold. A table of `f(A[j])` costs
 * len(A) evaluations; the loop with it evaluates none. The pass builds the tables only when the
 * loop would evaluate more than the tables cost (see `tabulate.ts`).
 *
 * The count comes from the loops' ranges ("trip counts"), where they are known before the loop:
 *
 * - a statement counts the evaluations in its own expressions (an `if`'s condition, a `while`'s
 *   first test included); what a branch or a `while` body evaluates counts 0 (it may not run),
 *   unless the caller assumes the branch's condition (see `CountOptions`);
 * - a nested loop whose range reads nothing the loop writes runs `max(0, trips)` times its body's
 *   count (trips: a lower bound for a literal step other than ±1);
 * - a nested loop whose range reads the variable of the loop around it (a triangular nest:
 *   `for j in 0..m { for i in m - 2..=j by -1 { … } }`) has a count affine in that variable,
 *   and the loop around it sums it exactly: trips × (first + last) / 2, clipped at 0 — a lower
 *   bound, since the iterations where the inner range is empty count 0 and not a negative number;
 * - anything else (a step that is not a literal, say) counts 0.
 *
 * The count is in f64 (no i32 overflow for large nests). It only decides which of two exact
 * programs runs (tabulated or not), never what they compute.
 */
import type { CallExpr, Expr, ForStmt, Stmt } from '../ast.js'
import { readNames } from '../check.js'
import { valueReads } from '../stmt-exprs.js'
import { cannotFail } from './hoist-invariants.js'
import { rewriteExpr } from './rewrite.js'

const f64 = (value: number): Expr => ({ kind: 'num', value, isFloat: true, type: 'f64' })
const toF64 = (e: Expr): Expr =>
  e.type === 'f64' ? e : e.kind === 'num' ? f64(e.value) : { kind: 'call', callee: 'f64', args: [e], type: 'f64' }
/** `left o right` in f64, with `x - 0`, `x * 1` and `1 * x` written `x`. */
function op(o: '+' | '-' | '*' | '/', left: Expr, right: Expr): Expr {
  const lit = (e: Expr, v: number) => e.kind === 'num' && e.value === v
  if ((o === '-' || o === '+') && lit(right, 0)) return left
  if (o === '*' && lit(right, 1)) return left
  if (o === '*' && lit(left, 1)) return right
  if (o === '/' && lit(right, 1)) return left
  return { kind: 'binary', op: o, left, right, type: 'f64' }
}
const atLeastZero = (e: Expr): CallExpr => ({ kind: 'call', callee: 'max', args: [f64(0), e], type: 'f64' })
const isZero = (e: Expr): boolean => e.kind === 'num' && e.value === 0

/** Sum of two counts, literals folded. */
function plus(a: Expr, b: Expr): Expr {
  if (isZero(a)) return b
  if (isZero(b)) return a
  if (a.kind === 'num' && b.kind === 'num') return f64(a.value + b.value)
  return op('+', a, b)
}

/** `e` with the variable `v` replaced by `by`. */
function substitute(e: Expr, v: string, by: Expr): Expr {
  return rewriteExpr(e, (x) => {
    if (x.kind === 'var' && x.name === v) return by
    // f64 of a literal is a literal; x - 0 is x
    if (x.kind === 'call' && x.callee === 'f64' && x.args[0]?.kind === 'num') return f64(x.args[0].value)
    if (x.kind === 'binary' && x.op === '-' && x.type === 'f64' && x.right.kind === 'num' && x.right.value === 0)
      return x.left
    return x
  }) as Expr
}

/**
 * The degree of `e` in `v` (0: does not read it; 1: affine in it), or 2 for anything else — a
 * product of two terms that read it, a call or an element read that reads it.
 */
function degree(e: Expr, v: string): number {
  switch (e.kind) {
    case 'var':
      return e.name === v ? 1 : 0
    case 'num':
    case 'bool':
      return 0
    case 'unary':
      return e.op === '-' ? degree(e.arg, v) : readNames(e).has(v) ? 2 : 0
    case 'binary':
      switch (e.op) {
        case '+':
        case '-':
          return Math.max(degree(e.left, v), degree(e.right, v))
        case '*':
          return Math.min(2, degree(e.left, v) + degree(e.right, v))
        case '/':
          return degree(e.right, v) ? 2 : degree(e.left, v)
        default:
          return readNames(e).has(v) ? 2 : 0
      }
    case 'call':
      // a conversion to f64 of an i32 sum is exact (no rounding, no wrap within the sizes that matter)
      if (e.callee === 'f64' && e.args.length === 1) return degree(e.args[0]!, v)
      return readNames(e).has(v) ? 2 : 0
    default:
      return readNames(e).has(v) ? 2 : 0
  }
}

/**
 * A lower bound of the trips of a loop with a literal step c, as an f64 expression not clipped
 * at 0: (hi − lo) / |c|, plus 1 / |c| when inclusive (the trips are the ceiling of the first, the
 * floor of (hi − lo) / |c| plus 1 in the second case) — exact for c = ±1, affine in the bounds.
 * With it, for c = ±1, the loop's first and last values. Undefined for a step that is not a literal.
 */
function trips(s: ForStmt): { count: Expr; first?: Expr; last?: Expr } | undefined {
  const step = s.step === null ? 1 : s.step.kind === 'num' && Number.isInteger(s.step.value) ? s.step.value : 0
  if (step === 0) return undefined
  const [lo, hi] = step > 0 ? [s.start, s.stop] : [s.stop, s.start]
  const span = op('-', toF64(hi), toF64(lo))
  const count = op('/', s.inclusive ? op('+', span, f64(1)) : span, f64(Math.abs(step)))
  if (step !== 1 && step !== -1) return { count }
  const one = { kind: 'num' as const, value: 1, isFloat: false, type: 'i32' as const }
  const last: Expr = s.inclusive
    ? s.stop
    : { kind: 'binary', op: step === 1 ? '-' : '+', left: s.stop, right: one, type: 'i32' }
  return { count, first: s.start, last }
}

/** How `evaluationCount` treats branches and `@unchecked` blocks. */
export interface CountOptions {
  /**
   * Asked about the condition of an \`if\` that reads nothing the loop writes: true counts its
   * \`then\` branch as if it runs, and obliges the caller to build only where the condition holds
   * (a count under an assumption is a lower bound only then). Without it a branch counts 0.
   */
  assume?: (condition: Expr, then: Stmt[]) => boolean
  /** Count nothing in \`@unchecked\` blocks (uncomputes that \`dead-ancillas\` drops). */
  skipUnchecked?: boolean
}

/**
 * A lower bound of the evaluations `own` counts in `loop` (all its iterations), as an f64
 * expression over values the loop does not write, or a literal 0 where none can be given.
 * `own(s)`: the evaluations in a statement's own expressions (not its nested blocks); `written`:
 * the names the loop may write (its variable, ancillas and inner loops' variables included).
 */
export function evaluationCount(
  loop: ForStmt,
  own: (s: Stmt) => number,
  written: ReadonlySet<string>,
  options: CountOptions = {},
): Expr {
  const { assume, skipUnchecked = false } = options
  const bound = new Set(written)
  bound.add(loop.variable)
  /** Reads nothing bound in the loop but `v` (when given). */
  const readsOnly = (e: Expr, v?: string): boolean => [...readNames(e)].every((n) => n === v || !bound.has(n))
  /** The count of a loop: invariant, or affine in `around` (the variable of the loop around it); else 0. */
  const forCount = (s: ForStmt, around: string | undefined): Expr => {
    const t = trips(s)
    if (!t) return f64(0)
    // a nested loop's range is evaluated by the guard even where the program never reaches the
    // loop (an outer range empty): only a range that cannot fail counts (found by review: an
    // out-of-range `cnt[5]` the program never read failed the guard's bounds check)
    if (s !== loop && ![t.count, t.first, t.last].every((e) => e === undefined || cannotFail(e))) return f64(0)
    const inner = block(s.body, s.variable)
    if (isZero(inner)) return f64(0)
    if (readNames(inner).has(s.variable)) {
      // summed over the loop's values: exact for an affine count
      if (!t.first || !t.last || !readsOnly(t.count) || !readsOnly(t.first) || !readsOnly(t.last)) return f64(0)
      const sum = plus(substitute(inner, s.variable, t.first), substitute(inner, s.variable, t.last))
      return atLeastZero(op('/', op('*', t.count, sum), f64(2)))
    }
    if (readsOnly(t.count)) return op('*', atLeastZero(t.count), inner)
    // a range that moves with the loop around it: affine in its variable, summed there
    if (around !== undefined && readsOnly(t.count, around) && degree(t.count, around) <= 1)
      return inner.kind === 'num' && inner.value === 1 ? t.count : op('*', t.count, inner)
    return f64(0)
  }
  /** The count of a block: invariant, or affine in `v`. */
  const block = (body: Stmt[], v: string | undefined): Expr => {
    let sum: Expr = f64(0)
    for (const s of body) {
      sum = plus(sum, f64(own(s)))
      let c: Expr = f64(0)
      if (s.kind === 'for') c = forCount(s, v)
      else if (s.kind === 'unchecked' && !skipUnchecked) c = block(s.body, v)
      // (a range guard's arms do the same work, the \`else\` arm as written: \`IfStmt.sameWork\`)
      else if (s.kind === 'if' && s.sameWork) c = block(s.else, v)
      // (a condition's \`$apart\` tests read where arrays lie, not their values: \`valueReads\`)
      else if (s.kind === 'if' && assume && [...valueReads(s.pre)].every((n) => !bound.has(n)) && assume(s.pre, s.then))
        c = block(s.then, v)
      // a count that reads anything bound but `v`, or reads `v` other than affinely, counts 0
      if (!readsOnly(c, v) || (v !== undefined && degree(c, v) > 1)) c = f64(0)
      sum = plus(sum, c)
    }
    return sum
  }
  return forCount(loop, undefined)
}
