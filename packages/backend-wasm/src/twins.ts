/**
 * Twin statements and twin locals (superword parallelism across two independent computations).
 *
 * A vector-mode adjoint carries w output rows at once: each update of the adjoint is emitted once
 * per row, `g_0$x += g_0$y · c` for row 0 and `g_1$x += g_1$y · c` for row 1, and the rows never
 * read each other's derivatives. Once a block Jacobian holds the derivatives in scalars, the two
 * rows are two independent sweeps over scalar locals, interleaved by the adjoint's order, often
 * several statements apart. The same shape arises wherever a program does one computation twice
 * on different locals (two seeds, two map iterations written out, the x and y of a projection).
 *
 * Two updates S (earlier) and T (later) of one statement list are *twins* when T is S with some
 * f64 locals renamed, consistently over the function (a partial bijection π from lane-0 names to
 * lane-1 names), or with an element read at index i + 1 where S reads i; everything else is the
 * same (the values both read, such as the forward run's intermediates and parameters).
 *
 * - `scheduleTwins` (an IR → IR pass) moves T up to just after S when T commutes with every
 *   statement it passes: no statement it passes writes what T reads, reads or writes what T writes,
 *   calls out (host functions, `@safe`, calls of functions and bijections, stacks, asserts). Each
 *   statement then computes exactly the value it computed before, and an element or local updated
 *   by several statements is updated in the same order, so the results are the same bit for bit.
 * - `twinLocals` picks the local pairs (a, b) that the adjacent twins update and read together
 *   often enough that holding them as lanes 0 and 1 of one f64x2 local pays: every twin pair that
 *   reads and writes them then runs as one f64x2 update (see `lanes.ts`); any other access
 *   extracts or replaces its lane.
 *
 * This module only plans; the code generator applies the schedule (without run-time checks, with
 * SIMD) and holds the pairs.
 */
import type { Dataview, Expr, Stmt } from '@tenet/ir'
import { callsHost, key, offsetOf, readNames, rootName } from '@tenet/ir/backend'

type Update = Extract<Stmt, { kind: 'update' }>

/** How far ahead (in statements of one list) a twin is looked for. */
export const TWIN_WINDOW = 96

/** A partial bijection between lane-0 and lane-1 names, grown as twins are found. */
export class TwinNames {
  readonly lane1 = new Map<string, string>()
  readonly lane0 = new Map<string, string>()
  /** Whether a name is in a pair (either lane). */
  has(n: string): boolean {
    return this.lane1.has(n) || this.lane0.has(n)
  }
}

/** Whether index b is index a + 1 (same base, constant offsets one apart). */
function nextIndex(a: Expr, b: Expr): boolean {
  const [ka, ca] = offsetOf(a),
    [kb, cb] = offsetOf(b)
  return ka === kb && cb === ca + 1
}

/**
 * Matches T against S (see the module comment): the new name pairs the match needs (possibly
 * none), or null when T is not S's twin under `names` (nothing differs, or the shapes differ, or
 * a renaming conflicts with `names`).
 */
