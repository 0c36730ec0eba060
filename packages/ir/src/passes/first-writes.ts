/**
 * Pass `first-writes`: an array ancilla allocated as `zeros(n)` whose elements are written in
 * order — a first element, then a `for` loop of step ±1 extending the written range by one
 * element per iteration from where it ends — and read only where the range already covers, is
 * marked `overwritten`, and each of its first writes `init` (see `AllocStmt.overwritten` and
 * `UpdateStmt.init`): a backend then writes `0 + value` there without reading the element and
 * need not zero the array. A pooled array allocated in a loop (Horner's accumulator
 * `acc[k] += acc[k + 1] * x + c[k]`, a running maximum `ms[i] += max(ms[i − 1], z[i])`, a history
 * `h[t + 1] += f(h[t])`) was filled with zeros on every iteration of that loop, which for a short
 * array costs more than the work.
 *
 * The proof tracks the written elements, from the allocation to its deallocation in the same
 * block, as one interval `[lo, hi]` of integer polynomials over names that nothing in that region
 * writes (lengths `len(a)` are such names). A statement is accepted when:
 *
 * - it does not name the array (but in `len`);
 * - it is an update `a[e] += v` / `-=` at the top of the region: `e` is inside the interval (an
 *   ordinary update), or next to it (`lo − 1`, `hi + 1`; or the interval is empty), which makes it
 *   a first write; `v` reads the array only inside the interval and calls no host function;
 * - it is a `for` loop of step ±1 over the contiguous range `[L, H]` that begins next to the
 *   interval (`hi + 1 = L` going up, `lo − 1 = H` going down) and writes the array in one
 *   top-level update of its body at exactly the loop variable `k`; its reads are `a[k + d]` of
 *   elements written before (d < 0 going up, d > 0 going down; d = 0 after the write), or
 *   elements inside the interval at indices bound outside the loop; the interval becomes
 *   `[lo, H]` (`[L, hi]` going down) — a subset of what is written also when the loop runs no
 *   iteration;
 * - it otherwise only reads the array, inside the interval, at indices bound outside it.
 *
 * A read `r` is inside when `r − lo` and `hi − r` are non-negative constants; `lo = 0`, or
 * `hi = n − 1` for the allocation's length n, count as bounds every valid index meets. Anything
 * else naming the array (a call argument, a write elsewhere, a `while`) leaves it as it is.
 *
 * The pass changes no value of a valid program (indices in range): every element read was
 * written before, so its value does not depend on the array's initial contents. Without checks
 * an index out of range is not reported either way; the backends run the pass with run-time
 * checks off only (the array's deallocation check reads every element).
 */
import type { Arg, Expr, ForStmt, FunctionDef, IndexExpr, Stmt, UpdateStmt } from '../ast.js'
import { stmtExprs } from '../stmt-exprs.js'
import { atomChanges, resizedNames, writtenNames } from './hoist-invariants.js'
import { callsHost } from './insert-checks.js'
import { addPoly, constantDifference, type Poly, polynomial } from './interchange.js'

/** The atom that stands for `len(name)` in a polynomial (no variable is named so). */
const lenAtom = (name: string): string => `len(${name})`

/**
 * The integer polynomial an i32 expression computes, `len(a)` as an atom, or undefined (an
 * element, a division, another call, a float).
 */
export const indexPolynomial = (e: Expr): Poly | undefined =>
  polynomial(e, (x) =>
    x.kind === 'call' && x.callee === 'len' && x.args.length === 1 && x.args[0]?.kind === 'var'
      ? new Map([[lenAtom(x.args[0].name), 1]])
      : undefined,
  )

const constDiff = constantDifference

const plus = (p: Poly, c: number): Poly => addPoly(p, new Map([['', 1]]), c)

/** The names of a polynomial's monomials. */
const atoms = (p: Poly): string[] => [...p.keys()].flatMap((m) => (m ? m.split('*') : []))

/** The written elements: `[lo, hi]`. */
interface Range {
  lo: Poly
  hi: Poly
}

/** What one statement does with the array. */
interface Uses {
  /** the element reads */
  reads: IndexExpr[]
  /** whether the array is named other than in an element read or `len` (a write, a whole-array argument) */
  other: boolean
}

