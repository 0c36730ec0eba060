/**
 * Pass `fuse-loops` (loop fusion): a `for` loop that runs over the same range as an earlier loop
 * of its block, in the same direction, joins that loop — its body runs after the earlier body in
 * each iteration — where no dependence forbids it. The adjoint of a program that first fills an
 * array per element and then reads it per element (a gradient per element, then that gradient
 * spread further) has such pairs: one pass over the elements instead of two keeps each element
 * in a register between the two bodies and saves a loop's overhead.
 *
 * Legal when, with L1 the earlier loop, L2 the later one and S the statements between them:
 * - L2 moves before S: it writes nothing that S reads or writes, and reads nothing S writes;
 * - L2's range reads nothing that L1 or S writes (it is evaluated once, before L1's first
 *   iteration, where it was evaluated after S);
 * - iteration i of L2 may run before iteration j > i (in iteration order) of L1: every name that
 *   both bodies touch and one of them writes is an array that both touch only at the loop's own
 *   index (`a[i]`), so the two bodies meet only within one iteration, where the order stays
 *   (a scalar that both touch, one writing it, refuses: a sum would be taken in another order);
 * - neither body calls a function or a host function (their effects are not visible here), nor
 *   binds a name that the other binds or that is the other's loop variable; where the variables
 *   differ, L2's body has no bijection call that reads a table (its reads are not renamed);
 * - each loop visits each index at most once (no step, or a nonzero literal one) and is a plain
 *   index loop (not `for x in a`).
 * Every statement then computes the same values from the same operands, in an order that the
 * dependence test shows to be equivalent: the result is exact. The backends run it with run-time
 * checks off only, since a check that fails would fail at another point of the run.
 */
import type { Expr, FunctionDef, ForStmt, Stmt } from '../ast.js'
import { readNames, walk } from '../check.js'
import { key } from '../cse.js'
import { stmtExprs } from '../stmt-exprs.js'
import { callsHost } from './insert-checks.js'
import { mapInnerBlocks, rewriteBlock } from './rewrite.js'
import { writesOf } from './sink-ancillas.js'
import { usedOnlyAtIndex } from './contract-arrays.js'

/** Every name that a statement reads or writes, at any depth (lengths included). */
function touched(s: Stmt): Set<string> {
  const out = writesOf(s)
  walk([s], (t) => {
    for (const e of stmtExprs(t)) readNames(e, out)
    if (t.kind === 'update' || t.kind === 'callstmt')
      for (const [a, b] of t.distinct ?? []) {
        readNames(a, out)
        readNames(b, out)
      }
  })
  return out
}

/** The names that a block binds (ancillas, loop variables), at any depth. */
function bound(body: Stmt[]): Set<string> {
  const out = new Set<string>()
  walk(body, (s) => {
    if (s.kind === 'alloc' || s.kind === 'dealloc') out.add(s.name)
    if (s.kind === 'for') out.add(s.variable)
  })
  return out
}

/** Whether a block calls a function or a host function (effects the name sets do not show). */
function calls(body: Stmt[]): boolean {
  let yes = false
  walk(body, (s) => {
    if (s.kind === 'callstmt' && s.target !== 'bijection') yes = true
    for (const e of stmtExprs(s)) if (callsHost(e as Expr)) yes = true
  })
  return yes
}

/**
 * Whether a block has a bijection call that reads values from a table (`CallStmt.tabulated`):
 * the renaming of a loop variable (`rewriteBlock`) does not reach those reads.
 */
function tabulates(body: Stmt[]): boolean {
  let yes = false
  walk(body, (s) => {
    if (s.kind === 'callstmt' && s.tabulated?.length) yes = true
  })
  return yes
}

/** Whether a `for` loop visits each index at most once and is a plain index loop. */
const plainLoop = (s: ForStmt): boolean =>
  !s.each &&
  (s.step === null ||
    (s.step.kind === 'num' && s.step.value !== 0) ||
    (s.step.kind === 'unary' && s.step.arg.kind === 'num' && s.step.arg.value !== 0))

/** Whether two loops iterate the same values in the same order (the same range, written alike). */
const sameRange = (a: ForStmt, b: ForStmt): boolean =>
  a.inclusive === b.inclusive &&
  (a.reverse ?? false) === (b.reverse ?? false) &&
  key(a.start) === key(b.start) &&
  key(a.stop) === key(b.stop) &&
  (a.step === null ? b.step === null : b.step !== null && key(a.step) === key(b.step))

/** The range expressions of a loop. */
const rangeOf = (s: ForStmt): Expr[] => (s.step ? [s.start, s.stop, s.step] : [s.start, s.stop])

/** L2 (`b`, after the statements `between`) joined to L1 (`a`), or undefined where that is not legal. */
function fuse(a: ForStmt, between: Stmt[], b: ForStmt): ForStmt | undefined {
  if (!plainLoop(a) || !plainLoop(b) || !sameRange(a, b)) return undefined
  if (calls(a.body) || calls(b.body)) return undefined
  const wb = writesOf(b)
  const tb = touched(b)
  // L2 moves before the statements between
  for (const s of between) {
    const ws = writesOf(s)
    const ts = touched(s)
    if ([...wb].some((n) => ts.has(n)) || [...ws].some((n) => tb.has(n))) return undefined
  }
  // its range, evaluated before L1 now
  const range = new Set<string>()
  for (const e of rangeOf(b)) readNames(e, range)
  const wa = writesOf(a)
  if ([...range].some((n) => wa.has(n) || between.some((s) => writesOf(s).has(n)))) return undefined
  // nothing bound twice, no capture of a loop variable
  const ba = bound(a.body),
    bb = bound(b.body)
  if ([...bb].some((n) => ba.has(n)) || ba.has(b.variable) || bb.has(a.variable) || bb.has(b.variable)) return undefined
  if (b.variable !== a.variable && (touched(b).has(a.variable) || tabulates(b.body))) return undefined
  if (ba.has(a.variable)) return undefined
  // the bodies meet only at the loop's own index
  const ta = touched(a)
  for (const n of new Set([...ta].filter((n) => tb.has(n)))) {
    if (n === a.variable || n === b.variable) continue
    if (!wa.has(n) && !wb.has(n)) continue
    if (!usedOnlyAtIndex(a.body, n, a.variable, true) || !usedOnlyAtIndex(b.body, n, b.variable, true)) return undefined
  }
  const renamed =
    b.variable === a.variable
      ? b.body
      : rewriteBlock(b.body, (e) => (e.kind === 'var' && e.name === b.variable ? { ...e, name: a.variable } : e))
  return { ...a, body: [...a.body, ...renamed] }
}

/** `body` with its fusable loops fused (nested blocks first). */
export function fuseLoopsBlock(body: Stmt[]): Stmt[] {
  const out = mapInnerBlocks(body, fuseLoopsBlock)
  for (let j = 0; j < out.length; j++) {
    const b = out[j]!
    if (b.kind !== 'for') continue
    // the nearest earlier loop it can join
    for (let i = j - 1; i >= 0; i--) {
      const a = out[i]!
      if (a.kind !== 'for') continue
      const fused = fuse(a, out.slice(i + 1, j), b)
      if (!fused) continue
      out.splice(j, 1)
      out[i] = fused
      j--
      break
    }
  }
  return out
}

/** The function with its fusable loops fused (see the module comment). */
export function fuseLoops(f: FunctionDef): FunctionDef {
  return { ...f, body: fuseLoopsBlock(f.body) }
}
