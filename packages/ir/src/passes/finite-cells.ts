/**
 * `finite-cells` — with run-time checks on: `finite-history` for a loop whose iterations compute
 * the history's value in cells of their own first. A loop (or a nest of two) whose body computes,
 * into elements of other `zeros` array ancillas that belong to the iteration alone (its *cells*:
 * an RNN's pre-activation `pre[t·H + i]`, accumulated over inner loops), the argument of the
 * body's LAST statement `A[w] += e`, a history update into an f64 or f32 `zeros` array ancilla
 * `A` (`hs[(t + 1)·H + i] += tanh(pre[t·H + i])`); and later in the same block a loop over the
 * same ranges reversed whose body starts with `A[w] -= e` (the `~routine` of such a loop starts
 * each iteration with the inverse of the last statement). That first statement becomes
 * `A[w] -= A[w]`: the uncompute no longer evaluates `e` (a `tanh`, `exp`, a division) again. The
 * rest of the inverse's body (the cells' own uncompute) stays as it is, with its checks.
 *
 * The shape, in one block (`L` the loop, `M` the later loop):
 *
 * ```
 * A <- zeros(n)                (f64 or f32 elements; the cell arrays B are zeros ancillas too)
 * …                            (writes A only by updates A[p] op= …, or loops of one such update
 *                               with p = ±i + c, all outside what L writes)
 * L: for v in R { S…; A[w] += e }                    (or for u in R1 { for v in R2 { S…; A[w] += e } })
 * …                            (writes neither A nor anything e reads, nor any array parameter;
 *                               no host effect)
 * M: for v in reverse R { A[w] -= e; T… }            (the nest: both ranges reversed)
 * ```
 *
 * `w`, the ranges and the earlier writes of A are as in `finite-history` (`w = s·u + a·v + c`,
 * `a = ±1`, rows apart: `K = s − (hi₂ − lo₂)` a constant ≥ 1; a nest's outer step ±1). `S` (in
 * `L`) and `T` (in `M`) write no element of `A`, and write arrays only by updates of elements of
 * array ancillas of the block, each array `B` at one index `p_B` in all of `S` and `T` that has
 * the same form as `w` (`s_B·u + a_B·v + c_B`, `a_B = ±1`, `K_B ≥ 1`): the cell of the iteration,
 * which no other iteration writes. `e` calls no host function and reads: `A` only at elements of
 * EARLIER iterations (as in `finite-history`); a cell array `B` only at the cell of the same
 * iteration or of an earlier one (`p_B + D·s_B + d`, `|d| < K_B`); other names only where nothing
 * from the allocation to `M` (`L`, `M` included) writes them. `S`, `T` and `e` call no host
 * function; the names of the ranges, of `w`, of the `p_B` and of the earlier writes keep their
 * values from the allocation to `M`.
 *
 * Why `A[w] -= A[w]` computes the same bits as `A[w] -= e` (the reference interpreter's), for
 * every iteration `i` of `M`:
 *
 * 1. Each element `L` writes is +0 when `L` writes it (`finite-history`, 1.: `S` and `T` do not
 *    write `A`), so after iteration `i` of `L`, `A[w_i]` holds `0 + e_i`.
 * 2. When `M` starts iteration `i`, every value `e_i` reads holds what it held at the end of
 *    iteration `i` of `L`, where `L` evaluated `e_i` (the last statement): names nothing writes;
 *    elements of `A` of earlier iterations (`M` has run only later iterations, each writing only
 *    its own element of `A`); cells of `B` of iteration `i` or earlier (`L`'s later iterations and
 *    `M`'s iterations so far write only their own cells — one index per array, distinct
 *    iterations distinct cells, the argument of `finite-history`, 1. — nothing between writes
 *    `B`, and `M`'s iteration `i` has not yet run `T`). So `M`'s `e_i` is `L`'s, bit for bit, and
 *    every check inside `e` (bounds checks, conversions) passed on the same values in `L`.
 * 3. So the reference computes `(0 + e_i) − e_i`, +0 for a finite `e_i` and NaN otherwise, and
 *    `A[w] − A[w]` is the same (for f32, `e_i` is already a float32 value). Every value is then
 *    the reference's, so `T` and every later check (the deallocation checks of `B` and `A`) see
 *    the same values, in the same order, and fail exactly where they did.
 *
 * Cells are ancillas of the block (not parameters, which may share memory with what `e` reads
 * through the unchecked `.core` entry). With checks off, `dead-ancillas` drops such uncomputes.
 */
