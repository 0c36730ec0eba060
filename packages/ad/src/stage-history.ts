/**
 * Stage histories: the scalars that a loop body computes at its head and uncomputes at its tail
 * (`for t … { routine { a, b <- 0.0, 0.0; stages(a, b, …) } copy(…) ~routine }`, the stages of
 * an integrator step, a routine's locals in any loop), kept from the forward sweep for the
 * backward sweep of a gradient program that runs both.
 *
 * Where `f`'s block holds such a loop `L` and later its inverse `L′ = ~L` (the two halves of a
 * top-level routine: `routine { … L … } C ~routine`), the adjoint of that block (in the
 * adjoint-only program, or in a callee's adjoint within one call) runs `adj(L′)` — L value-wise,
 * forward, each iteration recomputing the stages `P` and uncomputing them after the copy `Q` —
 * and later `adj(L)`, whose
 * iteration t recomputes the same stages once more (`adj(~P)`, its gradient updates all adding
 * zero gradients) before `adj(Q)` and `adj(P)` read them. By reversibility the values `adj(L)`
 * recomputes at iteration t are those `adj(L′)` computed at iteration t (the statements between
 * write nothing L reads, and ~P in L brings the stages back to zero only where P read the same
 * values after Q as before it), up to the rounding drift of the sweep. So the forward loop
 * stores them in a history (one row per iteration, allocated once per call, at most
 * `HISTORY_ELEMENTS` elements) and the backward loop loads them instead of recomputing them;
 * where the loop has more iterations than the history can hold, both loops recompute as before.
 *
 * This file finds the pairs (`stagePairs`); `FunctionAdjoint` (transform.ts) builds the loops.
 */
import { printStmt, type Arg, type Expr, type Stmt } from '@tenet/ir'
import { rootName, valueReads, walk } from '@tenet/ir/backend'
import { invertStmt } from '@tenet/reversible'

/** Elements (f64) a stage history may hold at most: 2²¹ (16 MiB); further iterations recompute. */
export const HISTORY_ELEMENTS = 2 ** 21

type ForStmt = Extract<Stmt, { kind: 'for' }>
type AllocStmt = Extract<Stmt, { kind: 'alloc' }>

/** A loop of f's block whose stages the gradient program keeps, with its inverse later in the block. */
export interface StagePair {
  /** `L`: its adjoint is the backward loop, which loads the stages. */
  forward: ForStmt
  /** `L′ = ~L`, later in the same block: its adjoint runs first (L value-wise) and stores them. */
  inverse: ForStmt
  /** p: L's body is `head(p); middle; ~head(p)` with a nonempty middle. */
  split: number
  /** The f64 scalar ancillas that head allocates first, `x <- 0.0`, and leaves live: the stages. */
  stages: AllocStmt[]
  /** The roots L's body writes. */
  written: ReadonlySet<string>
}

/** Which parameters a callee (function or bijection) writes, or undefined when unknown. */
export type WrittenArgs = (s: Extract<Stmt, { kind: 'callstmt' }>) => readonly boolean[] | undefined

/**
 * The roots `body` writes (update targets, written call arguments, names allocated or freed), or
 * undefined when it has a statement whose effects are not known here (`@safe`, a stack operation,
 * a call whose written parameters are unknown).
 */
function writtenRoots(body: readonly Stmt[], written: WrittenArgs): Set<string> | undefined {
  const out = new Set<string>()
  let ok = true
  const add = (a: Arg | Expr) => {
    const r = rootName(a as Arg)
    if (r === undefined) ok = false
    else out.add(r)
  }
  walk(body as Stmt[], (x) => {
    switch (x.kind) {
      case 'update':
        add(x.target)
        break
      case 'callstmt': {
        const w = written(x)
        if (!w) ok = false
        else
          x.args.forEach((a, i) => {
            if (w[i]) add(a)
          })
        break
      }
      case 'alloc':
      case 'dealloc':
        out.add(x.name)
        break
      case 'push':
      case 'pop':
      case 'safe':
        ok = false
        break
    }
  })
  return ok ? out : undefined
}

