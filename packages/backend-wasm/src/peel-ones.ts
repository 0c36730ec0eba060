/**
 * Peeled first iterations of counting loops: a loop `for i in a..n` (or `a..=n`) from a literal `a` ≥ 1
 * whose body multiplies or divides by `i` (`x * i`, `x / i`, `div(x, i)`, `x *= f64(i)`, …) runs
 * its first iteration on its own, before the loop, with `i` the constant `a`, and the loop from
 * `a + 1` on (`loopOf` in `codegen.ts` emits the copy).
 *
 * Why: from 1, `x * 1` and `x / 1` are `x`, which V8's wasm compiler folds once it sees the
 * constant (an integer division with its guards, a conversion and a multiplication drop out), and
 * V8 does not peel such a loop itself, as it does the same loop in JavaScript. A product or a
 * quotient over a..n is a chain: each iteration waits for the one before. The factorial by the
 * approximate multiplier (paper 001's `ifactorial`: `anc += out * i; out -= div(anc, i)`) took two
 * integer divisions for 2! and one with its first iteration peeled, at the head of the Bessel
 * series, whose terms wait for it (J₂(1) from a wasm loop: 23.0 → 21.7 ns per call, hand-edited
 * module, three runs). Pass `idle-first` of `@tenet/ir` now starts that loop at 2 (its first
 * iteration changes nothing); peeled there, a short product (2! of the Bessel series) never
 * enters the loop (J₂(1)'s objective on wasm, in process with black-boxed inputs: 24.6–25.0 →
 * 23.5–24.0 ns). Falling factorials, binomial coefficients, `k`-th powers by
 * repeated multiplication and the series whose terms divide by their index are such loops.
 *
 * Exactness: the copy is the loop's own body, run at the same place with the same value of `i`;
 * the loop after it starts where the copy left off (at a + 1 when the copy ran, not at all
 * otherwise), so every statement runs with the same values in the same order, checks included.
 * The start is below 2³¹ − 1, so the copy's increment does not wrap. Loops from 0 (or below) are
 * not peeled: those are a map's index loops (`pk <- p * 5`), where a copy only doubles the code.
 *
 * Size: only loops without loops inside, of at most {@link PEEL_MAX_STATEMENTS} statements, are
 * copied (the copy doubles the loop's code).
 */
import type { Expr, Stmt } from '@tenet/ir'
import { exprChildren, stmtExprs } from '@tenet/ir/backend'

/** At most this many statements (nested ones included) in a loop body that is peeled. */
export const PEEL_MAX_STATEMENTS = 12

/** Whether `e` is the loop variable `v` or its conversion to a float (`f64(i)`, `f32(i)`). */
function isVariable(e: Expr, v: string): boolean {
  if (e.kind === 'var') return e.name === v
  return (
    e.kind === 'call' && (e.callee === 'f64' || e.callee === 'f32') && e.args.length === 1 && isVariable(e.args[0]!, v)
  )
}

/** Whether `e` multiplies or divides by `v` somewhere (`x * i`, `i * x`, `x / i`, `div(x, i)`, `f64(i) * y`; an update `x *= i` is checked by the caller). */
function scalesBy(e: Expr, v: string): boolean {
  if (e.kind === 'binary') {
    if ((e.op === '*' && (isVariable(e.left, v) || isVariable(e.right, v))) || (e.op === '/' && isVariable(e.right, v)))
      return true
  }
  if (e.kind === 'call' && e.callee === 'div' && e.args.length === 2 && isVariable(e.args[1]!, v)) return true
  return exprChildren(e).some((c) => scalesBy(c, v))
}

/**
 * Whether the code generator runs the first iteration of `s` on its own (see the module comment):
 * an upward loop (not run in reverse) from a literal in 1 … 2³¹ − 2 by 1, with no loop inside, at most
 * {@link PEEL_MAX_STATEMENTS} statements, some of which multiply or divide by the loop variable.
 */
export function peelsFirstIteration(s: Extract<Stmt, { kind: 'for' }>): boolean {
  if (s.reverse || s.start.kind !== 'num' || s.start.isFloat) return false
  const a = s.start.value
  if (!Number.isInteger(a) || a < 1 || a >= 2 ** 31 - 1) return false
  if (s.step && !(s.step.kind === 'num' && s.step.value === 1)) return false
  let count = 0
  let scales = false
  const walk = (body: readonly Stmt[]): boolean => {
    for (const st of body) {
      if (++count > PEEL_MAX_STATEMENTS) return false
      if (st.kind === 'for' || st.kind === 'while') return false
      if (st.kind === 'update' && (st.op === '*=' || st.op === '/=') && isVariable(st.value, s.variable)) scales = true
      for (const e of stmtExprs(st)) if (!scales && scalesBy(e as Expr, s.variable)) scales = true
      for (const inner of nested(st)) if (!walk(inner)) return false
    }
    return true
  }
  return walk(s.body) && scales
}

/** The statement lists nested in `s` (an \`if\`'s arms, the body of a block statement). */
function nested(s: Stmt): Stmt[][] {
  if (s.kind === 'if') return [s.then, s.else]
  const body = (s as { body?: unknown }).body
  return Array.isArray(body) ? [body as Stmt[]] : []
}
