/**
 * `finite-history` — with run-time checks on: `finite-uncompute` for history arrays. A loop whose
 * body is one update `A[w] += e` into an f64 or f32 `zeros` array ancilla `A`, each iteration
 * writing an element no other iteration writes, and its exact inverse later in the same block
 * (`for v in reverse …` the same range, body `A[w] -= e`): the inverse's update becomes
 * `A[w] -= A[w]`, so the uncompute no longer evaluates `e` again (a Horner step, a stencil row,
 * a running maximum).
 *
 * The shape, in one block (`L` the loop, `M` its inverse):
 *
 * ```
 * A <- zeros(n)               (f64 or f32 elements)
 * …                           (writes A only by updates A[p] op= …, or loops of one such update
 *                              with p = ±i + c, all outside what L writes)
 * L: for v in R { A[w] += e }
 * …                           (writes neither A nor anything e reads, nor any array parameter;
 *                              no host effect)
 * M: for v in reverse R { A[w] -= e }
 * ```
 *
 * where `w = a·v + c` with `a = ±1` (a literal coefficient) and `c` an integer polynomial of
 * names nothing from the allocation to `M` writes (`len(x)` allowed); `R` has a literal step and
 * reads nothing written from the allocation to `M`; `e` calls no host function, and reads `A`
 * only as `A[w + d]` with `d` a nonzero literal constant such that the element is that of an
 * EARLIER iteration of `L` (or of no iteration at all): `d·a` has the sign opposite to the
 * direction in which `L` runs (`sign(step)`, flipped for a `reverse` loop).
 *
 * Or a nest of two loops, `for u in R1 { for v in R2 { A[w] += e } }` and its inverse (both ranges
 * reversed), R2 not reading u, with `w = s·u + a·v + c` (`s`, `c` free of u and v, `a = ±1`)
 * where `K = s − (hi₂ − lo₂)` is a constant ≥ 1 (hi₂, lo₂ the bounds of v): the rows do not
 * overlap. Two iterations then write distinct elements (`s·(u − u′) = a·(v′ − v)` with
 * `|v′ − v| ≤ hi₂ − lo₂ < s` forces u = u′, v = v′; and s ≥ 1 wherever R2 is not empty). A read
 * `A[w + D·s + d]` (`D`, `d` constants, `|d| < K`) can only be the element of iteration
 * `(u + D, v + a·d)` (the same argument, `|v + a·d − v′| < s`), which must be earlier in the order
 * the nest runs: `D` against u's direction, or `D = 0` and `a·d` against v's.
 *
 * Why `A[w] -= A[w]` computes the same bits as `A[w] -= e` (the reference interpreter's), by
 * induction over `M`'s iterations (the iterations of `L` in reverse order):
 *
 * 1. Each element `L` writes is zero (+0) when `L` writes it: `A` starts as zeros, the updates
 *    before `L` write other elements (their index `p` is proved outside `[min w, max w]` over
 *    `R`: a constant difference), and `w` is injective (`a = ±1`, even with i32 wrap-around), so
 *    no earlier iteration wrote it. So after iteration `i`, `A[w_i]` holds `0 + e_i`: `e_i`
 *    itself, or +0 for `e_i = −0` (for f32, `e_i` is already a float32 value).
 * 2. When `M` runs iteration `i`, the elements that `e_i` reads hold what they held when `L` ran
 *    iteration `i`: an element of `A` that `e` reads belongs to an iteration before `i` (not yet
 *    uncomputed: `M` runs later iterations first, and each writes only its own element) or to no
 *    iteration (nothing in `L`, between, or `M` writes it); nothing between writes the other
 *    names `e` reads (its indices included), and the loop variable has the same value. So `M`'s
 *    `e_i` is `e_i`, bit for bit — and every check inside `e` (its bounds checks, conversions)
 *    passed on the same values in `L`, so none can fail in `M` either; an alias check (`distinct`)
 *    between `A[w]` and a read compares the same indices as `L`'s did.
 * 3. So the reference computes `(0 + e_i) − e_i`, which is +0 for a finite `e_i` and NaN
 *    otherwise, and `A[w] − A[w]` is the same: +0 or NaN (exact, so float32 rounding changes
 *    nothing). Only NaN payloads may differ, which no Tenet operation tells apart.
 *
 * With every value of `A` the same after `M` (and nothing else changed), every later check — the
 * deallocation check `A -> zeros(n)` first among them — sees the same values: it fails exactly
 * when some `e_i` was not finite, with the same code, message and location. `M`'s loop, its
 * range, and the bounds check of its target stay as they were, so a check that fires in `M`
 * without the pass (none can, by 2.) would still be evaluated in the same place.
 *
 * Nothing between `L` and `M` writes an array other than the block's own ancillas: through the
 * unchecked `.core` entry two array parameters may share memory (the aliasing rule is checked at
 * the other entries only), and a write to one could change what `e` reads from the other, which
 * the reference's recomputation (and the deallocation check after it) would see.
 *
 * Reads of elements of LATER iterations are refused: in the reference they see the values `M`
 * already left there (+0, or NaN where that iteration's value was not finite), not the zero `L`
 * saw, so `e` may differ from the forward's. With checks off, `dead-ancillas` drops such
 * uncomputes altogether.
 */
