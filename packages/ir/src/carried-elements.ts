/**
 * Loop-carried array elements (scalar replacement, Carr–Kennedy): an analysis for the backends'
 * code generators.
 *
 * In a counting loop `for v in a..b` (step ±1, either direction), a statement of the body that
 * writes `A[α·v + c]` in every iteration and a read of `A[α·v + c − α·d]` (d = +1 for a loop
 * that counts up, −1 for one that counts down) meet across iterations: the read of iteration k
 * sees the element that iteration k − 1 wrote. A Horner recurrence
 * `for k in n - 2..=0 by -1 { acc[k] += acc[k + 1] * x + c[k] }`, a prefix sum
 * `for i in 1..n { s[i] += s[i - 1] + x[i] }`, a running maximum, an integrator's history
 * `xs[2t + 2] += xs[2t] + …` are such loops. Through memory each iteration waits on a store and
 * then a load of the same address; the code generator keeps the value in a local instead: it
 * loads the element once before the loop (the first iteration's read), reads the local in the
 * body, and sets it, at the end of each iteration, to the value the write stored (the store
 * stays: code after the loop reads the array).
 *
 * What makes it exact: every write of `A` in the body is an unconditional update of the body (at
 * its top, or in an `@unchecked` block there: both run once per iteration) whose index is the
 * loop variable times α ≠ 0 plus names the loop never writes, and every other such write is at a
 * constant distance c from the carried one, with c ≠ 0 (it never stores the carried element in the
 * same iteration) and c ≠ α·d (it never stores the element the next iteration reads), both below
 * 2³¹ in magnitude (i32 indices wrap: a distance of 2³² is the same element); so between
 * the write in iteration k − 1 and the end of iteration k, nothing changes the element that
 * iteration k reads. (Indices merely different as polynomials are not enough: `y[2·i]` and
 * `y[i + 1]` meet at i = 1.) `A` is read only through its
 * elements and its length (never passed whole, never an argument of a call statement, no host
 * effect in the body), so every read of the element is an expression the generator emits, and
 * each gets the local. An array parameter is carried only where the body writes no other array
 * parameter: the unchecked `.core` entry may be given one memory for two of them (the checked
 * entries refuse that, `call/overlap`; a call statement cannot pass one array twice).
 *
 * Only f64 arrays: a typed array's element and the JS number (or wasm f64) that was stored are
 * the same value. With run-time checks on the bounds asserts of the replaced reads stay (they
 * are statements of their own, see `insert-checks`) and fire where they did: the generator only
 * stops loading the element, and the load before the loop never fails (an index out of range
 * reads `undefined`, and the assert of the first iteration fails before the value is used).
 */
import type { Expr, ForStmt, IndexExpr, Stmt } from './ast.js'
import { readNames, rootName, walk } from './check.js'
import { exprChildren, stmtExprs } from './stmt-exprs.js'
import { writtenNames } from './passes/hoist-invariants.js'
import { addPoly, polynomial, type Poly } from './passes/interchange.js'

/** One carried element of a loop: the reads of iteration k that see what iteration k − 1 wrote. */
export interface CarriedElement {
  /** The array. */
  array: string
  /** The key (see {@link polyKey}) of the index the body writes. */
  write: string
  /** The key of the index the body reads (the write's, one iteration earlier). */
  read: string
  /** One read of the element in the body (its index gives the load before the loop). */
  sample: IndexExpr
  /**
   * Whether the local may hold the write's value before a first write's normalisation (see
   * {@link signFreeReads}): the write is `A[…] += e` and every read of the element in the body
   * is in `e`, under `+`, `−` (binary and unary) and `×` only.
   */
  signFree: boolean
}

/** A canonical string of a polynomial (its monomials sorted): equal keys, equal polynomials. */
export function polyKey(p: Poly): string {
  return [...p]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([m, c]) => `${c}${m ? `*${m}` : ''}`)
    .join('+')
}