import type { Expr, ForStmt, FunctionDef, ScalarTypeName, Stmt, UpdateStmt } from '../ast.js'
import { readNames, rootName, walk } from '../check.js'
import { key } from '../cse.js'
import { stmtExprs } from '../stmt-exprs.js'
import {
  atoms,
  arrayView,
  direction,
  type History,
  type PreWrite,
  rangeNames,
  readsElementsOnly,
  reversed,
  rewriteArrayLoop,
  split,
  varRange,
  writesSharedArrays,
  writtenRange,
} from './finite-history.js'
import { indexPolynomial } from './first-writes.js'
import { atomChanges, resizedNames, writtenNames } from './hoist-invariants.js'
import { callsHost } from './insert-checks.js'
import { addPoly, constantDifference, intLiteral, type Poly } from './interchange.js'
import { mapInnerBlocks } from './rewrite.js'

/**
 * `f` with the first statement `A[w] -= e` of the inverse of every loop that computes cells and
 * then a history element from them written `A[w] -= A[w]` (see the module comment). `effectful`:
 * the functions with a host effect.
 */
export function finiteCells(f: FunctionDef, effectful: ReadonlySet<string> = new Set()): FunctionDef {
  let changed = false
  const block = (body: Stmt[]): Stmt[] => {
    let out = mapInnerBlocks(body, block)
    for (let a = 0; a < out.length; a++) {
      const next = rewriteArrayLoop(out, a, effectful, cellsLoop, rewriteCells)
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

/** Where an index lies in a loop (or nest): `p = s·u + a·v + c`, rows apart by `K ≥ 1` for a nest. */
interface Shape {
  p: Poly
  a: number
  s?: Poly
  K?: number
}

/** `p` as an element of one iteration of `outer`/`inner` alone (see `finite-history`), or undefined. */
function shapeOf(p: Poly, outer: ForStmt, inner: ForStmt): Shape | undefined {
  const nested = outer !== inner
  const parts = split(p, inner.variable, nested ? outer.variable : undefined)
  if (!parts) return undefined
  if (!nested) return { p, a: parts.a }
  const r = varRange(inner)
  if (!r || parts.s.size === 0) return undefined
  const K = constantDifference(parts.s, addPoly(r.hi, r.lo, -1))
  if (K === undefined || K < 1) return undefined
  return { p, a: parts.a, s: parts.s, K }
}

/**
 * Whether index `r` is the element (at `shape`) of an earlier iteration of `outer`/`inner` than
 * the one running (`current`: or of this one), as `finite-history` decides it.
 */
function earlierElement(r: Poly, shape: Shape, outer: ForStmt, inner: ForStmt, current: boolean): boolean {
  const diff = addPoly(r, shape.p, -1)
  for (const D of shape.s ? [0, -1, 1, -2, 2, -3, 3] : [0]) {
    const d = constantDifference(shape.s ? addPoly(diff, shape.s, -D) : diff, new Map())
    if (d === undefined || (shape.K !== undefined && Math.abs(d) >= shape.K)) continue
    if (D !== 0) return D * direction(outer) < 0
    return d === 0 ? current : d * shape.a * direction(inner) < 0
  }
  return false
}

/** A loop of cells: its history (the last statement's update) and the statements before it. */
interface CellLoop {
  h: History
  steps: Stmt[]
}

/** Whether `s` is a loop (or nest of two) `… { S…; A[w] += e }` of the module comment's shape. */
function cellsLoop(s: Stmt, A: string): CellLoop | undefined {
  if (s.kind !== 'for' || s.each) return undefined
  const step = intLiteral(s.step)
  if (step === undefined || step === 0) return undefined
  const outer = s
  let inner = s
  if (s.body.length === 1 && s.body[0]!.kind === 'for') {
    // (a nest's outer loop steps by ±1, as in `finite-history`)
    if (Math.abs(step) !== 1) return undefined
    inner = s.body[0] as ForStmt
    const step2 = intLiteral(inner.step)
    if (inner.each || step2 === undefined || step2 === 0) return undefined
    if (rangeNames(inner, new Set()).has(outer.variable) || inner.variable === outer.variable) return undefined
  }
  // (a body of the update alone is `finite-history`'s)
  if (inner.body.length < 2) return undefined
  const u = inner.body[inner.body.length - 1]!
  if (u.kind !== 'update' || u.op !== '+=' || u.target.kind !== 'index' || u.target.array.name !== A) return undefined
  if (u.target.type !== 'f64' && u.target.type !== 'f32') return undefined
  const w = indexPolynomial(u.target.index)
  const shape = w && shapeOf(w, outer, inner)
  if (!shape) return undefined
  return {
    h: { outer, inner, update: u, w: shape.p, a: shape.a, s: shape.s, K: shape.K },
    steps: inner.body.slice(0, -1),
  }
}

/** `M`'s inner body when `M` runs `h`'s loop (or nest) reversed and starts with `A[w] -= e`, else undefined. */
function inverseBody(M: Stmt, h: History): Stmt[] | undefined {
  if (M.kind !== 'for' || !reversed(M, h.outer)) return undefined
  let inner: ForStmt = M
  if (h.inner !== h.outer) {
    const x = M.body[0]
    if (M.body.length !== 1 || x?.kind !== 'for' || !reversed(x, h.inner)) return undefined
    inner = x
  }
  const u = inner.body[0]
  if (
    u?.kind !== 'update' ||
    u.op !== '-=' ||
    u.target.kind !== 'index' ||
    key(u.target) !== key(h.update.target as Expr) ||
    key(u.value) !== key(h.update.value)
  )
    return undefined
  return inner.body
}

/**
 * The cells `stmts` write — per array, the one index at which they write it — or undefined where
 * they write `A`, an array other than the ancillas `fresh`, an element at two different indices,
 * an array through a call, or call a host function.
 */
function cellWrites(stmts: Stmt[], A: string, fresh: ReadonlySet<string>, cells: Map<string, Poly>): boolean {
  let ok = true
  walk(stmts, (x) => {
    if (!ok) return
    if (stmtExprs(x).some((e) => callsHost(e))) ok = false
    else if (x.kind === 'update') {
      if (x.target.kind === 'var') return
      const B = rootName(x.target)
      if (x.target.kind !== 'index' || B === undefined || B === A || !fresh.has(B)) {
        ok = false
        return
      }
      const p = indexPolynomial(x.target.index)
      const q = cells.get(B)
      if (!p || (q && constantDifference(p, q) !== 0)) ok = false
      else cells.set(B, p)
    } else if (x.kind === 'callstmt') {
      // (a call writes arrays it is passed, through any view: not a cell this pass follows)
      ok &&= x.args.every((a) => !arrayView(a))
    } else if (x.kind === 'push' || x.kind === 'pop' || x.kind === 'safe') ok = false
  })
  return ok
}

/**
 * Whether `e` reads `A` only at elements of earlier iterations, each cell array only at the cell
 * of this iteration or of an earlier one, and calls no host function.
 */
function readsOwnCells(e: Expr, A: string, h: History, cells: ReadonlyMap<string, Shape>): boolean {
  if (callsHost(e)) return false
  const own: Shape = { p: h.w, a: h.a, s: h.s, K: h.K }
  return readsElementsOnly(
    e,
    (name) => name !== A && !cells.has(name),
    (x) => {
      const shape = x.array.name === A ? own : cells.get(x.array.name)
      if (!shape) return undefined
      const r = indexPolynomial(x.index)
      return r !== undefined && earlierElement(r, shape, h.outer, h.inner, x.array.name !== A)
    },
  )
}

/** `body` with the first statement of `c`'s inverse loop rewritten (see the module comment), or undefined. */
function rewriteCells(
  body: Stmt[],
  i: number,
  k: number,
  c: CellLoop,
  pre: PreWrite[],
  effectful: ReadonlySet<string>,
): Stmt[] | undefined {
  const A = (body[i] as Extract<Stmt, { kind: 'alloc' }>).name
  const { h } = c
  const e = h.update.value
  const vars = new Set([h.outer.variable, h.inner.variable])
  const kept = new Set([A, ...readNames(e)])
  for (const v of vars) kept.delete(v)
  for (let m = k + 1; m < body.length; m++) {
    const M = body[m]!
    const rest = inverseBody(M, h)
    if (rest) {
      const fresh = new Set(body.flatMap((t) => (t.kind === 'alloc' && t.type?.kind !== 'scalar' ? [t.name] : [])))
      // (nothing between writes memory an array that e reads may share: see writesSharedArrays)
      if (writesSharedArrays(body.slice(k + 1, m), fresh)) return undefined
      // the cells: S and T write arrays only at one index each, of the iteration alone
      const polys = new Map<string, Poly>()
      if (!cellWrites(c.steps, A, fresh, polys) || !cellWrites(rest.slice(1), A, fresh, polys)) return undefined
      const cells = new Map<string, Shape>()
      for (const [B, p] of polys) {
        const shape = shapeOf(p, h.outer, h.inner)
        if (!shape) return undefined
        cells.set(B, shape)
      }
      if (!readsOwnCells(e, A, h, cells)) return undefined
      // what e reads besides A and the cells, the ranges, w, the cells' indices and the earlier
      // writes' names keep their values from the allocation to M (M included)
      const written = writtenNames(body.slice(i + 1, m + 1), effectful)
      if (!written) return undefined
      for (const v of vars) written.delete(v)
      const names = rangeNames(h.outer, rangeNames(h.inner, new Set()))
      for (const n of readNames(e)) if (n !== A && !cells.has(n)) names.add(n)
      for (const n of atoms(h.w)) names.add(n)
      for (const p of polys.values()) for (const n of atoms(p)) names.add(n)
      for (const p of pre) for (const n of p.names) names.add(n)
      for (const v of vars) names.delete(v)
      const resized = resizedNames(body.slice(i + 1, m + 1))
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
      const u = rest[0] as UpdateStmt
      const target = u.target as Extract<Expr, { kind: 'index' }>
      const { distinct: _distinct, ...kept_ } = u
      const self: UpdateStmt = {
        ...kept_,
        value: {
          ...structuredClone(target),
          type: (target.type ?? 'f64') as ScalarTypeName,
          ...(u.value.loc ? { loc: u.value.loc } : {}),
        },
      }
      const innerM = h.inner === h.outer ? (M as ForStmt) : ((M as ForStmt).body[0] as ForStmt)
      const innerNew: ForStmt = { ...innerM, body: [self, ...rest.slice(1)] }
      const Mnew: ForStmt = h.inner === h.outer ? innerNew : { ...(M as ForStmt), body: [innerNew] }
      return [...body.slice(0, m), Mnew, ...body.slice(m + 1)]
    }
    const w = writtenNames([M], effectful)
    if (w === undefined || [...w].some((n) => kept.has(n))) return undefined
  }
  return undefined
}
