/**
 * Dead stores of loop-carried elements (pass `carried-stores`): an analysis for the backends'
 * code generators, on top of {@link carriedElements}.
 *
 * A loop-carried element is kept in a local that the next iteration reads (see
 * `carried-elements.ts`), but its store stays, because code after the loop may read the array.
 * For a history array that is only a recurrence's scratch — Horner's
 * `acc <- zeros(n); acc[n - 1] += c[n - 1]; for k in n - 2..=0 by -1 { acc[k] += acc[k + 1] * x + c[k] }`,
 * then `e += acc[0] - y` and `acc -> zeros(n)` with its uncompute dropped (checks off) — no
 * element the loop stores is ever loaded again except the one the last iteration wrote: the
 * stores are dead, and the read after the loop is the carried local. The plain loop
 * `acc = acc * x + c[k]` is what is left.
 *
 * The analysis finds, in a block (its `@unchecked` blocks opened: they run once), the counting
 * loops whose carried element of an array `A` may be kept in its local only, and for each the
 * key (see {@link lastKey}) of the element the last iteration writes. It holds when:
 * - `A` is an f64 array allocated (`zeros`) by a statement of the block before the loop: fresh
 *   memory that no other name reaches;
 * - in the loop's body `A` is written by the carried update only (a first write of a fresh
 *   element, `UpdateStmt.init`, `+=` or `−=`), and read only at the carried element (every such
 *   read takes the local) or through `len(A)`, not inside a nested loop (whose promotions could
 *   load the element before it) and not passed whole;
 * - after the loop, up to the deallocation `A -> …` in the same block (which must be there),
 *   `A` is only read, at the element the last iteration wrote — `α·v_last + c`, with
 *   `v_last` the loop's last value (its start for a `reverse` loop, else its end, less one step
 *   where the end is exclusive), equal to the read's index as integer polynomials (`len(a)`
 *   an atom), so equal modulo 2³² as the generated i32 code computes both — or through `len(A)`,
 *   outside loops, and nothing there nor in the loop's body writes a name those indices or the
 *   loop's range read (nor calls a function with a host effect);
 * - no assert reads `A` whole (with checks on the deallocation's `$zeros(A)` does: the pass
 *   never applies there).
 * A loop that runs no iteration stores nothing, so memory is right: the generator reads the
 * element after the loop as `ran ? local : A[i]`. A store is dropped only where the generated
 * value does not read the element (the first write `0 + e`); any store kept is harmless.
 */
import type { Expr, ForStmt, IndexExpr, Stmt } from './ast.js'
import { readNames, walk } from './check.js'
import { carriedElements } from './carried-elements.js'
import { exprChildren, stmtExprs } from './stmt-exprs.js'
import { writtenNames } from './passes/hoist-invariants.js'
import { addPoly, mulPoly, polynomial, type Poly } from './passes/interchange.js'

/** The integer polynomial of an i32 expression, `len(a)` as the atom `len(a)`, or undefined. */
function lenPolynomial(e: Expr): Poly | undefined {
  return polynomial(e, (x) =>
    x.kind === 'call' && x.callee === 'len' && x.args.length === 1 && x.args[0]?.kind === 'var'
      ? new Map([[`len(${x.args[0].name})`, 1]])
      : undefined,
  )
}

/** A canonical string of a polynomial whose coefficients are all safe integers, else undefined. */
function exactKey(p: Poly): string | undefined {
  if ([...p.values()].some((c) => !Number.isSafeInteger(c))) return undefined
  return [...p]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([m, c]) => `${c}${m ? `*${m}` : ''}`)
    .join('+')
}

/**
 * The key of an i32 index for {@link deadCarriedStores}: equal keys, equal integer polynomials
 * (`len(a)` an atom), or undefined where the index is not such a polynomial.
 */
export function lastKey(e: Expr): string | undefined {
  const p = lenPolynomial(e)
  return p && exactKey(p)
}

