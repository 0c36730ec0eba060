/**
 * Loop pairing (vectorising a loop by two): a counting loop whose iterations update different
 * f64 elements, such as the gradient loop `g[a + j] += c · (x[a + j] − x[b + j])`,
 * `g[b + j] −= …` of an adjoint, runs two iterations at a time as lane pairs (see `lanes.ts`):
 * iterations j and j + 1 become `S₁(j), S₁(j+1), S₂(j), S₂(j+1), …`, and each of those pairs is
 * one f64x2 update. Each lane rounds as the scalar instruction does, so the results are bit for
 * bit those of the scalar loop, provided the new order touches the elements in the same order:
 * S₂(j) now runs after S₁(j+1), so no element that one of them writes may be one the other reads
 * or writes. Distinct names are distinct memory in Tenet, so only the accesses of one array can
 * collide: two accesses `A[p + j]` and `A[q + j]` of the two iterations are one element when
 * p − q = ±1. A known constant p − q decides it at compile time; otherwise the loop
 * checks it once before the paired iterations (`guards`) and runs them one at a time when it is
 * ±1. The same holds when the host passes one typed array for two parameters (one region, as on
 * the cpu backend): the loop also checks that a written array's memory overlaps no other array
 * of the body (`apart`).
 *
 * This module only plans; the code generator emits the paired loop, then the scalar loop for what
 * is left (an odd last iteration, or all of them when a guard fails).
 */
import type { Arg, Dataview, Expr, Stmt } from '@tenet/ir'
import { key, offsetOf, readNames, rootName } from '@tenet/ir/backend'

/** The plan of a paired loop. */
export interface LoopPairs {
  /** The body of one paired iteration, j and j + 1 (`S₁(j), S₁(j+1), S₂(j), …`). */
  body: Stmt[]
  /** Index pairs whose difference must not be ±1 (evaluated with the loop variable bound). */
  guards: Array<[Expr, Expr]>
  /**
   * Pairs of a written array and another array of the body, whose memory must not overlap: one
   * typed array passed for two parameters shares one region (as on the cpu backend), and then
   * the new order could change the results.
   */
  apart: Array<[string, string]>
}

type Update = Extract<Stmt, { kind: 'update' }>
type Index = Extract<Expr, { kind: 'index' }>

const mentions = (e: Expr | Arg, v: string) => readNames(e).has(v)

/** Whether an index is `c + v` for a c that does not read v (sums and differences, v once). */
function linear(e: Expr, v: string): boolean {
  if (e.kind === 'var') return e.name === v
  if (e.kind === 'binary' && e.op === '+')
    return (linear(e.left, v) && !mentions(e.right, v)) || (linear(e.right, v) && !mentions(e.left, v))
  if (e.kind === 'binary' && e.op === '-') return linear(e.left, v) && !mentions(e.right, v)
  return false
}

/** Whether v occurs only as the `v` of linear indices (so iteration j + 1 is every such index plus one). */
function onlyInLinearIndices(e: Expr | Arg, v: string): boolean {
  switch (e.kind) {
    case 'var':
      return e.name !== v
    case 'index':
      return mentions(e.index, v) ? e.index.type === 'i32' && linear(e.index, v) : true
    case 'unary':
      return onlyInLinearIndices(e.arg, v)
    case 'binary':
      return onlyInLinearIndices(e.left, v) && onlyInLinearIndices(e.right, v)
    case 'call':
      return e.args.every((a) => onlyInLinearIndices(a, v))
    case 'field':
    case 'neg':
      return onlyInLinearIndices(e.target, v)
    default:
      return true
  }
}

/** Every element access of an expression (nested ones included). */
function accesses(e: Expr | Arg, out: Index[]): Index[] {
  switch (e.kind) {
    case 'index':
      out.push(e)
      accesses(e.index, out)
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
    case 'field':
    case 'neg':
      accesses(e.target, out)
      break
  }
  return out
}

/** `e + by`, folded into a constant term `e = x + c` (so that lane pairs see x + c and x + c + by as neighbours). */
function plus(e: Expr, by: number): Expr {
  const num = (value: number): Expr => ({ kind: 'num', value, isFloat: false, type: 'i32' })
  if (e.kind === 'binary' && e.op === '+' && e.right.kind === 'num' && Number.isInteger(e.right.value))
    return { ...e, right: num(e.right.value + by) }
  if (e.kind === 'binary' && e.op === '+' && e.left.kind === 'num' && Number.isInteger(e.left.value))
    return { ...e, left: num(e.left.value + by) }
  return { kind: 'binary', op: '+', left: e, right: num(by), type: 'i32' } as Expr
}

