/**
 * Pass `interchange` (loop interchange: an outer loop of independent iterations moves innermost).
 * A loop whose iterations touch disjoint memory, around a nest that does the same thing in every
 * iteration, runs the nest once with itself innermost, around each group of statements that
 * depends on it:
 *
 *     for l in 0..n {
 *       k: i32 <- 0
 *       for j in 0..m { for i in m - 2..=j by -1 { ROT(x[i + m * l], x[i + 1 + m * l], theta[k]); INC(k) } }
 *       k -> len(theta)
 *     }
 * becomes
 *     if (0 < n, ~) {
 *       k: i32 <- 0
 *       for j in 0..m { for i in m - 2..=j by -1 { for l in 0..n { ROT(x[i + m * l], x[i + 1 + m * l], theta[k]) }; INC(k) } }
 *       k -> len(theta)
 *     }
 *
 * so that what the inner statements share across the columns (θ[k], cos θ[k]) is loaded or
 * computed once per rotation (`hoist-invariants`, `hoist-lowered`) instead of once per column.
 *
 * The loop's body is split into
 * - its *counters*: scalar ancillas allocated at its top and deallocated at its end (in reverse
 *   order), from values that read neither the loop variable nor anything the work writes;
 * - the *nest*: `for` loops whose ranges read neither the loop variable nor what the work writes;
 * - *steps* of the counters: `c += d`, `c -= d` (d an integer literal), `INC(c)`, `DEC(c)` and
 *   their uncalls;
 * - the *work*: every other statement, each an update of an array element or a call of a
 *   bijection whose `inout` arguments are array elements (anything else — a function call, an
 *   `if`, an ancilla of the body, a host call — leaves the loop as it is).
 * Counters, nest and steps read nothing that depends on the loop variable, so they take the same
 * values in every iteration: run once, they give each (moved) work statement the values it had.
 *
 * It moves only where that pays: some work statement applies an expensive pure primitive (cos,
 * exp, a bijection's lowered cos θ) to a value the columns share, which `hoist-calls` then
 * computes once per rotation instead of once per column.
 *
 * Legality is a dependence test, proved, never assumed: the work of two different iterations
 * must commute. Every array the work writes must be accessed (read or written, by any work
 * statement) in one of two ways:
 * - *by column*: at `g + c·l` with one l-free stride `c` for the array, and `0 ≤ g ≤ c − 1`
 *   proved from the ranges of the enclosing loops (each index is a polynomial of i32 variables;
 *   the loop variables are replaced by their bounds, innermost first, each where its coefficient
 *   is a constant, until a constant is left). Then iterations l ≠ l' touch disjoint elements;
 * - *by step*: only as `A[c] += v` or `A[c] -= v` (v not reading A) with `c` a counter that moves
 *   in one direction only, all in one loop body that steps `c`, each two of them either in one
 *   run of work statements or with a step of `c` between them (counted around the loop). Then
 *   each element is updated by one run of one iteration of the nest, for every l, in the order
 *   of l both before and after: the same sums in the same order, to the last bit.
 * Arrays the work only reads, and scalars (the work writes none), impose nothing. The test takes
 * distinct names for distinct memory, which a host may break by passing one array (or overlapping
 * views of one buffer) for two parameters: the moved loop runs only where each array parameter the
 * work writes is apart from every other array parameter the work, the counters, the nest's ranges
 * or the loop's range access (\`$apart\`, see \`apart.ts\`), and the loop as written (a copy) runs
 * elsewhere; an array the function allocates is fresh memory, and pairs an enclosing \`if\` tested
 * are not tested again. Index arithmetic is taken as integer arithmetic: an index past 2³¹ is out
 * of range of every array.
 *
 * The result is guarded by "the loop runs at least once" (so the ranges and steps are evaluated
 * only where the program evaluated them), and by the alias tests:
 * \`if (0 < n && $apart(theta, x), ~) { (moved) } else { (as written) }\`. Loops are tried
 * outermost first; a loop that moves is not tried again.
 *
 * With run-time checks on the pass runs too (`CHECKED_PASSES`); the checks are placed afterwards
 * (`insert-checks`), on the statements as moved, and keep their conditions, messages and source
 * locations. Each work statement runs for the same (l, nest iteration) pairs as before, only in
 * another order, and since the work of two iterations commutes (the test above), each of its
 * checks (bounds, alias, zero factor) sees the values it saw in the program; the counters' checks
 * (`k -> len(theta)`) see, once, the one value every iteration gave them; the new guard's `if`
 * reads only the range, which nothing inside writes (its post-condition holds). So a program that
 * violates a check still fails, at a check it fails without the pass. What changes is which of two
 * failing checks comes first: the program meets column 0's checks, its counters' deallocation
 * included, before column 1's work, the pass meets every column's work first. E.g. with one angle
 * too many and the matrix one element short (`checked-passes.ts` of `@tenet/testing`), the
 * program raises the counter's deallocation error, the interchanged loop the matrix's bounds
 * error; each violation alone raises the program's error.
 */
