/**
 * Pass `sink-scalars`: a scalar ancilla allocated at zero before a loop and deallocated after it,
 * which the loop uses only through pairs of updates `x ∓= e … x ±= e` in its body (a `routine`
 * and its `~routine`, one iteration each), is allocated afresh in each iteration instead. Every
 * iteration then starts from the zero it would have found anyway, and nothing reads what the
 * closing update of the last pair restores, so `dead-ancillas` drops that update: one addition
 * per pair and iteration, and a loop-carried dependence through `x`, less. The typical case is the
 * term of a series that a loop computes into an ancilla and uncomputes (paper 001's Bessel
 * function: `anc3 -= h/(k(k+ν))` … `anc3 += h/(k(k+ν))`), and its tangent in a forward-mode
 * gradient, which has the same pairs.
 *
 * Several loops between the allocation and the deallocation may use the ancilla (a `routine`
 * whose loop computes into it, and the `~routine` that runs that loop backwards: the Bessel
 * function's whole series is such a routine): when every statement there that uses it is such a
 * loop, each loop gets an ancilla of its own. A loop leaves the ancilla at `+0` (see Exactness),
 * so the next loop starts from the zero a fresh allocation gives it; and, once the uncompute loop
 * is gone (`dead-ancillas`, with checks off), the loop that remains needs no loop-carried update
 * of it. Any other statement that uses it keeps it where it is.
 *
 * The pairs are found in the loop body's own statements (not in nested blocks): every statement
 * that writes `x` is an update of `x` itself, `+=` or `-=`, by a value that does not read `x` and
 * calls no host function, and they follow one another as P, Q, P, Q, … where Q has the other
 * operator and the same value as the P before it, and nothing between them writes a name that
 * value reads. Reads of `x` anywhere in the body are fine (they see the same values with and
 * without the pass); `x` may not appear in the loop's own condition or range.
 *
 * Exactness: `0 − e + e` is `+0` and `0 + e − e` is `+0` for a finite `e` of a plain number type
 * (for `i32`, always), so `x` is zero at the top of every iteration either way. For an infinite or
 * NaN `e` the original would carry NaN into the next iteration where the pass starts again from
 * zero, so the pass assumes finite values, as `zero-updates` does; the backends run it only with
 * run-time checks off, where the deallocation's check (the only thing that could see the
 * difference) is gone.
 */
import type { Expr, FunctionDef, Stmt } from '../ast.js'
import { readNames } from '../check.js'
import { key } from '../cse.js'
import { callsHost } from './insert-checks.js'
import { sinkIntoLoops, writesOf } from './sink-ancillas.js'

/** The number types whose `0 − e + e` is `0` for every finite `e` (see the module comment). */
const PLAIN = new Set(['f64', 'f32', 'i32'])

/** Whether `e` is a literal zero of a plain number type (`0`, `0.0`, `f64(0)`). */
function zeroLiteral(e: Expr): boolean {
  if (e.kind === 'num') return e.value === 0
  if (e.kind === 'call' && e.args.length === 1 && (e.callee === 'f64' || e.callee === 'f32' || e.callee === 'i32'))
    return zeroLiteral(e.args[0]!)
  return false
}

/**
 * Whether the writes of `x` in `body` (its own statements) are pairs `x ∓= e … x ±= e` as the
 * module comment describes them, at least one.
 */
export function restoredInPairs(body: readonly Stmt[], x: string): boolean {
  let open: { op: '+=' | '-='; value: string; reads: Set<string> } | undefined
  let pairs = 0
  for (const s of body) {
    const writes = writesOf(s)
    if (open && [...writes].some((n) => n !== x && open!.reads.has(n))) return false
    if (!writes.has(x)) continue
    if (s.kind !== 'update' || s.target.kind !== 'var' || s.target.name !== x) return false
    if (s.op !== '+=' && s.op !== '-=') return false
    const reads = readNames(s.value)
    if (reads.has(x) || callsHost(s.value)) return false
    const value = key(s.value)
    if (!open) {
      open = { op: s.op, value, reads }
      continue
    }
    if (s.op === open.op || value !== open.value) return false
    open = undefined
    pairs++
  }
  return open === undefined && pairs > 0
}

/** `body` with the scalar ancillas that a loop restores in pairs allocated inside it. */
export function sinkScalarsBlock(body: Stmt[]): Stmt[] {
  return sinkIntoLoops(
    body,
    (a) => a.type?.kind === 'scalar' && PLAIN.has(a.type.name) && a.value.kind !== 'emptystack' && zeroLiteral(a.value),
    (a, loop) => restoredInPairs(loop.body, a.name),
    // (each loop leaves the ancilla at +0, as it found it: the next loop may take a fresh one)
    true,
  )
}

/** The function with its loop-restored scalar ancillas allocated per iteration (see the module comment). */
export function sinkScalars(f: FunctionDef): FunctionDef {
  return { ...f, body: sinkScalarsBlock(f.body) }
}
