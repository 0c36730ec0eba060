/**
 * Eager operands of `&&` and `||`: the right operand of a logical operator runs only when the left
 * one does not decide the result, which the scalar code emits as an `if` block. When the right
 * operand is a few instructions that cannot trap or call out (comparisons and float arithmetic of
 * locals and constants, `abs`, the logical operators again), computing it always and combining the
 * two with `i32.and` / `i32.or` gives the same value without the branch.
 *
 * Why: a loop condition such as `abs(s) > 1e-8 && abs(anc) < 1e-8` (paper 001's series) reads a
 * value the loop body has just computed with a division. Behind a branch, V8's scheduler moved
 * that division into the branch's arm that reads it, and computed it a second time on the path
 * into the next iteration: one division more per iteration on the chain that bounds the loop.
 * Without the branch the value has one use before the next iteration and is computed once.
 *
 * Exactness: the same instructions on the same values; only when they run changes, and none of
 * them has an effect or can trap (float division by zero is an infinity or NaN, not a trap;
 * integer division and remainder, which can trap, and element loads, which are guarded, keep the
 * branch).
 */
import type { Expr } from '@tenet/ir'

/** At most this many nodes in an eager operand (a longer one is worth its branch). */
export const EAGER_MAX_NODES = 8

/** The value types whose arithmetic is one wasm instruction that cannot trap. */
const PLAIN = new Set(['f64', 'f32', 'i32', 'bool'])
/** Binary operators that cannot trap on those types (`/` and `%` only on floats: see `eager`). */
const SAFE = new Set(['+', '-', '*', '<', '<=', '>', '>=', '==', '!=', '&&', '||', '&', '|', '^'])

/**
 * Whether `e` may be evaluated eagerly as the right operand of `&&` / `||` (see the module
 * comment). `native(callee)`: the call is lowered to one wasm instruction that cannot trap
 * (`abs`, `neg`, `min`, `max`, `sqrt`).
 */
export function eagerOperand(e: Expr, native: (call: Extract<Expr, { kind: 'call' }>) => boolean): boolean {
  let nodes = 0
  const ok = (x: Expr): boolean => {
    if (++nodes > EAGER_MAX_NODES) return false
    const t = (x as { type?: unknown }).type
    if (typeof t !== 'string' || !PLAIN.has(t)) return false
    switch (x.kind) {
      case 'num':
      case 'bool':
        return true
      case 'var':
        return true
      case 'unary':
        return (x.op === '!' || x.op === '-') && ok(x.arg)
      case 'binary': {
        const float = (x.left as { type?: string }).type === 'f64' || (x.left as { type?: string }).type === 'f32'
        const safe = SAFE.has(x.op) || (x.op === '/' && float)
        return safe && ok(x.left) && ok(x.right)
      }
      case 'call':
        return native(x) && x.args.every(ok)
      default:
        return false
    }
  }
  return ok(e)
}