/** A copy of an expression with every index that reads v moved on by `by` (iteration j + by). */
function shifted<E extends Expr | Arg>(e: E, v: string, by: number): E {
  switch (e.kind) {
    case 'index': {
      const index = mentions(e.index, v) && by !== 0 ? plus(shifted(e.index, v, 0), by) : shifted(e.index, v, by)
      return { ...e, array: { ...e.array }, index }
    }
    case 'unary':
      return { ...e, arg: shifted(e.arg, v, by) }
    case 'binary':
      return { ...e, left: shifted(e.left, v, by), right: shifted(e.right, v, by) }
    case 'call':
      return { ...e, args: e.args.map((a) => shifted(a, v, by)) }
    case 'field':
    case 'neg':
      return { ...e, target: shifted(e.target as Expr, v, by) } as E
    default:
      return { ...e }
  }
}

/**
 * Plans a loop over `variable` (step 1) with this body as paired iterations, or returns null when
 * the body is not made of updates the pairing keeps exact: only `+=`/`-=` updates of f64 array
 * elements at indices `c + variable`, with the variable in no other place, and every access of
 * an array the body writes at such an index. Whether each statement pair really makes one f64x2
 * update is for the caller to check (`planPair`, which knows what the loop holds in locals).
 *
 * With `accumulators`, an update may also add into one place that does not move with the loop —
 * an f64 variable, or an element whose index reads neither the variable nor anything the body
 * writes — when no other statement writes it and no statement reads it (its array or variable):
 * S(j) and S(j + 1) then add into it one after the other (the pair computes both values, then adds
 * the two lanes in the loop's order: lane 1 first in a downward loop, whose pair is i − 2, i − 1),
 * and moving the other statements of the second iteration before the first's addition does not
 * change what it adds.
 */
export function planLoopPairs(
  variable: string,
  body: Stmt[],
  elemOf: (array: string) => string | undefined,
  accumulators = false,
): LoopPairs | null {
  if (body.length === 0 || !body.every((s) => s.kind === 'update')) return null
  const updates = body as Update[]
  const written = new Set<string>()
  // the updates that add into a place that does not move with the loop, by the name they write
  const adding = new Map<string, Update>()
  const accumulator = (s: Update): boolean => {
    const t = s.target
    if (!accumulators || !onlyInLinearIndices(s.value, variable)) return false
    if (t.kind === 'var') return t.type === 'f64'
    return t.kind === 'index' && t.type === 'f64' && elemOf(t.array.name) === 'f64' && !mentions(t.index, variable)
  }
  for (const s of updates) {
    const t = s.target
    if ((s.op !== '+=' && s.op !== '-=') || s.distinct?.length) return null
    if (accumulator(s)) {
      const name = rootName(t as Dataview)!
      if (adding.has(name)) return null
      adding.set(name, s)
      continue
    }
    if (t.kind !== 'index' || t.type !== 'f64' || elemOf(t.array.name) !== 'f64') return null
    if (!mentions(t.index, variable) || !onlyInLinearIndices(t, variable) || !onlyInLinearIndices(s.value, variable))
      return null
    written.add(t.array.name)
  }
  // an accumulator's place: written by its update only, read by none, its index fixed while the loop runs
  for (const [name, s] of adding) {
    if (written.has(name)) return null
    const t = s.target
    if (t.kind === 'index' && [...readNames(t.index)].some((n) => written.has(n) || adding.has(n) || n === variable))
      return null
    for (const u of updates) {
      if (readNames(u.value).has(name)) return null
      if (u.target.kind === 'index' && readNames(u.target.index).has(name)) return null
    }
  }
  const moving = updates.filter((s) => !adding.has(rootName(s.target as Dataview)!) || !accumulator(s))
  // every element access, in statement order (a statement's target first); those of the written
  // arrays must move with the loop variable
  const every = updates.flatMap((s) => accesses(s.value, accesses(s.target as Index, [])))
  const all = every.filter((x) => written.has(x.array.name))
  if (!all.every((x) => mentions(x.index, variable))) return null
  const guards: Array<[Expr, Expr]> = []
  const seen = new Set<string>()
  for (const s of moving) {
    const w = s.target as Index
    for (const x of all) {
      if (x === w || x.array.name !== w.array.name) continue
      const kw = key(w.index),
        kx = key(x.index)
      if (kw === kx) continue
      const [bw, cw] = offsetOf(w.index),
        [bx, cx] = offsetOf(x.index)
      // one base: the constant offsets decide (neighbours collide in every pair)
      if (bw === bx) {
        if (Math.abs(cw - cx) === 1) return null
        continue
      }
      const id = kw < kx ? `${kw}\u0000${kx}` : `${kx}\u0000${kw}`
      if (!seen.has(id)) {
        seen.add(id)
        guards.push([w.index, x.index])
      }
    }
  }
  const names = new Set(every.map((x) => x.array.name))
  const apart: Array<[string, string]> = []
  const arrays = new Set(written)
  for (const s of adding.values()) if (s.target.kind === 'index') arrays.add(s.target.array.name)
  for (const w of arrays) for (const x of names) if (x !== w && !(arrays.has(x) && x < w)) apart.push([w, x])
  const out: Stmt[] = []
  for (const s of updates) {
    for (const by of [0, 1])
      out.push({ ...s, target: shifted(s.target, variable, by), value: shifted(s.value, variable, by) })
  }
  return { body: out, guards, apart }
}