import type { Expr, ForStmt, FunctionDef, ScalarTypeName, Stmt, UpdateStmt } from '../ast.js'
import { readNames, rootName, walk } from '../check.js'
import { key } from '../cse.js'
import { indexPolynomial } from './first-writes.js'
import { atomChanges, resizedNames, writtenNames } from './hoist-invariants.js'
import { callsHost } from './insert-checks.js'
import { addPoly, constantDifference, intLiteral, type Poly } from './interchange.js'
import { mapInnerBlocks } from './rewrite.js'

/**
 * `f` with the inverse loop of every history loop that repeats its computation from zero
 * written `A[w] -= A[w]` (see the module comment). `effectful`: the functions with a host effect.
 */
export function finiteHistory(f: FunctionDef, effectful: ReadonlySet<string> = new Set()): FunctionDef {
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

/**
 * A history loop: the loop (`outer`, around `inner` for a nest of two; `inner` itself for one),
 * its update, the inner variable's coefficient `a` in the written index `w`, and for a nest the
 * stride `s` (w = s·u + a·v + c) and `K = s − span` (span: the inner variable's range, hi − lo).
 */
export interface History {
  outer: ForStmt
  inner: ForStmt
  update: UpdateStmt
  w: Poly
  a: number
  s?: Poly
  K?: number
}

const ONE = (c: number): Poly => (c === 0 ? new Map() : new Map([['', c]]))

const constDiff = constantDifference

/** The names of a polynomial's atoms (`len(x)` stands for itself). */
export const atoms = (p: Poly): string[] => [...p.keys()].flatMap((m) => (m ? m.split('*') : []))

/** `w` with the loop variable `v` (coefficient `a`, in a monomial of its own) replaced by `x`. */
export const substitute = (w: Poly, v: string, a: number, x: Poly): Poly =>
  addPoly(addPoly(w, new Map([[v, a]]), -1), x, a)

const monomial = (a: string, b: string): string =>
  [...(a ? a.split('*') : []), ...(b ? b.split('*') : [])].sort().join('*')

function mulPoly(p: Poly, q: Poly): Poly {
  let out: Poly = new Map()
  for (const [a, x] of p) for (const [b, y] of q) out = addPoly(out, new Map([[monomial(a, b), x * y]]))
  return out
}

/** The range `[lo, hi]` of a loop's variable (a literal step), as polynomials, or undefined. */
export function varRange(L: ForStmt): { lo: Poly; hi: Poly } | undefined {
  const step = intLiteral(L.step)
  if (step === undefined || step === 0) return undefined
  const start = indexPolynomial(L.start)
  const stop = indexPolynomial(L.stop)
  if (!start || !stop) return undefined
  const last = L.inclusive ? stop : addPoly(stop, ONE(step > 0 ? -1 : 1))
  return step > 0 ? { lo: start, hi: last } : { lo: last, hi: start }
}

/** The direction in which a loop runs through its values: +1 upwards, −1 downwards (a literal step). */
export const direction = (L: ForStmt): number => Math.sign(intLiteral(L.step)!) * (L.reverse ? -1 : 1)

/** The names a loop's range reads, added to `out`. */
export const rangeNames = (L: ForStmt, out: Set<string>): Set<string> => {
  for (const x of [L.start, L.stop, ...(L.step ? [L.step] : [])]) readNames(x, out)
  return out
}

/**
 * `w` split as `s·u + a·v + c` (`s` and `c` free of `u` and `v`, `a = ±1`), or undefined; `u`
 * undefined for a single loop (then `s` is empty).
 */
export function split(w: Poly, v: string, u: string | undefined): { a: number; s: Poly } | undefined {
  const a = w.get(v)
  if (a !== 1 && a !== -1) return undefined
  const s: Poly = new Map()
  for (const [m, c] of w) {
    const names = m ? m.split('*') : []
    if (m === v) continue
    if (names.includes(v)) return undefined
    if (u === undefined || !names.includes(u)) continue
    if (names.filter((n) => n === u).length !== 1) return undefined
    s.set(names.filter((n) => n !== u).join('*'), c)
  }
  return { a, s }
}

/**
 * Whether `s` is a loop `for v in R { A[w] += e }`, or a nest `for u in R1 { for v in R2 { A[w] +=
 * e } }` (R2 not reading u), of the shape the module comment describes (`e` checked later).
 */
function historyLoop(s: Stmt, A: string): History | undefined {
  if (s.kind !== 'for' || s.each || s.body.length !== 1) return undefined
  if (intLiteral(s.step) === undefined || intLiteral(s.step) === 0) return undefined
  // (a nest's outer loop steps by ±1: its rows then advance by the stride s, below 2³¹ (see
  // \`constDiff\`), so an index that wraps goes through a negative one, whose bounds check fails)
  if (s.body[0]?.kind === 'for' && Math.abs(intLiteral(s.step)!) !== 1) return undefined
  const outer = s
  let inner = s
  const nested = s.body[0]!.kind === 'for'
  if (nested) {
    inner = s.body[0] as ForStmt
    if (inner.each || inner.body.length !== 1 || intLiteral(inner.step) === undefined || intLiteral(inner.step) === 0)
      return undefined
    if (rangeNames(inner, new Set()).has(outer.variable) || inner.variable === outer.variable) return undefined
  }
  const u = inner.body[0]!
  if (u.kind !== 'update' || u.op !== '+=' || u.target.kind !== 'index' || u.target.array.name !== A) return undefined
  if (u.target.type !== 'f64' && u.target.type !== 'f32') return undefined
  const w = indexPolynomial(u.target.index)
  if (!w) return undefined
  const parts = split(w, inner.variable, nested ? outer.variable : undefined)
  if (!parts) return undefined
  if (!nested) return { outer, inner, update: u, w, a: parts.a }
  // (distinct iterations write distinct elements: K = s − span ≥ 1, see the module comment)
  const r = varRange(inner)
  if (!r || parts.s.size === 0) return undefined
  const K = constDiff(parts.s, addPoly(r.hi, r.lo, -1))
  if (K === undefined || K < 1) return undefined
  return { outer, inner, update: u, w, a: parts.a, s: parts.s, K }
}

/**
 * Whether `e` reads `A` only at elements of earlier iterations (or of none): `A[w + D·s + d]`
 * with `D`, `d` constants (`D = 0` for a single loop; `|d| < K` for a nest) naming iteration
 * `(u + D, v + a·d)`, earlier in the order the loops run; and calls no host function.
 */
function readsEarlierOnly(e: Expr, A: string, h: History): boolean {
  if (callsHost(e)) return false
  const dir1 = direction(h.outer)
  const dir2 = direction(h.inner)
  const earlier = (r: Poly): boolean => {
    const diff = addPoly(r, h.w, -1)
    for (const D of h.s ? [0, -1, 1, -2, 2, -3, 3] : [0]) {
      const d = constDiff(h.s ? addPoly(diff, h.s, -D) : diff, new Map())
      if (d === undefined || (h.K !== undefined && Math.abs(d) >= h.K)) continue
      if (D !== 0) return D * dir1 < 0
      return d !== 0 && d * h.a * dir2 < 0
    }
    return false
  }
  return readsElementsOnly(
    e,
    (name) => name !== A,
    (x) => {
      if (x.array.name !== A) return undefined
      const r = indexPolynomial(x.index)
      return r !== undefined && earlier(r)
    },
  )
}

/** Whether loop `M` runs the values of loop `L` in reverse order (same range). */
export const reversed = (M: ForStmt, L: ForStmt): boolean =>
  !M.each &&
  M.variable === L.variable &&
  !!M.reverse !== !!L.reverse &&
  M.inclusive === L.inclusive &&
  key(M.start) === key(L.start) &&
  key(M.stop) === key(L.stop) &&
  (M.step === null) === (L.step === null) &&
  (!M.step || !L.step || key(M.step) === key(L.step))

/** Whether `M` is the inverse of `h`'s loop (or nest): the same ranges reversed, body `A[w] -= e`. */
function inverseOf(M: Stmt, h: History): M is ForStmt {
  if (M.kind !== 'for' || M.body.length !== 1 || !reversed(M, h.outer)) return false
  let inner: Stmt = M
  if (h.inner !== h.outer) {
    inner = M.body[0]!
    if (inner.kind !== 'for' || inner.body.length !== 1 || !reversed(inner, h.inner)) return false
  }
  const u = (inner as ForStmt).body[0]!
  return (
    u.kind === 'update' &&
    u.op === '-=' &&
    u.target.kind === 'index' &&
    key(u.target) === key(h.update.target as Expr) &&
    key(u.value) === key(h.update.value)
  )
}

/** `[min w, max w]` over the iterations of `h`'s loop (or nest), as polynomials, or undefined. */
export function writtenRange(h: History): { lo: Poly; hi: Poly } | undefined {
  const r2 = varRange(h.inner)
  if (!r2) return undefined
  const v = h.inner.variable
  const at = (w: Poly, x: Poly) => substitute(w, v, h.a, x)
  const lo = h.a > 0 ? at(h.w, r2.lo) : at(h.w, r2.hi)
  const hi = h.a > 0 ? at(h.w, r2.hi) : at(h.w, r2.lo)
  if (!h.s) return { lo, hi }
  // (s ≥ 1 wherever the inner loop runs: s = K + span, span ≥ 0)
  const r1 = varRange(h.outer)
  if (!r1) return undefined
  const u = h.outer.variable
  const atU = (p: Poly, x: Poly) => addPoly(addPoly(p, mulPoly(h.s!, new Map([[u, 1]])), -1), mulPoly(h.s!, x))
  return { lo: atU(lo, r1.lo), hi: atU(hi, r1.hi) }
}

/**
 * A write of `A` before the history loop: one update `A[p] op= …`, or a loop of one such update
 * (p = ±i + c): the range `[lo, hi]` of what it writes and the names that range depends on; or
 * undefined.
 */
export function preWrite(s: Stmt, A: string): PreWrite | undefined {
  if (s.kind === 'update') {
    if (s.target.kind !== 'index' || s.target.array.name !== A) return undefined
    const p = indexPolynomial(s.target.index)
    return p && { lo: p, hi: p, names: new Set(atoms(p)) }
  }
  if (s.kind !== 'for' || s.each || s.body.length !== 1) return undefined
  const u = s.body[0]!
  if (u.kind !== 'update' || u.target.kind !== 'index' || u.target.array.name !== A) return undefined
  const p = indexPolynomial(u.target.index)
  const r = varRange(s)
  if (!p || !r) return undefined
  const parts = split(p, s.variable, undefined)
  if (!parts) return undefined
  const at = (x: Poly) => substitute(p, s.variable, parts.a, x)
  const names = rangeNames(s, new Set(atoms(p)))
  names.delete(s.variable)
  return parts.a > 0 ? { lo: at(r.lo), hi: at(r.hi), names } : { lo: at(r.hi), hi: at(r.lo), names }
}

/**
 * Whether \`a\` (an update's target or a call's argument) is a view of an array's memory: an
 * element, a whole array, or such a view negated (\`-B[i]\`) or one of its fields; a call may
 * write through any of them.
 */
export function arrayView(a: Stmt | Expr | Extract<Stmt, { kind: 'callstmt' }>['args'][number]): boolean {
  switch (a.kind) {
    case 'index':
      return true
    case 'var':
      return typeof a.type === 'object' && a.type.kind !== 'scalar'
    case 'field':
    case 'neg':
      return arrayView(a.target)
    default:
      return false
  }
}

/**
 * Whether the statements may write an array other than the ancillas `fresh` (or allocated among
 * them): memory that an array `e` reads may share through the unchecked `.core` entry, where the
 * aliasing rule is not enforced (a write to `out` there may change `c`).
 */
export function writesSharedArrays(stmts: Stmt[], fresh: ReadonlySet<string>): boolean {
  const local = new Set(fresh)
  walk(stmts, (s) => {
    if (s.kind === 'alloc' && s.type?.kind !== 'scalar') local.add(s.name)
  })
  let shared = false
  walk(stmts, (s) => {
    if (s.kind === 'update') shared ||= arrayView(s.target) && !local.has(rootName(s.target) ?? '')
    else if (s.kind === 'callstmt') shared ||= s.args.some((a) => arrayView(a) && !local.has(rootName(a) ?? ''))
    else if (s.kind === 'push' || s.kind === 'pop') shared = true
  })
  return shared
}

/** The block with the inverse loop of array ancilla `body[i]`'s history loop rewritten, or undefined. */
function rewriteArray(body: Stmt[], i: number, effectful: ReadonlySet<string>): Stmt[] | undefined {
  return rewriteArrayLoop(body, i, effectful, historyLoop, rewriteHistory)
}

/** Where a statement before the loop writes the array: the range of its elements, the names it reads. */
export type PreWrite = { lo: Poly; hi: Poly; names: Set<string> }

/**
 * The block with a loop of `zeros` array ancilla `body[i]` (f64 or f32) rewritten by `rewrite`, or
 * undefined: the statements after the allocation are scanned in order; a loop that `find`
 * recognises is offered to `rewrite` with the writes of the array before it (\`preWrite\`); a
 * statement whose writes are unknown, or a write of the array whose elements are not known, ends
 * the scan. Shared by \`finite-history\` and \`finite-steps\`, which differ in the loops they find.
 */
export function rewriteArrayLoop<H>(
  body: Stmt[],
  i: number,
  effectful: ReadonlySet<string>,
  find: (s: Stmt, A: string) => H | undefined,
  rewrite: (
    body: Stmt[],
    i: number,
    k: number,
    h: H,
    pre: PreWrite[],
    effectful: ReadonlySet<string>,
  ) => Stmt[] | undefined,
): Stmt[] | undefined {
  const alloc = body[i]!
  if (
    alloc.kind !== 'alloc' ||
    alloc.type?.kind !== 'array' ||
    (alloc.type.elem !== 'f64' && alloc.type.elem !== 'f32') ||
    alloc.value.kind !== 'call' ||
    alloc.value.callee !== 'zeros'
  )
    return undefined
  const A = alloc.name
  const pre: PreWrite[] = []
  for (let k = i + 1; k < body.length; k++) {
    const s = body[k]!
    const h = find(s, A)
    if (h) {
      const done = rewrite(body, i, k, h, pre, effectful)
      if (done) return done
    }
    const w = writtenNames([s], effectful)
    if (w === undefined) return undefined
    if (!w.has(A)) continue
    // a write of A before the loop (a loop left as it is, too): where, checked later
    const p = preWrite(s, A)
    if (!p) return undefined
    pre.push(p)
  }
  return undefined
}

/** `body` with `h`'s inverse loop rewritten (see the module comment), or undefined. */
function rewriteHistory(
  body: Stmt[],
  i: number,
  k: number,
  h: History,
  pre: PreWrite[],
  effectful: ReadonlySet<string>,
): Stmt[] | undefined {
  const A = (body[i] as Extract<Stmt, { kind: 'alloc' }>).name
  const e = h.update.value
  if (!readsEarlierOnly(e, A, h)) return undefined
  const vars = new Set([h.outer.variable, h.inner.variable])
  const kept = new Set([A, ...readNames(e)])
  for (const v of vars) kept.delete(v)
  for (let m = k + 1; m < body.length; m++) {
    const M = body[m]!
    if (inverseOf(M, h)) {
      // (nothing between writes memory an array that e reads may share: see writesSharedArrays)
      const fresh = new Set(body.flatMap((t) => (t.kind === 'alloc' && t.type?.kind !== 'scalar' ? [t.name] : [])))
      if (writesSharedArrays(body.slice(k + 1, m), fresh)) return undefined
      // the names of the ranges, of w and of the earlier writes keep their values from the allocation to M
      const written = writtenNames(body.slice(i + 1, m), effectful)
      if (!written) return undefined
      for (const v of vars) written.delete(v)
      const names = rangeNames(h.outer, rangeNames(h.inner, new Set()))
      for (const n of atoms(h.w)) names.add(n)
      for (const p of pre) for (const n of p.names) names.add(n)
      for (const v of vars) names.delete(v)
      const resized = resizedNames(body.slice(i + 1, m))
      if ([...names].some((n) => atomChanges(n, written, resized))) return undefined
      if (pre.length) {
        const r = writtenRange(h)
        if (!r) return undefined
        for (const p of pre) {
          const above = constDiff(p.lo, r.hi)
          const below = constDiff(r.lo, p.hi)
          if (!((above !== undefined && above > 0) || (below !== undefined && below > 0))) return undefined
        }
      }
      const innerM = h.inner === h.outer ? M : (M.body[0] as ForStmt)
      const u = innerM.body[0] as UpdateStmt
      const target = u.target as Extract<Expr, { kind: 'index' }>
      const { distinct: _distinct, ...rest } = u
      const self: UpdateStmt = {
        ...rest,
        value: {
          ...structuredClone(target),
          type: (target.type ?? 'f64') as ScalarTypeName,
          ...(u.value.loc ? { loc: u.value.loc } : {}),
        },
      }
      const innerNew: ForStmt = { ...innerM, body: [self] }
      const Mnew: ForStmt = h.inner === h.outer ? innerNew : { ...M, body: [innerNew] }
      return [...body.slice(0, m), Mnew, ...body.slice(m + 1)]
    }
    const w = writtenNames([M], effectful)
    if (w === undefined || [...w].some((n) => kept.has(n))) return undefined
  }
  return undefined
}

/**
 * Whether expression \`e\` reads only what its two tests allow: \`name\` for each whole variable it
 * reads, \`element\` for each element read (true or false: its verdict; undefined: an element of
 * another array, whose array and index are then read like any expression). A node kind the
 * walk does not know is refused.
 */
export function readsElementsOnly(
  e: Expr,
  name: (n: string) => boolean,
  element: (x: Extract<Expr, { kind: 'index' }>) => boolean | undefined,
): boolean {
  let ok = true
  const visit = (x: Expr): void => {
    if (!ok) return
    switch (x.kind) {
      case 'var':
        if (!name(x.name)) ok = false
        return
      case 'index': {
        const v = element(x)
        if (v !== undefined) {
          if (!v) ok = false
          return
        }
        visit(x.array)
        visit(x.index)
        return
      }
      case 'field':
        visit(x.target)
        return
      case 'unary':
        visit(x.arg)
        return
      case 'binary':
        visit(x.left)
        visit(x.right)
        return
      case 'call':
        for (const y of x.args) visit(y)
        return
      case 'num':
      case 'bool':
        return
      default:
        // (a node this walk does not know: refuse)
        ok = false
    }
  }
  visit(e)
  return ok
}
