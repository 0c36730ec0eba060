/**
 * Split tails (without run-time checks): a counting loop whose body ends with an accumulation of a
 * costly pure value into a scalar, `acc += f(…)` (the log-sum-exp of a mixture's data term ends
 * each point with `slse += log(s[p]) + rm[pk + K − 1]`, a log-likelihood sum `ll += log(q[i])`),
 * becomes two loops over the same range: the first runs the body without that update, the second
 * only the update (with the ancillas it reads, allocated and deallocated again as the body does).
 *
 * Why: in the single loop each iteration's `log` waits at the end of that iteration's chain (the
 * components, their running maximum, the exponentials and their sum), and V8's out-of-order window
 * does not reach into the next iteration past the call, so the logarithm's latency (a division and
 * a polynomial, about as long as an exp) adds to every iteration. In a loop of their own the calls
 * are independent of one another and overlap. The GMM data term (d = 2, K = 5) spends about a fifth
 * of its wasm time in `log`.
 *
 * Exactness: the accumulator is updated by the same values in the same order (the second loop
 * runs the same iterations in the same order), so every result is the same double. It applies
 * only where that is provable from the body:
 * - the body is scalar `i32` ancillas allocated first (`p <- i - i0`, values reading the loop
 *   variable, earlier such ancillas and names the loop does not write; no element, no call), then
 *   statements M, then the update `acc ±= value` of an `f64` variable, then the deallocations of
 *   exactly those ancillas; the loop's range reads no element and nothing the loop writes;
 * - M is updates, scalar ancillas, `for`, `if`, `while` and `@unchecked` only (no call statement,
 *   no array ancilla, no host call, no effect), and reads and writes neither `acc` nor the
 *   ancillas of the first part;
 * - `value` calls only pure math primitives (at least one call: the point of the split) and reads
 *   the loop variable, those ancillas, names the loop does not write, and elements `a[e]` whose
 *   index is affine in the loop variable, `s·i + R + c` with R loop-invariant (the ancillas
 *   substituted) and 0 ≤ c < |s|, where every write of `a` in M has the same s and R and such a
 *   c: then no other iteration writes an element `value` reads (blocks of one iteration are its
 *   own, as for map lanes over blocks), so the second loop reads what the first loop's iteration
 *   left there;
 * - M itself accesses each such element, with the same index, on every run of the iteration (at
 *   its top level, in `@unchecked`, or in a `for` over constant non-empty ranges): so where M
 *   completes the update's reads are in range, and a call that fails (an index out of range in M)
 *   fails at the same access of the same iteration, having written the same elements (the update
 *   writes none; the scalar results of a failed call are not returned).
 *
 * Without run-time checks only (with checks the order of the checks would change).
 */
import type { Expr, ForStmt, FunctionDef, Program, Stmt } from '@tenet/ir'

/**
 * The pure primitives an accumulated value may call (the math the backend computes itself or
 * imports from `Math`, conversions): none can fail or has an effect.
 */
const PURE = new Set([
  'exp',
  'log',
  'sqrt',
  'sin',
  'cos',
  'tan',
  'atan',
  'atan2',
  'asin',
  'acos',
  'sinh',
  'cosh',
  'tanh',
  'pow',
  'abs',
  'min',
  'max',
  'floor',
  'ceil',
  'f64',
])

/**
 * `s·i + Σ terms + c`: an i32 index affine in the loop variable `i`, R the terms, c anywhere in
 * [lo, hi] (a variable of an inner loop over a constant range adds its range; lo = hi otherwise).
 */
interface Affine {
  s: number
  terms: Map<string, number>
  lo: number
  hi: number
}

class Refused extends Error {}

const isI32 = (t: unknown): boolean =>
  t === 'i32' || (typeof t === 'object' && t !== null && (t as { kind?: string; name?: string }).name === 'i32')

const scale = (a: Affine, k: number): Affine => ({
  s: a.s * k,
  terms: new Map([...a.terms].map(([n, v]) => [n, v * k] as [string, number]).filter(([, v]) => v !== 0)),
  lo: k >= 0 ? a.lo * k : a.hi * k,
  hi: k >= 0 ? a.hi * k : a.lo * k,
})
const add = (a: Affine, b: Affine, k: number): Affine => {
  const c = scale(b, k)
  const terms = new Map(a.terms)
  for (const [n, v] of c.terms) {
    const w = (terms.get(n) ?? 0) + v
    if (w === 0) terms.delete(n)
    else terms.set(n, w)
  }
  return { s: a.s + c.s, terms, lo: a.lo + c.lo, hi: a.hi + c.hi }
}
const constant = (a: Affine): boolean => a.s === 0 && a.terms.size === 0 && a.lo === a.hi
const sameR = (a: Affine, b: Affine): boolean =>
  a.s === b.s && a.terms.size === b.terms.size && [...a.terms].every(([n, v]) => b.terms.get(n) === v)