function exprUses(e: Expr | Arg, a: string, u: Uses): void {
  switch (e.kind) {
    case 'var':
      if (e.name === a) u.other = true
      break
    case 'index':
      if (e.array.name === a) u.reads.push(e)
      exprUses(e.index, a, u)
      break
    case 'field':
    case 'neg':
      exprUses(e.target, a, u)
      break
    case 'unary':
      exprUses(e.arg, a, u)
      break
    case 'binary':
      exprUses(e.left, a, u)
      exprUses(e.right, a, u)
      break
    case 'call':
      if (e.callee === 'len' && e.args.length === 1 && e.args[0]!.kind === 'var') break
      for (const x of e.args) exprUses(x, a, u)
      break
  }
}

/** The uses of array `a` in `s` (at any depth); a write of it anywhere counts as `other`. */
function stmtUses(s: Stmt, a: string, u: Uses = { reads: [], other: false }): Uses {
  switch (s.kind) {
    case 'update':
      if (s.target.kind === 'index' && s.target.array.name === a) {
        u.other = true
        exprUses(s.target.index, a, u)
      } else exprUses(s.target, a, u)
      exprUses(s.value, a, u)
      return u
    case 'callstmt':
    case 'push':
    case 'pop':
    case 'safe':
    case 'routine':
    case 'unroutine':
    case 'invblock':
    case 'assert': {
      // (anything naming the array here is not followed)
      const before = u.reads.length
      for (const e of s.kind === 'assert' ? [s.cond] : stmtExprs(s)) exprUses(e, a, u)
      if (u.reads.length > before) u.other = true
      if (s.kind === 'routine' || s.kind === 'invblock') for (const t of s.body) stmtUses(t, a, u)
      return u
    }
    case 'alloc':
    case 'dealloc':
      if (s.name === a) u.other = true
      for (const e of stmtExprs(s)) exprUses(e, a, u)
      return u
    case 'if':
      for (const e of stmtExprs(s)) exprUses(e, a, u)
      for (const t of [...s.then, ...s.else]) stmtUses(t, a, u)
      return u
    case 'while':
    case 'for':
    case 'unchecked':
      for (const e of stmtExprs(s)) exprUses(e, a, u)
      // (\`for x in arr\` before preprocessing reads every element of arr)
      if (s.kind === 'for' && s.each) exprUses(s.each, a, u)
      for (const t of s.body) stmtUses(t, a, u)
      return u
  }
  return u
}

/** The names bound inside `s` (loop variables, allocations), at any depth. */
function boundInside(s: Stmt, out: Set<string> = new Set()): Set<string> {
  if (s.kind === 'alloc') out.add(s.name)
  if (s.kind === 'for') out.add(s.variable)
  const kids: Stmt[] =
    s.kind === 'if'
      ? [...s.then, ...s.else]
      : s.kind === 'for' ||
          s.kind === 'while' ||
          s.kind === 'unchecked' ||
          s.kind === 'routine' ||
          s.kind === 'invblock'
        ? s.body
        : []
  for (const t of kids) boundInside(t, out)
  return out
}

/** The proof's state for one array: its length, the written interval, the invariant names. */
class Tracker {
  w: Range | undefined
  constructor(
    readonly n: Poly | undefined,
    /** names written in the region: an index reading one is not comparable across statements */
    readonly written: ReadonlySet<string>,
    /** arrays the region allocates or deallocates: their \`len\` is not comparable across statements */
    readonly resized: ReadonlySet<string>,
  ) {}

  /** The polynomial of an index that reads only names nothing in the region writes (and none of `bound`). */
  stable(e: Expr, bound: ReadonlySet<string> = new Set()): Poly | undefined {
    const p = indexPolynomial(e)
    if (!p) return undefined
    for (const v of atoms(p)) if (atomChanges(v, this.written, this.resized) || bound.has(v)) return undefined
    return p
  }

  /** Whether index `r` is inside the written interval (for every valid index). */
  inside(r: Poly): boolean {
    const w = this.w
    if (!w) return false
    const low = constDiff(r, w.lo)
    const high = constDiff(w.hi, r)
    const lowOk = (low !== undefined && low >= 0) || w.lo.size === 0
    const highOk =
      (high !== undefined && high >= 0) || (this.n !== undefined && constDiff(w.hi, plus(this.n, -1)) === 0)
    return lowOk && highOk
  }