export function matchTwin(s: Stmt, t: Stmt, names: TwinNames, grow = true): Array<[string, string]> | null {
  if (s.kind !== 'update' || t.kind !== 'update' || s.op !== t.op) return null
  if ((s as { distinct?: unknown[] }).distinct?.length || (t as { distinct?: unknown[] }).distinct?.length) return null
  if (s.target.type !== 'f64' || t.target.type !== 'f64') return null
  if (callsHost(s.value) || callsHost(t.value)) return null
  const added: Array<[string, string]> = []
  let differs = false
  const taken = (n: string) => names.has(n) || added.some(([a, b]) => a === n || b === n)
  const pairOf = (a: string) => names.lane1.get(a) ?? added.find((p) => p[0] === a)?.[1]
  const leafVars = (a: string, b: string, type: unknown): boolean => {
    // (one value in both: a splat)
    if (a === b) return true
    differs = true
    const have = pairOf(a)
    if (have !== undefined) return have === b
    if (!grow || type !== 'f64' || taken(a) || taken(b)) return false
    added.push([a, b])
    return true
  }
  const same = (a: Expr | Dataview, b: Expr | Dataview): boolean => {
    if (a.kind !== b.kind) return false
    switch (a.kind) {
      case 'var':
        return leafVars(a.name, (b as typeof a).name, a.type)
      case 'num':
        return a.value === (b as typeof a).value && a.type === b.type
      case 'index': {
        const y = b as typeof a
        if (a.array.name !== y.array.name || a.type !== y.type) return false
        if (key(a.index) === key(y.index)) return true
        if (a.type !== 'f64' || !nextIndex(a.index, y.index)) return false
        differs = true
        return true
      }
      case 'unary': {
        const y = b as typeof a
        return a.op === y.op && same(a.arg as Expr, y.arg as Expr)
      }
      case 'binary': {
        const y = b as typeof a
        return a.op === y.op && a.type === y.type && same(a.left, y.left) && same(a.right, y.right)
      }
      case 'call': {
        const y = b as typeof a
        return (
          a.callee === y.callee &&
          a.type === y.type &&
          a.args.length === y.args.length &&
          a.args.every((x, i) => same(x as Expr, y.args[i] as Expr))
        )
      }
      case 'neg':
        return same(a.target, (b as typeof a).target)
      default:
        return key(a as Expr) === key(b as Expr)
    }
  }
  // the targets: two different places (same place twice is an accumulation, left alone)
  const sa = s.target,
    ta = t.target
  if (sa.kind === 'var' && ta.kind === 'var') {
    if (sa.name === ta.name || !leafVars(sa.name, ta.name, sa.type)) return null
  } else if (sa.kind === 'index' && ta.kind === 'index') {
    if (sa.array.name !== ta.array.name || !nextIndex(sa.index, ta.index)) return null
    differs = true
  } else return null
  if (!same(s.value, t.value) || !differs) return null
  return added
}

/** What a statement reads and writes (root names), or `barrier` when it may not be moved past. */
interface Effects {
  reads: Set<string>
  writes: Set<string>
  barrier: boolean
}

function effectsOf(list: Stmt[], out: Effects = { reads: new Set(), writes: new Set(), barrier: false }): Effects {
  const expr = (e: Expr | Dataview) => {
    if (callsHost(e)) out.barrier = true
    readNames(e, out.reads)
  }
  for (const s of list) {
    switch (s.kind) {
      case 'update': {
        expr(s.value)
        expr(s.target)
        const r = rootName(s.target)
        if (r === undefined) out.barrier = true
        else out.writes.add(r)
        break
      }
      case 'alloc':
      case 'dealloc':
        if (s.value.kind === 'emptystack') out.barrier = true
        else expr(s.value)
        out.writes.add(s.name)
        out.reads.add(s.name)
        break
      case 'if':
        expr(s.pre)
        if (s.post) expr(s.post)
        effectsOf(s.then, out)
        effectsOf(s.else, out)
        break
      case 'while':
        expr(s.pre)
        expr(s.post)
        effectsOf(s.body, out)
        break
      case 'for':
        expr(s.start)
        expr(s.stop)
        if (s.step) expr(s.step)
        out.writes.add(s.variable)
        out.reads.add(s.variable)
        effectsOf(s.body, out)
        break
      case 'unchecked':
        effectsOf(s.body, out)
        break
      default:
        out.barrier = true
    }
  }
  return out
}

const meets = (a: Set<string>, b: Set<string>) => {
  for (const x of a) if (b.has(x)) return true
  return false
}

/** Whether two statements may run in either order with the same results. */
function commute(x: Effects, y: Effects): boolean {
  if (x.barrier || y.barrier) return false
  return !meets(x.writes, y.writes) && !meets(x.writes, y.reads) && !meets(y.writes, x.reads)
}

/**
 * The pairing of names (see the module comment) that the most likenesses between the updates of
 * the body agree on: every two updates of one statement list at most \`TWIN_WINDOW\` apart that
 * match with some renaming vote for its name pairs (a likeness that renames k pairs gives each
 * 1/k: a true twin renames few, a chance likeness of two different computations many); then pairs
 * are taken by votes, each name in at most one pair.
 */