import type { Arg, Expr, ForStmt, FunctionDef, IndexExpr, Stmt } from '../ast.js'
import { readNames } from '../check.js'
import type { Registry } from '../registry.js'
import { apartPairs, arraysAccessed, type KnownApart, knownApart, withApart } from './apart.js'
import { rewriteBlock } from './rewrite.js'
import { loweredPureCalls, worthTabulating } from './tabulate.js'

/** A polynomial with integer coefficients: monomial (variable names sorted, joined by `*`; `''` for 1) → coefficient. */
export type Poly = Map<string, number>

const monomial = (a: string, b: string): string =>
  [...(a ? a.split('*') : []), ...(b ? b.split('*') : [])].sort().join('*')

/** `p + scale · q`. */
export function addPoly(p: Poly, q: Poly, scale = 1): Poly {
  const out = new Map(p)
  for (const [m, c] of q) {
    const v = (out.get(m) ?? 0) + scale * c
    if (v === 0) out.delete(m)
    else out.set(m, v)
  }
  return out
}

/**
 * `p − q` if it is a constant below 2³¹ in magnitude, else undefined. (i32 indices wrap: two
 * indices in bounds, [0, 2³¹), differ by less than 2³¹, so a difference ≡ d modulo 2³² is d itself
 * only for such a d; `k − 2³² + 1` is the element after k.)
 */
export function constantDifference(p: Poly, q: Poly): number | undefined {
  const d = addPoly(p, q, -1)
  if (d.size === 0) return 0
  if (d.size === 1 && d.has('')) {
    const c = d.get('')!
    return c === (c | 0) && c !== -(2 ** 31) ? c : undefined
  }
  return undefined
}

/** The product of two polynomials. */
export function mulPoly(p: Poly, q: Poly): Poly {
  let out: Poly = new Map()
  for (const [a, x] of p) for (const [b, y] of q) out = addPoly(out, new Map([[monomial(a, b), x * y]]))
  return out
}

/**
 * The polynomial an i32 expression computes, or undefined (a call, an element, a division, a
 * float, or a coefficient that is not a safe integer: the coefficients are exact). `atom`, where given, turns a leaf this does not know (a call such as `len(a)`) into a
 * polynomial of its own, or undefined.
 */
