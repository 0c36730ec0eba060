/**
 * `finite-steps` — with run-time checks on: `finite-history` for loops whose steps compute
 * scalars of their own. A loop whose every iteration computes local scalar ancillas (`P`), writes
 * one or more elements of an f64 or f32 `zeros` array ancilla `A` from zero (`U`: `A[w_j] += e_j`,
 * the elements of no other iteration), and uncomputes its scalars (`Q`) — an integrator's stages
 * (RK4: four stages per step into a trajectory `xs[2·t + 2]`, `xs[2·t + 3]`), any routine called
 * in a loop whose results go to a history array — and its exact inverse later in the same block
 * (`~routine`): the inverse's iteration becomes `A[w_j] -= A[w_j]` for each `j`, so the
 * uncompute neither evaluates `e_j` nor computes and uncomputes the scalars again.
 *
 * The shape, in one block (`L` the loop, `M` its inverse):
 *
 * ```
 * A <- zeros(n)               (f64 or f32 elements)
 * …                           (writes A only by updates A[p] op= …, or loops of one such update
 *                              with p = ±i + c, all outside what L writes)
 * L: for v in R { P; A[w_1] += e_1; …; A[w_m] += e_m; Q }
 * …                           (writes neither A nor anything P, Q or the e_j read, nor any array
 *                              parameter; no host effect)
 * M: for v in reverse R { P; A[w_π1] -= e_π1; …; A[w_πm] -= e_πm; Q }
 * ```
 *
 * `P` and `Q` are the same statements in `L` and `M` (compared node by node, source locations
 * aside): allocations of scalars (`P`), their deallocations (`Q`), and updates of those scalars
 * only; `U` in `M` is `L`'s updates with `-=`, each once, in any order (π a permutation). The
 * written index is `w_j = a·v + c + d_j` with `a` a nonzero literal (|a|, |step| ≤ 1024), `c` an
 * integer polynomial of names nothing from the allocation to `M` writes (`len(x)` allowed), the
 * `d_j` literal constants (|d_j| < 2²⁰) that differ pairwise by no multiple of `a`; `R` has a
 * literal step and reads nothing written from the allocation to `M`. Nothing in `P`, `Q` or the
 * `e_j` calls a host function, and they read `A` only as `A[a·v + c + δ]` (δ a literal) where
 * for every `j` with `a | δ − d_j` the iteration `v + (δ − d_j)/a` is EARLIER than `v` in the
 * order `L` runs (so an element of this iteration, or of a later one, is never read).
 *
 * Why the result is the same, bit for bit, with the same checks failing:
 *
 * 1. Each element `L` writes is +0 when `L` writes it. `L` completed before `M` runs, and with
 *    checks on every element access of `L` passed its bounds check, so every written index lies
 *    in `[0, 2³¹)`. Across the iterations the exact value of `a·v + c + d_j` moves by `a·step`,
 *    `|a·step| < 2³¹`, so it cannot jump over the negative half of the i32 range: the i32 indices
 *    of one `j` are the exact values less one fixed multiple of 2³², an arithmetic sequence with
 *    difference `a`. Two writes `w_j(v) = w_k(v′)` then give `a·(v′ − v) = d_j − d_k` exactly
 *    (both indices in range, their difference below 2³¹ + 2²¹ in magnitude), impossible for
 *    `j ≠ k` (no multiple of a) and for `j = k`, `v ≠ v′` (a ≠ 0): each element is written once.
 *    The writes before `L` lie outside `[min w, max w]` (a constant difference), as in
 *    `finite-history`.
 * 2. When `M` runs iteration `v`, every value that `P`, the `e_j` and `Q` read holds what it held
 *    when `L` ran iteration `v`: the loop variable; names nothing between writes; elements of `A`
 *    of earlier iterations (not yet uncomputed: `M` runs later iterations first, and each writes
 *    only its own elements — the same argument as 1. places a read `A[a·v + c + δ]` in
 *    iteration `v + (δ − d_j)/a` when it is an element of `j`) or of none. `P` is the same
 *    statements, so the scalars hold the same values at `U`, and each `e_j` is `L`'s, bit for
 *    bit; `Q` then reads the same scalars and elements (`U` changed only this iteration's, which
 *    nothing reads). So every check in `P`, the `e_j` and `Q` — bounds checks, the scalars'
 *    deallocation checks, conversions, alias checks — sees the values on which it passed in `L`:
 *    none can fail in `M`.
 * 3. `M`'s update computes `(0 + e_j) − e_j`, +0 for a finite `e_j` and NaN otherwise, and
 *    `A[w_j] − A[w_j]` is the same (`finite-history`, 3.); the scalars are `M`'s own, deallocated
 *    within the iteration. So `M` without `P` and `Q`, its updates `A[w_j] -= A[w_j]`, leaves
 *    every value as the reference does; the bounds check of each target stays, and every later
 *    check (the deallocation check `A -> zeros(n)` first) sees the same values.
 *
 * With checks off, `dead-ancillas` drops such uncomputes altogether.
 */
