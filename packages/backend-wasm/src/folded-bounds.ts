/**
 * Bounds asserts folded into the loads they guard (with run-time checks on). `insert-checks` of
 * `@tenet/ir` puts an `outOfBounds` assert before a statement for each element its head reads —
 * `$inrange(i, len(a))`, or `!g || $inrange(i, len(a))` where the read happens only when `g`
 * holds (the right operand of `&&` / `||`) — and marks the access `inBounds`, so the load itself
 * goes unguarded. In wasm each such assert is a branch of its own (the `||` one two), evaluating
 * `g` a second time, before the statement evaluates it again; the load's own guard (`i ≥ len`,
 * unsigned, then a trap whose record the wrapper turns into the same `runtime/out-of-bounds` error,
 * see `address` in `codegen.ts`) is one compare and a branch that is never taken.
 *
 * So where the head of the statement that follows (the condition of an `if`, the value of an
 * update or of a scalar allocation, the condition of an assert) loads the very element
 * (same array, same index) exactly once where it stands, the load is emitted guarded, with the
 * assert's own failure site (its location and message), and the assert is left out. The load
 * runs exactly when the assert's `g` holds (it is the operand that `g` guards: `&&` and `||` run
 * their right operand only then, bool `&` / `|` always, as Tenet does), its index has the value the
 * assert read (nothing between them writes: a head only reads), so it fails exactly when the
 * assert would, with the same code, message, location and values, and nothing has been written
 * before it: the statement fails before it writes anything, as it did. The failures keep their
 * order: the asserts left out are the last ones before the statement (those kept run first, as
 * before), each taken over by exactly one load, those loads in the asserts' order (`foldedSuffix`);
 * a load that runs only sometimes for another reason (a reused load made when its flag is clear),
 * inside an expression that may repeat, drop or reorder its operands (`foldsThrough`), or a head
 * that calls a host function (whose failures or effects would come before the loads') takes none.
 *
 * The cpu backend does the same with `a[i] ?? rt.fail(…)` (`foldedBounds` in its `codegen.ts`).
 */
import type { Expr, Stmt } from '@tenet/ir'
import {
  type FoldableBounds,
  callsHost,
  exprChildren,
  foldableBounds,
  inRange,
  key,
  stmtExprs,
} from '@tenet/ir/backend'

export { type FoldableBounds, foldableBounds }

/** Statements whose head may take over the bounds asserts before them. */
export const FOLDING_HEADS: ReadonlySet<Stmt['kind']> = new Set(['update', 'if', 'alloc', 'assert'])

/** Calls whose wasm code evaluates each argument once, in order, where the call is (see `foldsThrough`). */
const FOLD_CALLS: ReadonlySet<string> = new Set([
  'f64',
  'f32',
  'i32',
  'convert',
  'div',
  'len',
  '$inrange',
  '$near',
  '$factor',
])

/**
 * Whether a load inside `e` may take over a bounds assert: the code of `e` evaluates its operands
 * where it stands, each once, in order (not a primitive's own lowering or a math routine, which
 * may repeat, drop or reorder an operand, not `**`, not a field).
 */
export function foldsThrough(e: Expr): boolean {
  if (e.kind === 'call') return FOLD_CALLS.has(e.callee)
  if (e.kind === 'binary') return e.op !== '**'
  return e.kind !== 'field'
}

const not = (arg: Expr): Expr =>
  arg.kind === 'unary' && arg.op === '!' ? arg.arg : { kind: 'unary', op: '!', arg, type: 'bool' }
const and = (left: Expr, right: Expr): Expr => ({ kind: 'binary', op: '&&', left, right, type: 'bool' })

/**
 * The condition (its key) of the bounds assert of each element access of a head expression `e`, as
 * \`insert-checks\` writes it: \`$inrange(i, len(a))\`, or \`!g || $inrange(i, len(a))\` where the
 * access is evaluated only when \`g\` holds (the left operands of the \`&&\` / \`||\` around it). A
 * load takes over only the assert of this very condition: the same element read under the same
 * guard, so it runs exactly when the assert would check.
 */
export function loadGuards(e: Expr, out: Map<Expr, string>, guard?: Expr): Map<Expr, string> {
  switch (e.kind) {
    case 'index': {
      loadGuards(e.index, out, guard)
      if (!e.checkedAs) {
        const ok = inRange(e.index, e.array)
        out.set(e, key(guard ? { kind: 'binary', op: '||', left: not(guard), right: ok, type: 'bool' } : ok))
      }
      return out
    }
    case 'binary': {
      loadGuards(e.left, out, guard)
      if (e.op !== '&&' && e.op !== '||') return loadGuards(e.right, out, guard)
      const when = e.op === '&&' ? e.left : not(e.left)
      return loadGuards(e.right, out, guard ? and(guard, when) : when)
    }
    default:
      for (const c of exprChildren(e)) loadGuards(c, out, guard)
      return out
  }
}

/** Whether the head of a statement calls a host function (whose failures or effects would come before the folded loads'). */
export function headCallsHost(s: Stmt): boolean {
  if (s.kind === 'assert') return callsHost(s.cond) || s.args.some((a) => typeof a !== 'string' && callsHost(a))
  return stmtExprs(s).some(callsHost)
}

/**
 * How many of the `pending` asserts (in their order before the statement) are kept: the first
 * `k` returned; the rest are left out, each taken over by exactly one load of the head. `order`
 * lists the asserts the head's loads took over, by position in `pending`, in the order the loads
 * were emitted (which is the order they run in: the head is straight-line code and `&&` / `||`
 * blocks). The asserts left out are the longest suffix whose asserts were each taken once, by
 * loads in the suffix's own order.
 */
export function foldedSuffix(pending: number, order: readonly number[]): number {
  const count = new Map<number, number>()
  for (const i of order) count.set(i, (count.get(i) ?? 0) + 1)
  let first = pending
  while (first > 0 && count.get(first - 1) === 1) {
    if (first < pending && order.indexOf(first - 1) > order.indexOf(first)) break
    first--
  }
  return first
}