export function polynomial(e: Expr, atom?: (e: Expr) => Poly | undefined): Poly | undefined {
  switch (e.kind) {
    case 'num':
      return Number.isInteger(e.value) && !e.isFloat
        ? e.value === 0
          ? new Map()
          : new Map([['', e.value]])
        : undefined
    case 'var':
      return e.type === 'i32' ? new Map([[e.name, 1]]) : undefined
    case 'unary': {
      if (e.op !== '-' || e.type !== 'i32') return undefined
      const a = polynomial(e.arg, atom)
      return a && addPoly(new Map(), a, -1)
    }
    case 'binary': {
      if (e.type !== 'i32' || (e.op !== '+' && e.op !== '-' && e.op !== '*')) return undefined
      const a = polynomial(e.left, atom),
        b = polynomial(e.right, atom)
      if (!a || !b) return undefined
      // (exact integer coefficients only: a product or sum past 2^53 rounds, and two indices
      // equal at run time could look a constant apart, review 19d)
      if (e.op === '*')
        for (const x of a.values()) for (const y of b.values()) if (!Number.isSafeInteger(x * y)) return undefined
      const r = e.op === '*' ? mulPoly(a, b) : addPoly(a, b, e.op === '+' ? 1 : -1)
      for (const c of r.values()) if (!Number.isSafeInteger(c)) return undefined
      return r
    }
    default:
      return atom?.(e)
  }
}

/** The range of values a loop variable takes inside its loop, as polynomials (where known), and its depth. */
export interface Bound {
  lo?: Poly
  hi?: Poly
  depth: number
}

export const intLiteral = (e: Expr | null): number | undefined =>
  e === null ? 1 : e.kind === 'num' && Number.isInteger(e.value) ? e.value : undefined

/** The bounds of `for v in start..stop by step` (either direction; `reverse` runs the same values). */
export function loopBound(s: ForStmt, depth: number): Bound {
  const step = intLiteral(s.step)
  const a = polynomial(s.start),
    b = polynomial(s.stop)
  const one: Poly = new Map([['', 1]])
  const end = (p: Poly | undefined, dir: number) => (p && !s.inclusive ? addPoly(p, one, -dir) : p)
  if (step === undefined || step === 0) return { depth }
  const r: Bound = { depth }
  const lo = step > 0 ? a : end(b, -1)
  const hi = step > 0 ? end(b, 1) : a
  if (lo) r.lo = lo
  if (hi) r.hi = hi
  return r
}

/**
 * Whether `p ≥ 0` wherever the loop variables lie in their bounds: each loop variable (innermost
 * first) is replaced by the bound that minimises `p` — its lower bound where its coefficient is a
 * positive constant, its upper where negative — until a constant is left.
 */
export function provedNonNegative(p: Poly, bounds: ReadonlyMap<string, Bound>): boolean {
  let q = p
  for (let guard = 0; guard < 64; guard++) {
    let v: string | undefined
    for (const m of q.keys())
      for (const n of m ? m.split('*') : []) {
        const b = bounds.get(n)
        if (b && (v === undefined || b.depth > bounds.get(v)!.depth)) v = n
      }
    if (v === undefined) break
    for (const m of q.keys()) if (m !== v && m.split('*').includes(v)) return false
    const c = q.get(v)!
    const b = c > 0 ? bounds.get(v)!.lo : bounds.get(v)!.hi
    if (!b) return false
    q = addPoly(addPoly(q, new Map([[v, c]]), -1), b, c)
  }
  for (const [m, c] of q) if (m !== '' || c < 0) return false
  return true
}

/** A work statement: where it is, and the loop bounds there. */
export interface Work {
  stmt: Stmt
  block: Stmt[]
  bounds: Map<string, Bound>
}

/** A counter step: the counter and the direction it moves (+1, −1). */
function stepOf(s: Stmt, counters: ReadonlySet<string>): { name: string; dir: number } | undefined {
  if (s.kind === 'update' && s.target.kind === 'var' && counters.has(s.target.name)) {
    const d = intLiteral(s.value)
    if (d === undefined || (s.op !== '+=' && s.op !== '-=')) return undefined
    return { name: s.target.name, dir: Math.sign(s.op === '+=' ? d : -d) }
  }
  if (s.kind === 'callstmt' && s.target === 'bijection' && (s.callee === 'INC' || s.callee === 'DEC')) {
    const a = s.args[0]
    if (s.args.length !== 1 || a?.kind !== 'var' || !counters.has(a.name)) return undefined
    return { name: a.name, dir: (s.callee === 'INC') !== s.inverse ? 1 : -1 }
  }
  return undefined
}