import type { Expr, ForStmt, FunctionDef, ScalarTypeName, Stmt, UpdateStmt } from '../ast.js'
import { readNames } from '../check.js'
import { key } from '../cse.js'
import {
  atoms,
  direction,
  type PreWrite,
  rangeNames,
  reversed,
  rewriteArrayLoop,
  substitute,
  varRange,
  writesSharedArrays,
} from './finite-history.js'
import { indexPolynomial } from './first-writes.js'
import { atomChanges, resizedNames, writtenNames } from './hoist-invariants.js'
import { callsHost } from './insert-checks.js'
import { addPoly, constantDifference, intLiteral, type Poly } from './interchange.js'
import { mapInnerBlocks } from './rewrite.js'

/** The largest |a| and |step| accepted (see the module comment: |a·step| < 2³¹). */
const MAX_FACTOR = 1024
/** The largest |d_j| (and |δ|) accepted. */
const MAX_OFFSET = 2 ** 20

/**
 * `f` with the inverse loop of every loop of steps (local scalars and history updates, see the
 * module comment) written `A[w_j] -= A[w_j]`. `effectful`: the functions with a host effect.
 */
export function finiteSteps(f: FunctionDef, effectful: ReadonlySet<string> = new Set()): FunctionDef {
  let changed = false
  const block = (body: Stmt[]): Stmt[] => {
    let out = mapInnerBlocks(body, block)
    for (let a = 0; a < out.length; a++) {
      const next = rewriteArray(out, a, effectful)
      if (next) {
        out = next
        changed = true
      }
    }
    return out
  }
  const body = block(f.body)
  return changed ? { ...f, body } : f
}

/** A loop of steps: `L`, its parts, `a`, `c` (w_j = a·v + c + d_j) and the offsets `d_j`. */
interface Steps {
  L: ForStmt
  P: Stmt[]
  U: UpdateStmt[]
  Q: Stmt[]
  locals: Set<string>
  a: number
  c: Poly
  d: number[]
}

/** A node, source locations aside, as a string (equal strings: the same statements). */
const shape = (x: unknown): string => JSON.stringify(x, (k, v) => (k === 'loc' ? undefined : v))

/** Whether an update writes element(s) of `A`. */
const updatesA = (s: Stmt, A: string): s is UpdateStmt =>
  s.kind === 'update' && s.target.kind === 'index' && s.target.array.name === A

/**
 * The scalar statements of `P` (`alloc` true) or `Q`: allocations of scalars (P) or their
 * deallocations (Q), and updates of the scalars allocated in P; false where another statement is
 * there, a name is read before `P` allocates it, or a host function is called.
 */
function scalarPart(stmts: Stmt[], locals: Set<string>, alloc: boolean, later: ReadonlySet<string>): boolean {
  for (const s of stmts) {
    switch (s.kind) {
      case 'alloc':
        if (!alloc || s.type?.kind !== 'scalar' || s.value.kind === 'emptystack' || locals.has(s.name)) return false
        if (callsHost(s.value) || [...readNames(s.value)].some((n) => later.has(n) && !locals.has(n))) return false
        locals.add(s.name)
        break
      case 'dealloc':
        if (alloc || s.type?.kind !== 'scalar' || s.value.kind === 'emptystack' || !locals.has(s.name)) return false
        if (callsHost(s.value)) return false
        break
      case 'update':
        if (s.target.kind !== 'var' || !locals.has(s.target.name) || callsHost(s.value)) return false
        if ([...readNames(s.value)].some((n) => later.has(n) && !locals.has(n))) return false
        break
      default:
        return false
    }
  }
  return true
}

/** The names `stmts` allocate. */
const allocated = (stmts: Stmt[]): Set<string> => new Set(stmts.flatMap((s) => (s.kind === 'alloc' ? [s.name] : [])))