export function twinNames(body: Stmt[]): TwinNames {
  const votes = new Map<string, { a: string; b: string; v: number }>()
  const visit = (list: Stmt[]) => {
    const updates = list.filter((s) => s.kind === 'update')
    for (let i = 0; i < updates.length; i++)
      for (let j = i + 1; j < updates.length && j <= i + TWIN_WINDOW; j++) {
        const added = matchTwin(updates[i]!, updates[j]!, new TwinNames())
        if (!added?.length) continue
        for (const [a, b] of added) {
          const k = `${a}\u0000${b}`
          const e = votes.get(k) ?? { a, b, v: 0 }
          e.v += 1 / added.length
          votes.set(k, e)
        }
      }
    for (const s of list) {
      if (s.kind === 'if') {
        visit(s.then)
        visit(s.else)
      } else if (s.kind === 'for' || s.kind === 'while' || s.kind === 'unchecked') visit(s.body)
    }
  }
  visit(body)
  const names = new TwinNames()
  for (const { a, b } of [...votes.values()].sort((x, y) => y.v - x.v)) {
    if (names.has(a) || names.has(b)) continue
    names.lane1.set(a, b)
    names.lane0.set(b, a)
  }
  return names
}

/**
 * The statement list with each update's twin (see the module comment) moved up to just after it,
 * where the twin commutes with every statement it passes; nested lists likewise. Twins rename by
 * `names` (by default \`twinNames\` of the body: one pairing over the function).
 */
export function scheduleTwins(body: Stmt[], names: TwinNames = twinNames(body)): Stmt[] {
  // (nested lists are scheduled in order, when reached: the names their twins rename are then known)
  const list = body
  const n = list.length
  const effects = list.map((s) => effectsOf([s]))
  const done = new Array<boolean>(n).fill(false)
  const out: Stmt[] = []
  for (let i = 0; i < n; i++) {
    if (done[i]) continue
    done[i] = true
    const s = list[i]!
    out.push(nestedTwins(s, names))
    if (s.kind !== 'update' || effects[i]!.barrier) continue
    // the nearest twin under the names' pairing that may move next to S
    let best: { j: number; before: boolean } | undefined
    for (let j = i + 1; j < n && j <= i + TWIN_WINDOW && !best; j++) {
      if (done[j] || list[j]!.kind !== 'update') continue
      // T as lane 1 after S, or as lane 0 before it (then T passes S too)
      const before = !matchTwin(s, list[j]!, names, false)
      if (before && !matchTwin(list[j]!, s, names, false)) continue
      let free = !effects[j]!.barrier && (!before || commute(effects[j]!, effects[i]!))
      for (let k = i + 1; k < j && free; k++) if (!done[k]) free = commute(effects[j]!, effects[k]!)
      if (free) best = { j, before }
    }
    if (!best) continue
    done[best.j] = true
    if (best.before) out.splice(out.length - 1, 0, list[best.j]!)
    else out.push(list[best.j]!)
  }
  return out
}

function nestedTwins(s: Stmt, names: TwinNames): Stmt {
  switch (s.kind) {
    case 'if':
      return { ...s, then: scheduleTwins(s.then, names), else: scheduleTwins(s.else, names) }
    case 'while':
    case 'for':
    case 'unchecked':
      return { ...s, body: scheduleTwins(s.body, names) } as Stmt
    default:
      return s
  }
}

/** A pair of f64 locals held as the lanes of one f64x2 local. */
export interface TwinLocal {
  /** The other name of the pair. */
  partner: string
  /** This name's lane. */
  lane: 0 | 1
}

/**
 * The f64 local pairs of a (scheduled) function body worth holding as one f64x2 local each (see
 * the module comment): both allocated (`<-`) in one statement list, and never named in a call's
 * arguments or anything but updates, allocations, deallocations, conditions and loop ranges; of the pairs adjacent twins use, those whose twin uses are at least half their other uses
 * (each such use extracts or replaces a lane), the more used first where pairs share a name.
 */