export const hostCall = (e: Expr | Arg): boolean => {
  let found = false
  const visit = (x: Expr | Arg): void => {
    if (found) return
    switch (x.kind) {
      case 'call':
        if (x.callee.startsWith('$')) found = true
        x.args.forEach(visit)
        break
      case 'index':
        visit(x.index)
        break
      case 'field':
      case 'neg':
        visit(x.target)
        break
      case 'unary':
        visit(x.arg)
        break
      case 'binary':
        visit(x.left)
        visit(x.right)
        break
    }
  }
  visit(e)
  return found
}

/** Every element access in an expression or argument. */
export function accesses(e: Expr | Arg, out: IndexExpr[] = []): IndexExpr[] {
  switch (e.kind) {
    case 'index':
      out.push(e)
      accesses(e.index, out)
      break
    case 'field':
    case 'neg':
      accesses(e.target, out)
      break
    case 'unary':
      accesses(e.arg, out)
      break
    case 'binary':
      accesses(e.left, out)
      accesses(e.right, out)
      break
    case 'call':
      for (const a of e.args) accesses(a, out)
      break
  }
  return out
}

/** What the analysis of one loop body collects. */
interface Analysis {
  work: Work[]
  steps: Array<{ stmt: Stmt; block: Stmt[]; name: string; dir: number }>
  /** Expressions of the nest and the counters (ranges, allocation and deallocation values). */
  control: Expr[]
  loops: number
}