/** Every name whose value a statement list reads or writes (loop headers and conditions included). */
function mentioned(body: readonly Stmt[]): Set<string> {
  const out = new Set<string>()
  walk(body as Stmt[], (x) => {
    switch (x.kind) {
      case 'update':
        valueReads(x.target, out)
        valueReads(x.value, out)
        break
      case 'callstmt':
        for (const a of x.args) valueReads(a, out)
        break
      case 'alloc':
      case 'dealloc':
        out.add(x.name)
        if (x.value.kind !== 'emptystack') valueReads(x.value, out)
        break
      case 'if':
        valueReads(x.pre, out)
        if (x.post) valueReads(x.post, out)
        break
      case 'while':
        valueReads(x.pre, out)
        valueReads(x.post, out)
        break
      case 'for':
        out.add(x.variable)
        valueReads(x.start, out)
        valueReads(x.stop, out)
        if (x.step) valueReads(x.step, out)
        break
      case 'push':
      case 'pop':
        out.add(x.stack.name)
        valueReads(x.value, out)
        break
      case 'safe':
        valueReads(x.expr, out)
        break
    }
  })
  return out
}

const isZeroF64Scalar = (s: Stmt): s is AllocStmt =>
  s.kind === 'alloc' &&
  s.type?.kind === 'scalar' &&
  s.type.name === 'f64' &&
  s.value.kind === 'num' &&
  s.value.value === 0

/**
 * The split of a loop body `head(p); middle; ~head(p)` whose head starts with the f64 scalar
 * ancillas it leaves live (`x <- 0.0`) and then writes nothing but them and ancillas of its own,
 * with the largest such p and a nonempty middle; undefined where there is none.
 */
function splitStages(body: readonly Stmt[], written: WrittenArgs): { split: number; stages: AllocStmt[] } | undefined {
  const n = body.length
  const printed = body.map((x) => printStmt(x, 0))
  const inverted = body.map((x) => printStmt(invertStmt(x), 0))
  for (let p = Math.floor((n - 1) / 2); p >= 1; p--) {
    let match = true
    for (let t = 0; t < p && match; t++) match = printed[n - p + t] === inverted[p - 1 - t]
    if (!match) continue
    const head = body.slice(0, p)
    let m = 0
    while (m < p && isZeroF64Scalar(head[m]!)) m++
    if (m === 0) return undefined
    const stages = head.slice(0, m) as AllocStmt[]
    const names = new Set(stages.map((s) => s.name))
    if (names.size !== m) return undefined
    const rest = head.slice(m)
    // the rest writes only the stages and ancillas it allocates and frees itself
    const own = new Set<string>()
    walk(rest, (x) => {
      if (x.kind === 'alloc') own.add(x.name)
    })
    const open = new Map<string, number>()
    for (const x of rest) {
      if (x.kind === 'alloc') open.set(x.name, (open.get(x.name) ?? 0) + 1)
      else if (x.kind === 'dealloc') {
        if (names.has(x.name)) return undefined
        open.set(x.name, (open.get(x.name) ?? 0) - 1)
      }
    }
    if ([...open.values()].some((c) => c !== 0)) return undefined
    const writes = writtenRoots(rest, written)
    if (!writes || [...writes].some((r) => !names.has(r) && !own.has(r))) return undefined
    return { split: p, stages }
  }
  return undefined
}

/**
 * The stage pairs of a block of `f` (see the file comment), by their two loops. A loop `L`
 * qualifies when a later statement of the same block is printed as `~L`, the statements between
 * them write nothing that L mentions (and have no host effects or stacks), and L's body splits
 * as `splitStages` says.
 */
export function stagePairs(body: readonly Stmt[], written: WrittenArgs): Map<Stmt, StagePair> {
  const out = new Map<Stmt, StagePair>()
  const taken = new Set<Stmt>()
  // each loop printed as it is (inverted twice: inverting a deallocation declares the allocation's
  // type) and inverted, once per block
  const loops = body.flatMap((x, i) => (x.kind === 'for' ? [i] : []))
  if (loops.length < 2) return out
  const asIs = new Map(loops.map((i) => [i, printStmt(invertStmt(invertStmt(body[i]!)), 0)]))
  const inverted = new Map(loops.map((i) => [i, printStmt(invertStmt(body[i]!), 0)]))
  for (const i of loops) {
    const L = body[i]!
    if (L.kind !== 'for' || taken.has(L)) continue
    const want = inverted.get(i)
    let j = i + 1
    while (j < body.length && !(asIs.get(j) === want && !taken.has(body[j]!))) j++
    if (j >= body.length) continue
    const between = writtenRoots(body.slice(i + 1, j), written)
    if (!between) continue
    const reads = mentioned([L])
    if ([...between].some((r) => reads.has(r))) continue
    const split = splitStages(L.body, written)
    const inside = writtenRoots(L.body, written)
    if (!split || !inside) continue
    const pair: StagePair = { forward: L, inverse: body[j] as ForStmt, ...split, written: inside }
    out.set(L, pair)
    out.set(body[j]!, pair)
    taken.add(L).add(body[j]!)
  }
  return out
}