/** The key of an i32 index expression's polynomial, or undefined when it is not a polynomial. */
export function indexKey(e: Expr): string | undefined {
  const p = polynomial(e)
  return p && polyKey(p)
}

/** The statements of a block that run once each time the block runs: its own, and those of its `@unchecked` blocks. */
function unconditional(body: Stmt[]): Stmt[] {
  return body.flatMap((s) => (s.kind === 'unchecked' ? unconditional(s.body) : [s]))
}

/**
 * The carried elements of loop `s` (see the module comment): none unless its step is the literal
 * 1 or −1. `effectful`: the functions with a host effect (a call of one may write anything).
 * `params`: the names of the function's array parameters, which the unchecked entry (`.core`) may
 * be given as views of one memory: an array parameter is not carried where the body writes
 * another one (the write could store the carried element under another name).
 */
export function carriedElements(
  s: ForStmt,
  effectful: ReadonlySet<string> = new Set(),
  params: ReadonlySet<string> = new Set(),
): CarriedElement[] {
  const step = s.step === null ? 1 : s.step.kind === 'num' ? s.step.value : undefined
  if (step !== 1 && step !== -1) return []
  const d = s.reverse ? -step : step
  const v = s.variable
  const written = writtenNames(s.body, effectful)
  if (!written || written.has(v)) return []
  // the candidate writes: unconditional element updates of f64 arrays at α·v + (invariant)
  const writes = new Map<string, Array<{ key: string; poly: Poly; alpha: number }>>()
  const top = new Set<Stmt>()
  for (const st of unconditional(s.body)) {
    if (st.kind !== 'update' || st.target.kind !== 'index' || st.target.type !== 'f64') continue
    const t = st.target
    if ([...readNames(t.index)].some((n) => n !== v && written.has(n))) continue
    const p = polynomial(t.index)
    if (!p) continue
    const alpha = p.get(v)
    if (!alpha || [...p.keys()].some((m) => m !== v && m.split('*').includes(v))) continue
    const list = writes.get(t.array.name) ?? []
    list.push({ key: polyKey(p), poly: p, alpha })
    writes.set(t.array.name, list)
    top.add(st)
  }
  if (!writes.size) return []
  // arrays written elsewhere in the body, passed whole or to a call: not carried
  const bad = new Set<string>()
  walk(s.body, (st) => {
    // (a block's own statements are visited on their own)
    if (!top.has(st) && !BLOCKS.has(st.kind)) for (const n of writtenNames([st], effectful) ?? writes.keys()) bad.add(n)
    if (st.kind === 'callstmt') for (const a of st.args) bad.add(rootName(a as never) ?? '')
    if (st.kind === 'push' || st.kind === 'pop') bad.add(rootName(st.value as never) ?? '')
    for (const e of stmtExprs(st)) wholeArrays(e as Expr, bad)
  })
  const out: CarriedElement[] = []
  for (const [array, list] of writes) {
    if (bad.has(array)) continue
    if (params.has(array) && [...written].some((n) => n !== array && params.has(n))) continue
    for (const { key: k, poly: p, alpha } of list) {
      // every other write of the array is at a constant distance c ≠ 0 from this one, and c ≠ α·d:
      // it never writes the element this write stores (the same iteration) nor the one the next
      // iteration reads (the write and the read there); a second write of the element disqualifies it
      const apart = list.every((q) => {
        if (q.poly === p) return true
        const diff = addPoly(p, q.poly, -1)
        if ([...diff.keys()].some((m) => m !== '')) return false
        const c = diff.get('') ?? 0
        // (i32 indices wrap: distances that are nonzero as integers but as large as 2³² may still
        // meet, so both must be below 2³¹ in magnitude)
        return c !== 0 && c !== alpha * d && Math.abs(c) < 2 ** 31 && Math.abs(c - alpha * d) < 2 ** 31
      })
      if (!apart) continue
      const r = new Map(p)
      const c = (r.get('') ?? 0) - alpha * d
      if (c === 0) r.delete('')
      else r.set('', c)
      const read = polyKey(r)
      let sample: IndexExpr | undefined
      walk(s.body, (st) => {
        for (const e of stmtExprs(st)) sample ??= findRead(e as Expr, array, read)
      })
      if (sample) out.push({ array, write: k, read, sample, signFree: signFreeReads(s.body, array, k, read) })
    }
  }
  return out
}