/** The statements of the loop `L` moved inside its nest, or undefined where that is not proved legal. */
function interchangeLoop(L: ForStmt, registry: Registry, f: FunctionDef, known: KnownApart): Stmt[] | undefined {
  const step = intLiteral(L.step)
  if (step === undefined || step === 0) return undefined
  // counters: allocations at the top, their deallocations in reverse order at the end
  const body = L.body
  let p = 0
  while (p < body.length && body[p]!.kind === 'alloc') p++
  const allocs = body.slice(0, p) as Array<Extract<Stmt, { kind: 'alloc' }>>
  const deallocs = body.slice(body.length - p) as Array<Extract<Stmt, { kind: 'dealloc' }>>
  if (body.length < 2 * p) return undefined
  for (let i = 0; i < p; i++) {
    const a = allocs[i]!,
      d = deallocs[p - 1 - i]!
    if (d.kind !== 'dealloc' || d.name !== a.name || a.type?.kind !== 'scalar' || a.type.name !== 'i32')
      return undefined
    if (a.value.kind === 'emptystack' || d.value.kind === 'emptystack') return undefined
  }
  const counters = new Set(allocs.map((a) => a.name))
  const mid = body.slice(p, body.length - p)
  const an: Analysis = { work: [], steps: [], control: [], loops: 0 }
  for (const a of allocs) an.control.push(a.value as Expr)
  for (const d of deallocs) an.control.push(d.value as Expr)
  const inner = new Set<string>()
  const visit = (block: Stmt[], bounds: Map<string, Bound>, depth: number): boolean => {
    for (const s of block) {
      const st = stepOf(s, counters)
      if (st) {
        an.steps.push({ stmt: s, block, ...st })
        continue
      }
      switch (s.kind) {
        case 'for': {
          if (intLiteral(s.step) === undefined) return false
          an.loops++
          inner.add(s.variable)
          for (const e of [s.start, s.stop, s.step]) if (e) an.control.push(e)
          const b = new Map(bounds)
          b.set(s.variable, loopBound(s, depth + 1))
          if (!visit(s.body, b, depth + 1)) return false
          break
        }
        case 'update':
          if (s.target.kind !== 'index') return false
          an.work.push({ stmt: s, block, bounds })
          break
        case 'callstmt': {
          if (s.target !== 'bijection') return false
          let spec = registry.bijection(s.callee)
          if (s.inverse && spec.inverse !== 'self') spec = registry.bijection(spec.inverse)
          if (s.args.some((a, i) => spec.roles[i] === 'inout' && a.kind !== 'index')) return false
          an.work.push({ stmt: s, block, bounds })
          break
        }
        default:
          return false
      }
    }
    return true
  }
  if (!visit(mid, new Map(), 0) || an.loops === 0 || an.work.length === 0) return undefined
  if (!pays(an.work, L.variable, registry)) return undefined
  // the work's expressions; no host calls anywhere
  const exprsOf = (s: Stmt): Array<Expr | Arg> =>
    s.kind === 'update' ? [s.target, s.value] : s.kind === 'callstmt' ? s.args : []
  if ([...an.work.flatMap((w) => exprsOf(w.stmt)), ...an.control, L.start, L.stop].some(hostCall)) return undefined
  // what the work writes: arrays only
  const written = new Set<string>()
  for (const w of an.work) {
    const s = w.stmt
    if (s.kind === 'update') written.add((s.target as IndexExpr).array.name)
    else if (s.kind === 'callstmt') {
      let spec = registry.bijection(s.callee)
      if (s.inverse && spec.inverse !== 'self') spec = registry.bijection(spec.inverse)
      s.args.forEach((a, i) => {
        if (spec.roles[i] === 'inout') written.add((a as IndexExpr).array.name)
      })
    }
  }
  // the control reads neither the loop variable nor what the work writes; the range of L neither
  const reads = new Set<string>()
  for (const e of an.control) readNames(e, reads)
  for (const st of an.steps) if (st.stmt.kind === 'update') readNames(st.stmt.value, reads)
  if (reads.has(L.variable) || [...written].some((n) => reads.has(n))) return undefined
  const rangeReads = new Set<string>()
  for (const e of [L.start, L.stop]) readNames(e, rangeReads)
  if ([...written, ...counters, ...inner].some((n) => rangeReads.has(n))) return undefined
  if ([...written].some((n) => counters.has(n) || inner.has(n) || n === L.variable)) return undefined
  // every access of every written array: by column or by step
  for (const array of written) {
    const uses = an.work.flatMap((w) =>
      exprsOf(w.stmt)
        .flatMap((e) => accesses(e))
        .filter((a) => a.array.name === array)
        .map((a) => ({ a, w })),
    )
    if (!byColumn(uses, L.variable) && !byStep(array, an, counters)) return undefined
  }
  // the new body: each run of work statements in a copy of L
  const steps = new Set(an.steps.map((s) => s.stmt))
  const rebuild = (block: Stmt[]): Stmt[] => {
    const out: Stmt[] = []
    let run: Stmt[] = []
    const flush = () => {
      if (run.length) out.push({ ...L, body: run })
      run = []
    }
    for (const s of block) {
      if (steps.has(s)) {
        flush()
        out.push(s)
      } else if (s.kind === 'for') {
        flush()
        out.push({ ...s, body: rebuild(s.body) })
      } else run.push(s)
    }
    flush()
    return out
  }
  // two array parameters may be one memory: the moved loop runs where each array the work writes
  // is apart from every other array it (or the control, or the range) accesses, the loop as it
  // was elsewhere (a copy: no node of the IR is shared between two statements)
  const accessed = new Set<string>()
  for (const e of [...an.work.flatMap((w) => exprsOf(w.stmt)), ...an.control, L.start, L.stop])
    arraysAccessed(e, accessed)
  for (const st of an.steps) for (const e of exprsOf(st.stmt)) arraysAccessed(e, accessed)
  const pairs = apartPairs(f, written, accessed, known)
  const moved: Stmt[] = [...allocs, ...rebuild(mid), ...deallocs]
  const op = step > 0 ? (L.inclusive ? '<=' : '<') : L.inclusive ? '>=' : '>'
  const loc = L.loc ? { loc: L.loc } : {}
  const range: Expr = { kind: 'binary', op, left: L.start, right: L.stop, type: 'bool', ...loc }
  const pre = withApart(range, pairs, f)
  const asWritten = pairs.length ? rewriteBlock([L], (e) => e) : []
  return [
    { kind: 'if', pre, post: null, then: moved, else: asWritten, ...(pairs.length ? { asWritten: true } : {}), ...loc },
  ]
}