const sameForm = (a: Affine, b: Affine): boolean => sameR(a, b) && a.lo === b.lo && a.hi === b.hi && a.lo === a.hi
/** Whether index form `a` is one iteration's own element (0 ≤ c < |s| for every c it can take). */
const own = (a: Affine): boolean =>
  a.s !== 0 &&
  Number.isSafeInteger(a.s) &&
  Number.isSafeInteger(a.lo) &&
  Number.isSafeInteger(a.hi) &&
  a.lo >= 0 &&
  a.hi < Math.abs(a.s)

/** The loop's analysis: what it writes and how its ancillas read as affine forms. */
class Loop {
  /** Names M, the ancillas and the update write (inner loop variables and M's ancillas included). */
  readonly written = new Set<string>()
  /** Names M reads. */
  readonly readInM = new Set<string>()
  /** Writes of elements in M, per array: their index forms (null: not affine). */
  readonly elementWrites = new Map<string, (Affine | null)[]>()
  /** Accesses of elements M makes on every run of an iteration, per array. */
  readonly sureAccesses = new Map<string, Affine[]>()
  /** The first part's ancillas as affine forms (null: not affine). */
  readonly ancillas = new Map<string, Affine | null>()
  /** The variables of the inner loops over constant ranges being scanned, with their ranges. */
  readonly bounded = new Map<string, [number, number]>()

  constructor(readonly variable: string) {}

  /** The affine form of an i32 expression, or null. */
  affine(e: Expr): Affine | null {
    switch (e.kind) {
      case 'num':
        return Number.isSafeInteger(e.value) && !e.isFloat ? { s: 0, terms: new Map(), lo: e.value, hi: e.value } : null
      case 'var': {
        if (e.name === this.variable) return { s: 1, terms: new Map(), lo: 0, hi: 0 }
        const range = this.bounded.get(e.name)
        if (range) return { s: 0, terms: new Map(), lo: range[0], hi: range[1] }
        if (this.ancillas.has(e.name)) return this.ancillas.get(e.name) ?? null
        if (this.written.has(e.name) || !isI32(e.type)) return null
        return { s: 0, terms: new Map([[e.name, 1]]), lo: 0, hi: 0 }
      }
      case 'unary':
        if (e.op !== '-') return null
        {
          const a = this.affine(e.arg)
          return a && scale(a, -1)
        }
      case 'binary': {
        if (e.type !== undefined && e.type !== 'i32') return null
        if (e.op === '+' || e.op === '-') {
          const a = this.affine(e.left),
            b = this.affine(e.right)
          return a && b && add(a, b, e.op === '+' ? 1 : -1)
        }
        if (e.op === '*') {
          const a = this.affine(e.left),
            b = this.affine(e.right)
          if (!a || !b) return null
          if (constant(b)) return scale(a, b.lo)
          if (constant(a)) return scale(b, a.lo)
          return null
        }
        return null
      }
      default:
        return null
    }
  }
}

/** Calls `f` on every expression node of `e` (itself first). */
function walk(e: Expr, f: (x: Expr) => void): void {
  f(e)
  switch (e.kind) {
    case 'index':
      walk(e.index, f)
      break
    case 'unary':
      walk(e.arg, f)
      break
    case 'binary':
      walk(e.left, f)
      walk(e.right, f)
      break
    case 'call':
      for (const a of e.args) walk(a, f)
      break
    case 'field':
      walk(e.target, f)
      break
  }
}

/** Names an expression reads (variables and arrays). */
function readNames(e: Expr, out: Set<string>): Set<string> {
  walk(e, (x) => {
    if (x.kind === 'var') out.add(x.name)
    else if (x.kind === 'index') out.add(x.array.name)
    else if (x.kind === 'call' && x.callee.startsWith('$')) throw new Refused()
  })
  return out
}