/** The statements that only hold blocks of statements (and a loop variable, an `if`'s condition). */
const BLOCKS = new Set<Stmt['kind']>(['if', 'while', 'for', 'unchecked', 'routine', 'invblock'])

/** Adds the arrays that `e` mentions other than through an element or `len` (passed whole). */
function wholeArrays(e: Expr, out: Set<string>): void {
  if (e.kind === 'var') {
    out.add(e.name)
    return
  }
  if (e.kind === 'call' && e.callee === 'len' && e.args[0]?.kind === 'var') return
  if (e.kind === 'index') {
    wholeArrays(e.index, out)
    return
  }
  if ((e as { kind: string }).kind === 'neg') {
    wholeArrays((e as unknown as { target: Expr }).target, out)
    return
  }
  for (const c of exprChildren(e)) wholeArrays(c, out)
}

/** The first read of `array` at the index of key `read` in `e`. */
function findRead(e: Expr, array: string, read: string): IndexExpr | undefined {
  if (e.kind === 'index' && e.array.name === array && indexKey(e.index) === read) return e
  for (const c of exprChildren(e)) {
    const f = findRead(c, array, read)
    if (f) return f
  }
  return undefined
}

/**
 * Whether every read of `array` at the index of key `read` in `body` sits in the value `e` of the
 * one update `array[…] += e` at the index of key `write`, under `+`, `−` (binary and unary) and `×`
 * of f64 values only. Call two doubles alike when they are equal or both zeros (+0 and −0): those
 * operations keep two alike operands alike (a sum, difference or product of alike values differs
 * at most in the sign of a zero; a NaN stays the same NaN), so `e` computed from a local alike to
 * the element is alike to `e` computed from the element, and a first write, which a code
 * generator emits as `0 + e` (the element held zero), stores the same bits for both: +0 for any
 * zero. A generator may then keep `e` itself in the carried local, without the addition that
 * normalises −0, which otherwise sits on the recurrence's chain (Horner's
 * `acc[k] += acc[k + 1] * x + c[k]`), and store `0 + e`: by induction over the iterations the
 * local stays alike to the element and every store is the one the loop made before.
 */
export function signFreeReads(body: Stmt[], array: string, write: string, read: string): boolean {
  let total = 0
  let free = 0
  let writes = 0
  const count = (e: Expr, under: boolean): void => {
    if (e.kind === 'index' && e.array.name === array && indexKey(e.index) === read) {
      total++
      if (under) free++
    }
    const keeps =
      e.type === 'f64' &&
      ((e.kind === 'binary' && (e.op === '+' || e.op === '-' || e.op === '*')) || (e.kind === 'unary' && e.op === '-'))
    for (const c of exprChildren(e)) count(c, under && keeps)
  }
  walk(body, (st) => {
    const own =
      st.kind === 'update' &&
      st.target.kind === 'index' &&
      st.target.array.name === array &&
      indexKey(st.target.index) === write
    if (own) {
      writes++
      if (st.op !== '+=') writes = Number.POSITIVE_INFINITY
    }
    for (const e of stmtExprs(st)) count(e as Expr, own && e === (st as { value?: unknown }).value)
    // (a check's condition and message values: reads that see the local as it is)
    if (st.kind === 'assert') for (const e of [st.cond, ...st.args]) if (typeof e !== 'string') count(e, false)
  })
  return writes === 1 && total > 0 && free === total
}