/**
 * Whether moving the loop pays: some work statement applies an expensive pure primitive (one
 * `tabulate` would table), explicitly or in a bijection's lowering, to a value that reads neither
 * the loop variable nor what the work writes — computed once per iteration of the nest instead
 * of once per iteration of the loop (`hoist-calls`). Otherwise the loop stays where it is (the
 * order of its accesses, the locals the backends keep for it, are the program's).
 */
function pays(work: Work[], l: string, registry: Registry): boolean {
  const written = new Set<string>([l])
  for (const w of work) {
    const s = w.stmt
    if (s.kind === 'update') written.add((s.target as IndexExpr).array.name)
    if (s.kind === 'callstmt') {
      let spec = registry.bijection(s.callee)
      if (s.inverse && spec.inverse !== 'self') spec = registry.bijection(spec.inverse)
      s.args.forEach((a, i) => {
        if (a.kind === 'index' && spec.roles[i] === 'inout') written.add(a.array.name)
      })
    }
  }
  const invariant = (e: Expr | Arg): boolean => ![...readNames(e)].some((n) => written.has(n))
  const calls = (e: Expr | Arg): boolean => {
    let found = false
    const visit = (x: Expr | Arg): void => {
      if (found) return
      if (x.kind === 'call') {
        if (x.args.length === 1 && x.type === 'f64' && worthTabulating(registry, x.callee) && invariant(x.args[0]!))
          found = true
        x.args.forEach(visit)
      } else if (x.kind === 'index') visit(x.index)
      else if (x.kind === 'unary') visit(x.arg)
      else if (x.kind === 'binary') {
        visit(x.left)
        visit(x.right)
      } else if (x.kind === 'field' || x.kind === 'neg') visit(x.target)
    }
    visit(e)
    return found
  }
  return work.some(({ stmt: s }) => {
    if (s.kind === 'update') return calls(s.value)
    if (s.kind !== 'callstmt') return false
    if (s.args.some(calls)) return true
    let spec = registry.bijection(s.callee)
    if (s.inverse && spec.inverse !== 'self') spec = registry.bijection(spec.inverse)
    return loweredPureCalls(registry, spec).some((c) => {
      const a = s.args[c.arg]
      return a !== undefined && spec.roles[c.arg] !== 'inout' && a.type === 'f64' && invariant(a)
    })
  })
}

/** Every access at `g + c·l`, one l-free stride `c` for all, `0 ≤ g ≤ c − 1` proved where each is. */
export function byColumn(uses: Array<{ a: IndexExpr; w: Work }>, l: string): boolean {
  let stride: string | undefined
  for (const { a, w } of uses) {
    const poly = polynomial(a.index)
    if (!poly) return false
    let c: Poly = new Map()
    let g: Poly = new Map()
    for (const [m, k] of poly) {
      const names = m ? m.split('*') : []
      const at = names.indexOf(l)
      if (at < 0) g = addPoly(g, new Map([[m, k]]))
      else {
        names.splice(at, 1)
        if (names.includes(l)) return false
        c = addPoly(c, new Map([[names.join('*'), k]]))
      }
    }
    const key = JSON.stringify([...c].sort())
    if (c.size === 0 || (stride !== undefined && stride !== key)) return false
    stride = key
    // no loop variable of the nest, nor l, in the stride
    if ([...c.keys()].some((m) => m.split('*').some((n) => w.bounds.has(n)))) return false
    if (!provedNonNegative(g, w.bounds)) return false
    if (!provedNonNegative(addPoly(addPoly(c, g, -1), new Map([['', 1]]), -1), w.bounds)) return false
  }
  return true
}