/** Whether `s` is a loop of steps writing `A` (see the module comment; reads of `A` checked later). */
function stepsLoop(s: Stmt, A: string): Steps | undefined {
  if (s.kind !== 'for' || s.each) return undefined
  const step = intLiteral(s.step)
  if (step === undefined || step === 0 || Math.abs(step) > MAX_FACTOR) return undefined
  const first = s.body.findIndex((t) => updatesA(t, A))
  if (first < 0) return undefined
  let end = first
  while (end < s.body.length && updatesA(s.body[end]!, A)) end++
  const P = s.body.slice(0, first)
  const U = s.body.slice(first, end) as UpdateStmt[]
  const Q = s.body.slice(end)
  // (P or Q nonempty: a body of updates alone is finite-history's, or not a history at all)
  if (P.length + Q.length === 0) return undefined
  const locals = new Set<string>()
  const later = allocated(P)
  if (!scalarPart(P, locals, true, later) || !scalarPart(Q, locals, false, later)) return undefined
  // every scalar P allocates, Q deallocates (exactly once)
  const freed = Q.flatMap((t) => (t.kind === 'dealloc' ? [t.name] : []))
  if (freed.length !== locals.size || new Set(freed).size !== freed.length) return undefined
  if (locals.has(s.variable) || locals.has(A)) return undefined
  const v = s.variable
  let a: number | undefined
  let c: Poly | undefined
  const d: number[] = []
  for (const u of U) {
    if (u.op !== '+=' || (u.target.type !== 'f64' && u.target.type !== 'f32')) return undefined
    if (u.target.kind !== 'index' || callsHost(u.value) || callsHost(u.target.index)) return undefined
    const w = indexPolynomial(u.target.index)
    const av = w?.get(v)
    if (!w || av === undefined || !Number.isInteger(av) || av === 0 || Math.abs(av) > MAX_FACTOR) return undefined
    if ([...w.keys()].some((m) => m !== v && m.split('*').includes(v))) return undefined
    if ([...w.keys()].some((m) => m.split('*').some((n) => locals.has(n)))) return undefined
    const rest = addPoly(w, new Map([[v, av]]), -1)
    if (a === undefined) {
      a = av
      c = rest
      d.push(0)
    } else {
      const dj = constantDifference(rest, c!)
      if (av !== a || dj === undefined) return undefined
      d.push(dj)
    }
  }
  if (a === undefined || c === undefined || d.some((x) => Math.abs(x) >= MAX_OFFSET)) return undefined
  // (distinct updates write distinct elements in every iteration pair: no d_j − d_k is a multiple of a)
  for (let j = 0; j < d.length; j++)
    for (let k = j + 1; k < d.length; k++) if ((d[j]! - d[k]!) % a === 0) return undefined
  return { L: s, P, U, Q, locals, a, c, d }
}

/**
 * Whether `x` reads `A` only at elements of earlier iterations of `h`'s loop (or of none):
 * `A[a·v + c + δ]` with δ a literal such that, for every `j` with `a | δ − d_j`, the iteration
 * `v + (δ − d_j)/a` is earlier in the order the loop runs; and calls no host function.
 */
function readsEarlierOnly(x: Expr, A: string, h: Steps): boolean {
  if (callsHost(x)) return false
  const dir = direction(h.L)
  const base = addPoly(h.c, new Map([[h.L.variable, h.a]]))
  const earlier = (r: Poly): boolean => {
    const delta = constantDifference(r, base)
    if (delta === undefined || Math.abs(delta) >= MAX_OFFSET) return false
    for (const dj of h.d) {
      const q = delta - dj
      if (q % h.a !== 0) continue
      const D = q / h.a
      if (!(D * dir < 0)) return false
    }
    return true
  }
  let ok = true
  const visit = (e: Expr): void => {
    if (!ok) return
    switch (e.kind) {
      case 'var':
        if (e.name === A) ok = false
        return
      case 'index':
        if (e.array.name === A) {
          const r = indexPolynomial(e.index)
          if (!r || !earlier(r)) ok = false
          // (the index itself reads no element of A: checked below)
          if (ok) visit(e.index)
          return
        }
        visit(e.array)
        visit(e.index)
        return
      case 'field':
        visit(e.target)
        return
      case 'unary':
        visit(e.arg)
        return
      case 'binary':
        visit(e.left)
        visit(e.right)
        return
      case 'call':
        for (const y of e.args) visit(y)
        return
      case 'num':
      case 'bool':
        return
      default:
        // (a node this pass does not know: refuse)
        ok = false
    }
  }
  visit(x)
  return ok
}

/** The expressions that a loop of steps evaluates (P's and Q's values, the e_j, the targets' indices). */
function evaluated(h: Steps): Expr[] {
  const out: Expr[] = []
  for (const s of [...h.P, ...h.Q])
    if ((s.kind === 'alloc' || s.kind === 'dealloc' || s.kind === 'update') && s.value.kind !== 'emptystack')
      out.push(s.value)
  for (const u of h.U) {
    out.push(u.value)
    if (u.target.kind === 'index') out.push(u.target.index)
  }
  return out
}