export function twinLocals(body: Stmt[]): Map<string, TwinLocal> {
  const allocated = new Map<string, Stmt[]>()
  const excluded = new Set<string>()
  const uses = new Map<string, number>()
  const twinUses = new Map<string, number>()
  const count = (e: Expr | Dataview) => {
    const walk = (x: Expr | Dataview): void => {
      switch (x.kind) {
        case 'var':
          uses.set(x.name, (uses.get(x.name) ?? 0) + 1)
          return
        case 'index':
          walk(x.index)
          return
        case 'unary':
          walk(x.arg as Expr)
          return
        case 'binary':
          walk(x.left)
          walk(x.right)
          return
        case 'call':
          for (const a of x.args) walk(a as Expr)
          return
        case 'neg':
        case 'field':
          walk(x.target)
          return
        default:
          return
      }
    }
    walk(e)
  }
  const exclude = (s: Stmt) => {
    const e = effectsOf([s])
    for (const n of e.reads) excluded.add(n)
    for (const n of e.writes) excluded.add(n)
    if (s.kind === 'callstmt') for (const a of s.args) for (const n of readNames(a)) excluded.add(n)
  }
  const visit = (list: Stmt[]) => {
    for (let i = 0; i < list.length; i++) {
      const s = list[i]!
      switch (s.kind) {
        case 'update':
          count(s.target)
          count(s.value)
          break
        case 'alloc':
          if (s.value.kind !== 'emptystack') count(s.value)
          if (allocated.has(s.name)) excluded.add(s.name)
          else allocated.set(s.name, list)
          {
            const ty = s.type ?? s.declared
            if (ty?.kind !== 'scalar' || ty.name !== 'f64') excluded.add(s.name)
          }
          break
        case 'dealloc':
          if (s.value.kind !== 'emptystack') count(s.value)
          break
        case 'if':
          count(s.pre)
          if (s.post) count(s.post)
          visit(s.then)
          visit(s.else)
          break
        case 'unchecked':
          visit(s.body)
          break
        case 'for':
          count(s.start)
          count(s.stop)
          if (s.step) count(s.step)
          excluded.add(s.variable)
          visit(s.body)
          break
        case 'while':
          count(s.pre)
          count(s.post)
          visit(s.body)
          break
        case 'callstmt':
          for (const a of s.args) for (const n of readNames(a)) excluded.add(n)
          break
        default:
          exclude(s)
      }
      const t = list[i + 1]
      if (!t) continue
      const added = matchTwin(s, t, new TwinNames())
      if (!added) continue
      for (const [a, b] of added) {
        const k = `${a}\u0000${b}`
        twinUses.set(k, (twinUses.get(k) ?? 0) + countPair(s as Update, t as Update, a, b))
      }
    }
  }
  visit(body)
  const candidates = [...twinUses]
    .map(([k, n]) => {
      const [a, b] = k.split('\u0000') as [string, string]
      return { a, b, n }
    })
    .filter(
      ({ a, b, n }) =>
        !excluded.has(a) &&
        !excluded.has(b) &&
        allocated.has(a) &&
        allocated.get(a) === allocated.get(b) &&
        2 * n >= (uses.get(a) ?? 0) + (uses.get(b) ?? 0) - 2 * n,
    )
    .sort((x, y) => y.n - x.n)
  const out = new Map<string, TwinLocal>()
  for (const { a, b } of candidates) {
    if (out.has(a) || out.has(b)) continue
    out.set(a, { partner: b, lane: 0 })
    out.set(b, { partner: a, lane: 1 })
  }
  return out
}

/** How many times a and b occur at the same places of twins s and t (each pair counts once). */
function countPair(s: Update, t: Update, a: string, b: string): number {
  let n = 0
  const walk = (x: Expr | Dataview, y: Expr | Dataview): void => {
    if (x.kind === 'var' && y.kind === 'var') {
      if (x.name === a && y.name === b) n++
      return
    }
    switch (x.kind) {
      case 'unary':
        walk(x.arg as Expr, (y as typeof x).arg as Expr)
        return
      case 'binary':
        walk(x.left, (y as typeof x).left)
        walk(x.right, (y as typeof x).right)
        return
      case 'call':
        x.args.forEach((z, i) => walk(z as Expr, (y as typeof x).args[i] as Expr))
        return
      case 'neg':
        walk(x.target, (y as typeof x).target)
        return
      default:
        return
    }
  }
  walk(s.target, t.target)
  walk(s.value, t.value)
  return n
}