/**
 * Every access an update `A[c] ±= v` (v not reading A) at a counter `c` that moves one way only,
 * all in one block that steps `c` between each two of them (around the loop).
 */
function byStep(array: string, an: Analysis, counters: ReadonlySet<string>): boolean {
  const users = an.work.filter((w) => {
    const s = w.stmt
    return exprsReading(s).some((e) => accesses(e).some((a) => a.array.name === array))
  })
  let counter: string | undefined
  let block: Stmt[] | undefined
  for (const w of users) {
    const s = w.stmt
    if (s.kind !== 'update' || (s.op !== '+=' && s.op !== '-=')) return false
    const t = s.target as IndexExpr
    if (t.array.name !== array || t.index.kind !== 'var' || !counters.has(t.index.name)) return false
    if (readNames(s.value).has(array)) return false
    if ((counter !== undefined && counter !== t.index.name) || (block !== undefined && block !== w.block)) return false
    counter = t.index.name
    block = w.block
  }
  if (counter === undefined || block === undefined) return false
  const dirs = new Set(an.steps.filter((s) => s.name === counter).map((s) => s.dir))
  if (dirs.size !== 1 || dirs.has(0)) return false
  // around the block: two updates of the array either in one run of work statements (moved into
  // one copy of the loop, they keep their order) or with a step of the counter between them
  const marks = block.map((s) =>
    an.steps.some((st) => st.stmt === s && st.name === counter)
      ? 'step'
      : users.some((w) => w.stmt === s)
        ? 'use'
        : s.kind === 'for' || an.steps.some((st) => st.stmt === s)
          ? 'break'
          : 'work',
  )
  const first = marks.indexOf('step')
  if (first < 0) return false
  let state: 'none' | 'run' | 'broken' = 'none'
  for (const m of [...marks.slice(first), ...marks.slice(0, first)]) {
    if (m === 'step') state = 'none'
    else if (m === 'use') {
      if (state === 'broken') return false
      state = 'run'
    } else if (m === 'break' && state === 'run') state = 'broken'
  }
  return true
}

const exprsReading = (s: Stmt): Array<Expr | Arg> =>
  s.kind === 'update' ? [s.target, s.value] : s.kind === 'callstmt' ? s.args : []

/**
 * `block` (of function `f`) with its loops interchanged where the pass proves it legal (outermost
 * first); `known`: the pairs of array parameters the enclosing \`if\`s proved apart (see `apart.ts`).
 */
export function interchangeBlock(
  block: Stmt[],
  registry: Registry,
  f: FunctionDef,
  known: KnownApart = new Set(),
): Stmt[] {
  return block.flatMap((s): Stmt[] => {
    switch (s.kind) {
      case 'for':
        return interchangeLoop(s, registry, f, known) ?? [{ ...s, body: interchangeBlock(s.body, registry, f, known) }]
      case 'if':
        return [
          {
            ...s,
            then: interchangeBlock(s.then, registry, f, knownApart(s.pre, known)),
            else: s.asWritten ? s.else : interchangeBlock(s.else, registry, f, known),
          },
        ]
      case 'while':
      case 'unchecked':
        return [{ ...s, body: interchangeBlock(s.body, registry, f, known) } as Stmt]
      default:
        return [s]
    }
  })
}

/** The function with its loops interchanged where legal (see the module comment). */
export function interchangeLoops(f: FunctionDef, registry: Registry): FunctionDef {
  return { ...f, body: interchangeBlock(f.body, registry, f) }
}