  /** Whether every read of `u` is inside the interval at an index bound outside `bound`. */
  readsInside(u: Uses, bound: ReadonlySet<string>): boolean {
    return u.reads.every((r) => {
      const p = this.stable(r.index, bound)
      return p !== undefined && this.inside(p)
    })
  }
}

/** The marked update, or undefined where `s` is not a first write the tracker accepts (the interval extended). */
function firstWrite(s: UpdateStmt, a: string, t: Tracker): { stmt: UpdateStmt; init: boolean } | undefined {
  if (s.target.kind !== 'index' || s.target.array.name !== a || (s.op !== '+=' && s.op !== '-=')) return undefined
  const u: Uses = { reads: [], other: false }
  exprUses(s.target.index, a, u)
  exprUses(s.value, a, u)
  if (u.other || !t.readsInside(u, new Set())) return undefined
  const e = t.stable(s.target.index)
  if (!e) return undefined
  if (t.inside(e)) return { stmt: s, init: false }
  if (callsHost(s.value)) return undefined
  const w = t.w
  if (!w) t.w = { lo: e, hi: e }
  else if (constDiff(e, w.lo) === -1) t.w = { lo: e, hi: w.hi }
  else if (constDiff(e, w.hi) === 1) t.w = { lo: w.lo, hi: e }
  else return undefined
  return { stmt: { ...s, init: true }, init: true }
}

/** The loop with its first write marked, or undefined where the tracker does not accept it (the interval extended). */
function firstWritesLoop(s: ForStmt, a: string, t: Tracker): { loop: ForStmt; init: boolean } | undefined {
  const step = s.step === null ? 1 : s.step.kind === 'num' && Number.isInteger(s.step.value) ? s.step.value : undefined
  if (step !== 1 && step !== -1) return undefined
  // the range reads nothing of the array
  const head: Uses = { reads: [], other: false }
  for (const e of stmtExprs(s)) exprUses(e, a, head)
  if (s.each) return undefined
  if (head.other || head.reads.length > 0) return undefined
  const start = t.stable(s.start),
    stop = t.stable(s.stop)
  if (!start || !stop) return undefined
  // the contiguous range [L, H], the direction the iterations go and the first value
  const L = step > 0 ? start : s.inclusive ? stop : plus(stop, 1)
  const H = step > 0 ? (s.inclusive ? stop : plus(stop, -1)) : start
  const dir = s.reverse ? -step : step
  const F = dir > 0 ? L : H
  const k = s.variable
  const kPoly: Poly = new Map([[k, 1]])
  const w = t.w
  /** `k + d` over the whole range is inside the interval before the loop. */
  const allInside = (d: number) => w !== undefined && t.inside(plus(L, d)) && t.inside(plus(H, d))
  // the element offset of each update of the array at the top of the body: all inside the
  // interval (an ordinary update), or the one first write, each iteration the next element
  let writer = -1
  let off = 0
  const offsets: Array<number | undefined> = []
  for (let j = 0; j < s.body.length; j++) {
    const b = s.body[j]!
    if (b.kind !== 'update' || b.target.kind !== 'index' || b.target.array.name !== a) {
      offsets.push(undefined)
      continue
    }
    const e = indexPolynomial(b.target.index)
    const d = e && constDiff(e, kPoly)
    if (d === undefined) return undefined
    offsets.push(d)
    if (allInside(d)) continue
    if (writer >= 0 || (b.op !== '+=' && b.op !== '-=') || callsHost(b.value)) return undefined
    // (the first iteration writes the element next to the interval)
    if (w && (dir > 0 ? constDiff(plus(F, d), w.hi) : constDiff(w.lo, plus(F, d))) !== 1) return undefined
    writer = j
    off = d
  }
  const inner = new Set<string>()
  for (const b of s.body) boundInside(b, inner)
  const body: Stmt[] = []
  for (let j = 0; j < s.body.length; j++) {
    const b = s.body[j]!
    const u: Uses = { reads: [], other: false }
    if (offsets[j] !== undefined) {
      // the target's own element is accounted for: only the index's and the value's reads count
      const target = b as UpdateStmt
      exprUses((target.target as IndexExpr).index, a, u)
      exprUses(target.value, a, u)
    } else stmtUses(b, a, u)
    if (u.other) return undefined
    body.push(j === writer ? { ...(b as UpdateStmt), init: true } : b)
    // each read: a[k + d] of an element written before (this iteration's first write, an earlier
    // one's, or the interval before the loop), or inside the interval at an index bound outside
    const bound = boundInside(b, new Set(inner))
    bound.add(k)
    for (const r of u.reads) {
      const p = indexPolynomial(r.index)
      const d = p && constDiff(p, kPoly)
      if (d !== undefined) {
        if (allInside(d)) continue
        if (writer < 0) return undefined
        // (in the first write's own value, or before it, this iteration's element is not written yet)
        const need = writer < j ? 0 : 1
        if (dir * (d - off) > -need) return undefined
        if (d === off) continue
        // the first iteration's read is inside the interval before the loop; later ones follow the writes
        if (!w || !t.inside(plus(F, d))) return undefined
        continue
      }
      const q = t.stable(r.index, bound)
      if (!q || !t.inside(q)) return undefined
    }
  }
  if (writer >= 0)
    t.w = dir > 0 ? { lo: w?.lo ?? plus(L, off), hi: plus(H, off) } : { lo: plus(L, off), hi: w?.hi ?? plus(H, off) }
  return { loop: { ...s, body }, init: writer >= 0 }
}