/** Pass 1 over M: the names written and read, and the validity of its statements. */
function scanNames(body: readonly Stmt[], L: Loop): void {
  for (const s of body) {
    switch (s.kind) {
      case 'update':
        if (s.target.kind === 'var') L.written.add(s.target.name)
        else if (s.target.kind === 'index') {
          L.written.add(s.target.array.name)
          readNames(s.target.index, L.readInM)
        } else throw new Refused()
        readNames(s.value, L.readInM)
        break
      case 'alloc':
      case 'dealloc':
        if (s.value.kind === 'emptystack' || (s.type !== undefined && s.type.kind !== 'scalar')) throw new Refused()
        if (s.declared !== undefined && s.declared.kind !== 'scalar') throw new Refused()
        L.written.add(s.name)
        readNames(s.value, L.readInM)
        break
      case 'for':
        L.written.add(s.variable)
        for (const e of [s.start, s.stop, s.step]) if (e) readNames(e, L.readInM)
        scanNames(s.body, L)
        break
      case 'while':
        readNames(s.pre, L.readInM)
        readNames(s.post, L.readInM)
        scanNames(s.body, L)
        break
      case 'if':
        readNames(s.pre, L.readInM)
        if (s.post) readNames(s.post, L.readInM)
        scanNames(s.then, L)
        scanNames(s.else, L)
        break
      case 'unchecked':
        scanNames(s.body, L)
        break
      default:
        throw new Refused()
    }
  }
}

/** Pass 2 over M: the element writes (with their forms) and the accesses every iteration makes. */
function scanElements(body: readonly Stmt[], L: Loop, sure: boolean): void {
  const access = (e: Expr, write: boolean): void => {
    if (e.kind !== 'index') return
    const f = L.affine(e.index)
    const name = e.array.name
    if (write) {
      let w = L.elementWrites.get(name)
      if (!w) L.elementWrites.set(name, (w = []))
      w.push(f)
    }
    if (sure && f) {
      let a = L.sureAccesses.get(name)
      if (!a) L.sureAccesses.set(name, (a = []))
      a.push(f)
    }
  }
  const reads = (e: Expr): void => walk(e, (x) => access(x, false))
  for (const s of body) {
    switch (s.kind) {
      case 'update':
        access(s.target as Expr, true)
        if (s.target.kind === 'index') reads(s.target.index)
        reads(s.value)
        break
      case 'alloc':
        // (a deallocation's value is not evaluated without run-time checks: not an access)
        reads(s.value as Expr)
        break
      case 'for': {
        // (a variable of a loop over a constant range: its range, while its body is scanned)
        const lo = s.start.kind === 'num' && !s.start.isFloat ? s.start.value : NaN
        const hi = s.stop.kind === 'num' && !s.stop.isFloat ? (s.inclusive ? s.stop.value : s.stop.value - 1) : NaN
        const ranged = s.step === null && Number.isSafeInteger(lo) && Number.isSafeInteger(hi) && lo <= hi
        if (ranged) L.bounded.set(s.variable, [lo, hi])
        scanElements(s.body, L, sure && ranged)
        L.bounded.delete(s.variable)
        break
      }
      case 'while':
        reads(s.pre)
        scanElements(s.body, L, false)
        break
      case 'if':
        reads(s.pre)
        scanElements(s.then, L, false)
        scanElements(s.else, L, false)
        break
      case 'unchecked':
        scanElements(s.body, L, sure)
        break
    }
  }
}