/** The statements of a block that run once each time the block runs: its own, and those of its `@unchecked` blocks. */
function unconditional(body: Stmt[]): Stmt[] {
  return body.flatMap((s) => (s.kind === 'unchecked' ? unconditional(s.body) : [s]))
}

/**
 * Whether every mention of `array` in `e` is `len(array)` or an element whose index satisfies
 * `ok` (and whose index itself mentions `array` nowhere).
 */
function onlyElements(e: Expr, array: string, ok: (index: Expr) => boolean): boolean {
  if (e.kind === 'var') return e.name !== array
  if (e.kind === 'call' && e.callee === 'len' && e.args[0]?.kind === 'var') return true
  if (e.kind === 'index') return (e.array.name !== array || ok(e.index)) && onlyElements(e.index, array, ok)
  if ((e as { kind: string }).kind === 'neg') return onlyElements((e as unknown as { target: Expr }).target, array, ok)
  return exprChildren(e).every((c) => onlyElements(c, array, ok))
}

/** The expressions a statement reads, its asserts' condition and values included. */
function readExprs(s: Stmt): Expr[] {
  const out = stmtExprs(s) as Expr[]
  if (s.kind === 'assert') out.push(s.cond, ...(s.args.filter((a) => typeof a !== 'string') as Expr[]))
  return out
}

/**
 * The loops of `body` (a block, its `@unchecked` blocks opened) whose carried element of an array
 * may live in its local only (see the module comment): by loop, by array, the key
 * ({@link lastKey}) of the element the loop's last iteration writes, which code after the loop
 * reads (as `ran ? local : A[i]`). `effectful` and `params` as for {@link carriedElements}.
 */
export function deadCarriedStores(
  body: Stmt[],
  effectful: ReadonlySet<string> = new Set(),
  params: ReadonlySet<string> = new Set(),
): Map<ForStmt, Map<string, string>> {
  const out = new Map<ForStmt, Map<string, string>>()
  const flat = unconditional(body)
  const fresh = new Set<string>()
  for (let at = 0; at < flat.length; at++) {
    const s = flat[at]!
    if (s.kind === 'alloc' && s.value.kind === 'call' && s.value.callee === 'zeros') {
      if (s.type?.kind === 'array' && (s.type as { elem?: string }).elem === 'f64') fresh.add(s.name)
      continue
    }
    if (s.kind === 'dealloc') {
      fresh.delete(s.name)
      continue
    }
    if (s.kind !== 'for' || !fresh.size) continue
    const found = new Map<string, string>()
    for (const el of carriedElements(s, effectful, params)) {
      if (!fresh.has(el.array) || found.has(el.array)) continue
      const last = lastElement(s, el.array, el.write, el.read)
      if (last !== undefined && deadAfter(flat, at, s, el.array, last, effectful)) found.set(el.array, last)
    }
    if (found.size) out.set(s, found)
  }
  return out
}

/**
 * The key of the element loop `s` writes in its last iteration, where the body writes `array`
 * once (the carried first write at index key `write`) and reads it only at `read` or its length,
 * outside nested loops; else undefined.
 */