/** Whether `M` is the inverse of `h`'s loop: the same range reversed, the same `P` and `Q`, `U` with `-=`. */
function inverseOf(M: Stmt, h: Steps): M is ForStmt {
  if (M.kind !== 'for' || M.body.length !== h.L.body.length || !reversed(M, h.L)) return false
  const p = h.P.length
  const m = h.U.length
  if (shape(M.body.slice(0, p)) !== shape(h.P)) return false
  if (shape(M.body.slice(p + m)) !== shape(h.Q)) return false
  const wanted = new Map(h.U.map((u) => [`${key(u.target as Expr)}\u0000${key(u.value)}`, u]))
  const seen = new Set<string>()
  for (const s of M.body.slice(p, p + m)) {
    if (s.kind !== 'update' || s.op !== '-=' || s.target.kind !== 'index') return false
    const k = `${key(s.target)}\u0000${key(s.value)}`
    const u = wanted.get(k)
    if (!u || seen.has(k) || u.target.type !== s.target.type) return false
    seen.add(k)
  }
  return seen.size === m
}

/** `[min w, max w]` over every iteration and update of `h`'s loop, as polynomials, or undefined. */
function writtenRange(h: Steps): { lo: Poly; hi: Poly } | undefined {
  const r = varRange(h.L)
  if (!r) return undefined
  const v = h.L.variable
  const w = addPoly(h.c, new Map([[v, h.a]]))
  const at = (x: Poly) => substitute(w, v, h.a, x)
  const lo = h.a > 0 ? at(r.lo) : at(r.hi)
  const hi = h.a > 0 ? at(r.hi) : at(r.lo)
  return {
    lo: addPoly(lo, new Map([['', Math.min(...h.d)]])),
    hi: addPoly(hi, new Map([['', Math.max(...h.d)]])),
  }
}

/** The block with the inverse loop of array ancilla `body[i]`'s loop of steps rewritten, or undefined. */
function rewriteArray(body: Stmt[], i: number, effectful: ReadonlySet<string>): Stmt[] | undefined {
  return rewriteArrayLoop(body, i, effectful, stepsLoop, rewriteSteps)
}

/** `body` with `h`'s inverse loop rewritten (see the module comment), or undefined. */
function rewriteSteps(
  body: Stmt[],
  i: number,
  k: number,
  h: Steps,
  pre: PreWrite[],
  effectful: ReadonlySet<string>,
): Stmt[] | undefined {
  const A = (body[i] as Extract<Stmt, { kind: 'alloc' }>).name
  const exprs = evaluated(h)
  if (!exprs.every((x) => readsEarlierOnly(x, A, h))) return undefined
  const v = h.L.variable
  // what the steps read, besides their own scalars and the loop variable, keeps its value up to M
  const kept = new Set<string>([A])
  for (const x of exprs) readNames(x, kept)
  for (const n of h.locals) kept.delete(n)
  kept.delete(v)
  for (let m = k + 1; m < body.length; m++) {
    const M = body[m]!
    if (inverseOf(M, h)) {
      // (nothing between writes memory an array that the steps read may share: see writesSharedArrays)
      const fresh = new Set(body.flatMap((t) => (t.kind === 'alloc' && t.type?.kind !== 'scalar' ? [t.name] : [])))
      if (writesSharedArrays(body.slice(k + 1, m), fresh)) return undefined
      // the names of the range, of w and of the earlier writes keep their values from the allocation to M
      const written = writtenNames(body.slice(i + 1, m), effectful)
      if (!written) return undefined
      // (L itself writes A, its scalars and v, checked by stepsLoop)
      written.delete(v)
      for (const n of h.locals) written.delete(n)
      const names = rangeNames(h.L, new Set())
      for (const n of atoms(h.c)) names.add(n)
      for (const p of pre) for (const n of p.names) names.add(n)
      names.delete(v)
      const resized = resizedNames(body.slice(i + 1, m))
      if ([...names].some((n) => atomChanges(n, written, resized))) return undefined
      if (pre.length) {
        const r = writtenRange(h)
        if (!r) return undefined
        for (const p of pre) {
          const above = constantDifference(p.lo, r.hi)
          const below = constantDifference(r.lo, p.hi)
          if (!((above !== undefined && above > 0) || (below !== undefined && below > 0))) return undefined
        }
      }
      const updates = M.body.slice(h.P.length, h.P.length + h.U.length) as UpdateStmt[]
      const selfUpdates = updates.map((u): UpdateStmt => {
        const target = u.target as Extract<Expr, { kind: 'index' }>
        const { distinct: _distinct, ...rest } = u
        return {
          ...rest,
          value: {
            ...structuredClone(target),
            type: (target.type ?? 'f64') as ScalarTypeName,
            ...(u.value.loc ? { loc: u.value.loc } : {}),
          },
        }
      })
      const Mnew: ForStmt = { ...M, body: selfUpdates }
      return [...body.slice(0, m), Mnew, ...body.slice(m + 1)]
    }
    const w = writtenNames([M], effectful)
    if (w === undefined || [...w].some((n) => kept.has(n))) return undefined
    // (a local's name written between: not the steps' own, but refuse rather than reason about scopes)
    if ([...w].some((n) => h.locals.has(n))) return undefined
  }
  return undefined
}