/** The loop split in two (see the module comment), or null where it does not apply. */
export function splitTail(loop: ForStmt): [ForStmt, ForStmt] | null {
  if (loop.each) return null
  const body = loop.body
  let a = 0
  const i32Alloc = (s: Stmt | undefined): boolean =>
    s?.kind === 'alloc' && s.value.kind !== 'emptystack' && isI32(s.type ?? s.declared)
  while (a < body.length && i32Alloc(body[a])) a++
  let d = body.length
  while (d > 0 && body[d - 1]!.kind === 'dealloc') d--
  const tail = body[d - 1]
  if (d - 1 <= a || tail?.kind !== 'update' || tail.target.kind !== 'var') return null
  if (tail.op !== '+=' && tail.op !== '-=') return null
  const acc = tail.target.name
  const accType = tail.target.type
  if (accType !== 'f64' && !(typeof accType === 'object' && (accType as { name?: string }).name === 'f64')) return null
  const prefix = body.slice(0, a) as Extract<Stmt, { kind: 'alloc' }>[]
  const suffix = body.slice(d) as Extract<Stmt, { kind: 'dealloc' }>[]
  const M = body.slice(a, d - 1)
  const names = new Set(prefix.map((s) => s.name))
  if (names.size !== prefix.length || suffix.length !== prefix.length) return null
  if (!suffix.every((s) => names.has(s.name))) return null
  const L = new Loop(loop.variable)
  try {
    scanNames(M, L)
    // the ancillas: i32 values of the loop variable, earlier ancillas and invariant names
    for (const s of prefix) {
      if (s.value.kind === 'emptystack' || !isI32(s.type ?? s.declared)) return null
      if (L.written.has(s.name) || L.readInM.has(acc)) return null
      let bad = false
      walk(s.value, (x) => {
        if (x.kind === 'index' || x.kind === 'call') bad = true
        else if (x.kind === 'var' && x.name !== loop.variable && !L.ancillas.has(x.name) && L.written.has(x.name))
          bad = true
      })
      if (bad || readsName(s.value, acc)) return null
      L.ancillas.set(s.name, L.affine(s.value))
    }
    for (const s of suffix) if (s.value.kind === 'emptystack') return null
    if (L.written.has(acc) || L.readInM.has(acc) || names.has(acc) || acc === loop.variable) return null
    if (L.written.has(loop.variable)) return null
    // the range is evaluated again for the second loop: it must read nothing the loop writes
    for (const e of [loop.start, loop.stop, loop.step]) {
      if (!e) continue
      for (const n of readNames(e, new Set())) if (L.written.has(n) || names.has(n) || n === acc) return null
      let element = false
      walk(e, (x) => {
        if (x.kind === 'index') element = true
      })
      if (element) return null
    }
    scanElements(M, L, true)
    // the accumulated value: pure math of invariant names, ancillas and own elements
    let calls = 0
    let ok = true
    const needed = new Set<string>()
    walk(tail.value, (x) => {
      if (!ok) return
      if (x.kind === 'call') {
        if (!PURE.has(x.callee)) ok = false
        calls++
      } else if (x.kind === 'var') {
        if (x.name === acc) ok = false
        else if (names.has(x.name)) needed.add(x.name)
        else if (x.name !== loop.variable && L.written.has(x.name)) ok = false
      } else if (x.kind === 'index') {
        const f = L.affine(x.index)
        if (!f || !own(f)) {
          ok = false
          return
        }
        const writes = L.elementWrites.get(x.array.name) ?? []
        if (!writes.every((w) => w !== null && own(w) && sameR(w, f))) ok = false
        if (!(L.sureAccesses.get(x.array.name) ?? []).some((g) => sameForm(g, f))) ok = false
        for (const n of readNames(x.index, new Set())) if (names.has(n)) needed.add(n)
      } else if (x.kind === 'field') ok = false
    })
    if (!ok || calls === 0) return null
    // the ancillas the update reads, with those their values read
    for (let k = prefix.length - 1; k >= 0; k--)
      if (needed.has(prefix[k]!.name))
        for (const n of readNames(prefix[k]!.value as Expr, new Set())) if (names.has(n)) needed.add(n)
    const first: ForStmt = { ...loop, body: [...prefix, ...M, ...suffix] }
    const second: ForStmt = {
      ...loop,
      body: [...prefix.filter((s) => needed.has(s.name)), tail, ...suffix.filter((s) => needed.has(s.name))],
    }
    return [first, second]
  } catch (e) {
    if (e instanceof Refused) return null
    throw e
  }
}

/** Whether expression `e` reads name `n`. */
function readsName(e: Expr, n: string): boolean {
  return readNames(e, new Set()).has(n)
}

/** Splits every loop of a body that `splitTail` applies to (inner loops first); counts in `count`. */
function splitBody(body: readonly Stmt[], count: { n: number }): Stmt[] {
  const out: Stmt[] = []
  for (const s of body) {
    let t: Stmt = s
    if (s.kind === 'for') t = { ...s, body: splitBody(s.body, count) }
    else if (s.kind === 'while') t = { ...s, body: splitBody(s.body, count) }
    else if (s.kind === 'unchecked') t = { ...s, body: splitBody(s.body, count) }
    else if (s.kind === 'if') t = { ...s, then: splitBody(s.then, count), else: splitBody(s.else, count) }
    if (t.kind === 'for') {
      const split = splitTail(t)
      if (split) {
        count.n++
        out.push(...split)
        continue
      }
    }
    out.push(t)
  }
  return out
}

/**
 * The program with the tails of its loops split off (see the module comment), in every function
 * and inverse; `count` is how many loops were split. Call it only without run-time checks.
 */
export function splitLoopTails(
  program: Program,
  inverses: Map<string, FunctionDef>,
): { program: Program; inverses: Map<string, FunctionDef>; count: number } {
  const count = { n: 0 }
  const each = (f: FunctionDef): FunctionDef => {
    const before = count.n
    const body = splitBody(f.body, count)
    return count.n === before ? f : { ...f, body }
  }
  const functions = new Map([...program.functions].map(([name, f]) => [name, each(f)]))
  const inv = new Map([...inverses].map(([name, f]) => [name, each(f)]))
  return count.n === 0
    ? { program, inverses, count: 0 }
    : { program: { ...program, functions }, inverses: inv, count: count.n }
}