function lastElement(s: ForStmt, array: string, write: string, read: string): string | undefined {
  const v = s.variable
  let target: IndexExpr | undefined
  let writes = 0
  let ok = true
  const top = unconditional(s.body)
  const isRead = (i: Expr) => indexKeyOf(i) === read
  walk(s.body, (st) => {
    if (!ok) return
    if (st.kind === 'update') {
      const t = st.target
      if (t.kind === 'index' && t.array.name === array) {
        writes++
        target = t
        if (!st.init || (st.op !== '+=' && st.op !== '-=') || !top.includes(st)) ok = false
      } else if (writtenNames([st])?.has(array) !== false) ok = false
      // (the target's index is read; the value reads the array at the carried element only)
      const reads = t.kind === 'index' ? [t.index, st.value] : [st.value]
      if (!reads.every((e) => onlyElements(e, array, isRead))) ok = false
      return
    }
    if (
      st.kind === 'callstmt' ||
      st.kind === 'push' ||
      st.kind === 'pop' ||
      st.kind === 'alloc' ||
      st.kind === 'dealloc'
    ) {
      if (mentionsStmt(st, array)) ok = false
      return
    }
    // (nested loops: their promotions may load an element before the loop; not followed)
    if ((st.kind === 'for' || st.kind === 'while') && mentions(st.body, array)) ok = false
    if (!readExprs(st).every((e) => onlyElements(e, array, isRead))) ok = false
  })
  if (!ok || writes !== 1 || !target || indexKeyOf(target.index) !== write) return undefined
  const p = lenPolynomial(target.index)
  const alpha = p?.get(v)
  if (!p || !alpha) return undefined
  // the loop's last value
  const step = s.step === null ? 1 : s.step.kind === 'num' ? s.step.value : 0
  let vLast: Poly | undefined
  if (s.reverse) vLast = lenPolynomial(s.start)
  else {
    const stop = lenPolynomial(s.stop)
    vLast = stop && (s.inclusive ? stop : addPoly(stop, new Map([['', 1]]), -step))
  }
  if (!vLast) return undefined
  const rest = new Map(p)
  rest.delete(v)
  if ([...rest.keys()].some((m) => m.split('*').includes(v))) return undefined
  return exactKey(addPoly(rest, mulPoly(vLast, new Map([['', alpha]]))))
}

/** The key (see {@link lastKey}) of the carried-elements kind: without atoms. */
function indexKeyOf(e: Expr): string | undefined {
  const p = polynomial(e)
  if (!p) return undefined
  return [...p]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([m, c]) => `${c}${m ? `*${m}` : ''}`)
    .join('+')
}

/** Whether any statement of `body`, at any depth, mentions `array`. */
function mentions(body: Stmt[], array: string): boolean {
  let found = false
  walk(body, (st) => {
    if (!found && mentionsStmt(st, array)) found = true
  })
  return found
}

/** Whether statement `st` itself (not its nested statements) mentions `array`. */
function mentionsStmt(st: Stmt, array: string): boolean {
  if ((st.kind === 'alloc' || st.kind === 'dealloc') && st.name === array) return true
  if (st.kind === 'update' && st.target.kind === 'index' && st.target.array.name === array) return true
  return readExprs(st).some((e) => readNames(e as Expr).has(array) || !onlyElements(e as Expr, array, () => false))
}

/**
 * Whether, after loop `s` (statement `at` of the opened block `flat`) and up to the deallocation
 * of `array` in the same block, `array` is only read at the element of key `last` (or its
 * length), outside loops, with nothing there or in the loop writing a name of those indices or
 * of the loop's range.
 */
function deadAfter(
  flat: Stmt[],
  at: number,
  s: ForStmt,
  array: string,
  last: string,
  effectful: ReadonlySet<string>,
): boolean {
  const end = flat.findIndex((x, i) => i > at && x.kind === 'dealloc' && x.name === array)
  if (end < 0) return false
  const between = flat.slice(at + 1, end)
  const names = new Set<string>()
  for (const e of [s.start, s.stop]) readNames(e, names)
  let ok = true
  walk(between, (st) => {
    if (!ok) return
    if (st.kind === 'alloc' && st.name === array) ok = false
    if ((st.kind === 'for' || st.kind === 'while') && mentions(st.body, array)) ok = false
    if (st.kind === 'update' && st.target.kind === 'index' && st.target.array.name === array) ok = false
    if (st.kind === 'callstmt' || st.kind === 'push' || st.kind === 'pop') {
      if (mentionsStmt(st, array)) ok = false
      return
    }
    for (const e of readExprs(st))
      if (
        !onlyElements(e as Expr, array, (i) => {
          if (lastKey(i) !== last) return false
          readNames(i, names)
          return true
        })
      )
        ok = false
  })
  if (!ok) return false
  const written = writtenNames(between, effectful)
  const inLoop = writtenNames(s.body, effectful)
  if (!written || !inLoop || written.has(array)) return false
  return ![...names].some((n) => written.has(n) || inLoop.has(n))
}
