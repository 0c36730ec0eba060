/**
 * The guard of a rewritten counting loop whose new ranges are computed from the old one's first
 * and last values (`pair-series`' groups of lanes, `jam`'s pairs of iterations). Those values are
 * i32 arithmetic that wraps: for `for i in a..b` the last value is `b - 1`, which for b = −2³¹
 * (an empty loop) is 2³¹ − 1, and a group's stop `last − (lanes − 1)` wraps the same way near
 * −2³¹. The rewritten form is right only where the loop runs at least `lanes` iterations and its
 * span is far from 2³¹; elsewhere the loop runs as it was. `jam` marks its guard \`sameWork\` (both
 * arms evaluate the same calls), so that `tabulate-sweeps`, which runs after it, counts the loop
 * as written whichever arm runs: without the mark, a guard whose condition reads an enclosing
 * loop's variable counted nothing, and the unitary adjoint lost its table of cosines.
 */
import type { Expr, ForStmt } from '../ast.js'
import { rewriteExpr } from './rewrite.js'

const num = (value: number): Expr => ({ kind: 'num', value, isFloat: false, type: 'i32' })
const rel = (op: '<' | '<=' | '>' | '>=' | '&&' | '-', left: Expr, right: Expr): Expr => ({
  kind: 'binary',
  op,
  left,
  right,
  type: op === '-' ? 'i32' : 'bool',
})

/** The largest span (last − first) the rewritten loops take: their i32 arithmetic cannot wrap below it. */
export const GUARDED_SPAN = 2 ** 30

/**
 * Whether loop `M` (step ±1, `step`) runs at least `lanes` iterations and at most 2³⁰ + 1: the
 * range is not empty, tested on the bounds as written (no wrapping value computed), and then the
 * span `last − first` (which cannot wrap once the range is not empty and below 2³¹ iterations,
 * and reads as negative where it has more) lies in [lanes − 1, 2³⁰]. `first`, `last`: the loop's
 * first and last values (fresh nodes: none is shared with another statement); `copy` copies a
 * bound.
 */
export function rangeFits(
  M: ForStmt,
  step: 1 | -1,
  first: Expr,
  last: Expr,
  lanes: number,
  copy: (e: Expr) => Expr,
): Expr {
  const up = step > 0
  const nonEmpty = rel(up ? (M.inclusive ? '<=' : '<') : M.inclusive ? '>=' : '>', copy(M.start), copy(M.stop))
  // (the direction in which the variable moves: reversed for `reverse`)
  const dir = M.reverse ? -step : step
  const span = dir > 0 ? rel('-', last, first) : rel('-', first, last)
  const fits = rel('&&', rel('>=', span, num(lanes - 1)), rel('<=', copy(span), num(GUARDED_SPAN)))
  return rel('&&', nonEmpty, fits)
}

/** `e + c` as i32, folded where `e` is a literal (the folded value wraps as i32 values do). */
export function plusI32(e: Expr, c: number): Expr {
  if (c === 0) return e
  if (e.kind === 'num' && !e.isFloat) return num((e.value + c) | 0)
  return { kind: 'binary', op: c > 0 ? '+' : '-', left: e, right: num(Math.abs(c)), type: 'i32' }
}

/** A copy of an expression (no node of the IR is shared between two statements). */
export const copyExpr = (e: Expr): Expr => rewriteExpr(e, (x) => ({ ...x })) as Expr

/** The first value the loop's variable takes (step ±1). */
export const firstValue = (M: ForStmt, step: number): Expr => (M.reverse ? lastForward(M, step) : M.start)
/** The last value the loop's variable takes (step ±1). */
export const lastValue = (M: ForStmt, step: number): Expr => (M.reverse ? M.start : lastForward(M, step))
const lastForward = (M: ForStmt, step: number): Expr => (M.inclusive ? M.stop : plusI32(M.stop, -step))

/**
 * The loop over the iterations a grouped loop leaves (fewer than \`lanes\`), in order: from
 * first + dir·(t − t % lanes) to last, t the trip count (last − first)·dir + 1 (dir the direction
 * in which the variable moves); its body is \`M\`'s. Its start is last + dir where no iteration is
 * left, which wraps at an end of the i32 range: a caller runs it only where iterations are left,
 * or where the range keeps last + dir in range.
 */
export function leftoverLoop(M: ForStmt, step: 1 | -1, lanes: number): ForStmt {
  const dir = M.reverse ? -step : step
  const first = () => copyExpr(firstValue(M, step))
  const last = () => copyExpr(lastValue(M, step))
  const trips = tripCount(M, step)
  const whole = arith('-', trips, arith('%', copyExpr(trips), num(lanes)))
  return {
    ...M,
    reverse: false,
    inclusive: true,
    start: arith(dir > 0 ? '+' : '-', first(), whole),
    stop: last(),
    step: num(dir),
  }
}
/** The trip count (last − first)·dir + 1 of a loop of step ±1 (fresh nodes), as i32. */
export function tripCount(M: ForStmt, step: 1 | -1): Expr {
  const dir = M.reverse ? -step : step
  const first = copyExpr(firstValue(M, step))
  const last = copyExpr(lastValue(M, step))
  return plusI32(dir > 0 ? rel('-', last, first) : rel('-', first, last), 1)
}
const arith = (op: '+' | '-' | '%', left: Expr, right: Expr): Expr => ({ kind: 'binary', op, left, right, type: 'i32' })