/** The region after the allocation at `i` (to its deallocation) with the first writes marked, or undefined. */
function markArray(block: Stmt[], i: number): Stmt[] | undefined {
  const alloc = block[i]!
  if (
    alloc.kind !== 'alloc' ||
    alloc.overwritten ||
    alloc.type?.kind !== 'array' ||
    (alloc.type.elem !== 'f64' && alloc.type.elem !== 'f32' && alloc.type.elem !== 'i32') ||
    alloc.value.kind !== 'call' ||
    alloc.value.callee !== 'zeros'
  )
    return undefined
  const a = alloc.name
  let end = block.findIndex((s, j) => j > i && s.kind === 'dealloc' && s.name === a)
  if (end < 0) end = block.length
  const region = block.slice(i + 1, end)
  const written = writtenNames(region)
  if (!written) return undefined
  const n = indexPolynomial(alloc.value.args[0]!)
  const resized = resizedNames(region)
  const t = new Tracker(n && atoms(n).every((v) => !atomChanges(v, written, resized)) ? n : undefined, written, resized)
  let marked = false
  const out: Stmt[] = []
  for (const s of region) {
    const u = stmtUses(s, a)
    if (!u.other && u.reads.length === 0) {
      out.push(s)
      continue
    }
    if (s.kind === 'update' && s.target.kind === 'index' && s.target.array.name === a) {
      const r = firstWrite(s, a, t)
      if (!r) return undefined
      marked ||= r.init
      out.push(r.stmt)
    } else if (s.kind === 'for') {
      const r = firstWritesLoop(s, a, t)
      if (!r) return undefined
      marked ||= r.init
      out.push(r.loop)
    } else {
      if (u.other || !t.readsInside(u, boundInside(s))) return undefined
      out.push(s)
    }
  }
  if (!marked) return undefined
  return [{ ...alloc, overwritten: true }, ...out]
}

/** `body` with the pass applied to every array ancilla of every block (see the module comment). */
export function firstWritesBlock(body: Stmt[]): Stmt[] {
  let out = body.map((s): Stmt => {
    switch (s.kind) {
      case 'if':
        return { ...s, then: firstWritesBlock(s.then), else: firstWritesBlock(s.else) }
      case 'for':
      case 'while':
      case 'unchecked':
        return { ...s, body: firstWritesBlock(s.body) } as Stmt
      default:
        return s
    }
  })
  for (let i = 0; i < out.length; i++) {
    const marked = markArray(out, i)
    if (marked) out = [...out.slice(0, i), ...marked, ...out.slice(i + marked.length)]
  }
  return out
}

/** The function with the pass applied (see the module comment). */
export function firstWrites(f: FunctionDef): FunctionDef {
  return { ...f, body: firstWritesBlock(f.body) }
}
