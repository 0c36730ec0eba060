/**
 * Blocked stored scans (code generation): a stored `scanl ⊕ z A`, ⊕ one of + and ·, its
 * elements loop-free, is computed as four chains in one loop, one per block of indices, each
 * from the unit. The array then holds each block's *local* states L; the scan's state at index j
 * of block k is f_k ⊕ L[j], with the block offsets f_0 = z and f_{k+1} = f_k ⊕ T_k (T_k the
 * total of block k, the last local state of its chain). One chain is latency-bound (each state
 * waits for the previous one); four are not.
 *
 * The offsets are applied where the states are read, not by a second pass over the array (which
 * costs what the shorter chains save):
 *
 * - `last S` is f_3 ⊕ T_3;
 * - a blocked map over another scan (`blockedMapOverScan`) that reads S (or `shift1R S`) runs its
 *   four blocks over the same indices as S's blocks, so each of its chains reads one block of S
 *   and adds that block's offset: f_k ⊕ L[j], no chain, no branch. When the map's own scan has
 *   the same operator over the same array (A for a `scanl`, `shift1L A` for a `scanr`, or A for
 *   the exclusive `shift1L (scanr … A)`: the prefix and suffix products of ∇prod, the rule for
 *   `reduce`), the block totals its
 *   chains start from are S's totals: no pass to compute them;
 * - any other use (found when the generated code reads S as a variable) first fixes the array up
 *   in place (a loop adding f_k to block k), once, at that point of the code; the rewrite is only
 *   made when every use of S is in S's own scope (no loop or lambda body, no branch), so that
 *   point runs once.
 *
 * loadsFirst: in these loops an element is read before the iteration's store (the scan's state,
 * the map's result), not after it. The arrays are large allocations, each at the same offset in
 * its pages, so the element and the stored index share their address bits below 4 KiB, and a
 * load issued after such a store waits on it (the CPU compares those bits only, "4K aliasing"):
 * about a tenth of ∇prod's time. Reading first is also what a map means when its output is one
 * of its inputs (in place): it reads the old element.
 *
 * As for `reduce` and the blocked maps over scans, the operator is associative (the paper's
 * `reduce` asks for it, and + and · are), so any grouping is the scan's meaning; the states differ
 * from one left-to-right chain by rounding only.
 */
import { scannedArray, type ScanRead } from './exclusive-scans.js'
import { sameScope } from './share-scans.js'
import { alphaEqual, freeVars, mapChildren, type Term } from './term.js'
import { arrayType, R, type Type } from './types.js'

type ScanTerm = Extract<Term, { k: 'reduce' | 'fold' | 'scanl' | 'scanr' }>

/** What a blocked stored scan left for its readers. */
export interface BlockedScan {
  /** the local holding the states (local within each block) */
  states: string
  op: '+' | '*'
  unit: string
  /** the scan's array term (A), to recognise a scan over the same array */
  array: Term
  /** the length of A (the scan has m + 1 states) */
  m: string
  /** the block length B; block k starts at k·B, block 3 runs to index m */
  run: string
  /** block starts: 0, B, 2B, 3B */
  starts: [string, string, string, string]
  /** f_k: what block k's local states are combined with; f_0 is z */
  offsets: [string, string, string, string]
  /** whether z is ⊕'s unit (block 0 needs no offset) */
  unitInit: boolean
  /** T_k, each block's total (T_3 up to index m) */
  totals: [string, string, string, string]
  /** the array holds the first m states only (the last is f_3 ⊕ T_3: `trimmedScans` in in-place-maps.ts) */
  trimmed: boolean
}

/** The part of the code generator the blocked scans use. */
export interface ScanEmitter<TV extends { v: unknown; t: Type }, Src extends SourceLike<TV>> {
  lines: string[]
  /** the blocked scans not yet fixed up (a snapshot is restored when emitted lines are discarded) */
  blockedScans: Map<string, BlockedScan>
  line(s: string): void
  local(expr: string, base?: string): string
  fresh(base?: string): string
  indent<T>(f: () => T): T
  emit(x: Term, env: ReadonlyMap<string, TV>): TV
  source(a: Term, env: ReadonlyMap<string, TV>): Src
  sourceLength(sources: Src[]): string
  allocate(t: Type, n: string): unknown
  store(out: unknown, v: unknown, j: string): void
  /** the array a map marked in place writes its result into (in-place-maps.ts), if any */
  inPlaceOutput(x: Term, env: ReadonlyMap<string, TV>, elem: Type): string | undefined
}

/** An array read by a loop (codegen's `Source`). */
export interface SourceLike<TV> {
  length: string
  elem: (j: string) => TV
  dir?: 'L' | 'R'
}

/** Whether every occurrence of `name` in `t` is in t's scope (not in a loop or lambda body, not in a branch). */
export function usedOnlyInScope(t: Term, name: string): boolean {
  if (t.k === 'var') return true
  if (t.k === 'let') return usedOnlyInScope(t.value, name) && (t.name === name || usedOnlyInScope(t.body, name))
  const same = new Set(sameScope(t))
  const rest = mapChildren(t, (c) => (same.has(c) ? ({ k: 'const', value: 0 } as Term) : c))
  if (freeVars(rest).has(name)) return false
  return [...same].every((c) => usedOnlyInScope(c, name))
}

/**
 * Emits `scanl ⊕ z A` as four chains (see the module comment); undefined (nothing emitted) when
 * z or A's elements are not reals or A's elements are not loop-free. `trimmed`: the array holds
 * the first m states, not the last.
 */
export function emitBlockedScanl<TV extends { v: unknown; t: Type }, Src extends SourceLike<TV>>(
  g: ScanEmitter<TV, Src>,
  x: ScanTerm,
  op: '+' | '*',
  env: ReadonlyMap<string, TV>,
  trimmed = false,
): { value: TV; scan: BlockedScan } | undefined {
  if (x.k !== 'scanl') return undefined
  const saved = g.lines
  const pending = new Map(g.blockedScans)
  g.lines = []
  const init = g.emit(x.init, env)
  const arr = g.source(x.array, env)
  const setup = g.lines
  g.lines = []
  const probe = arr.elem('0')
  const loopFree = !g.lines.some((l) => /\bfor \(/.test(l))
  g.lines = saved
  if (!loopFree || init.t.kind !== 'R' || probe.t.kind !== 'R' || arr.dir) {
    g.blockedScans = pending
    return undefined
  }
  g.lines.push(...setup)
  const unit = op === '+' ? '0' : '1'
  const m = arr.length
  const states = g.allocate(arrayType(R), trimmed ? m : `${m} + 1`) as string
  const run = g.local(`${m} >> 2`, 'n')
  const starts: [string, string, string, string] = ['0', run, g.local(`2 * ${run}`, 'b'), g.local(`3 * ${run}`, 'b')]
  const chain = [0, 1, 2, 3].map(() => g.fresh('acc'))
  g.line(`let ${chain.map((c) => `${c} = ${unit}`).join(', ')};`)
  const at = (k: number, i: string) => (k === 0 ? i : `${starts[k]} + ${i}`)
  // the element is read before the state is stored (loadsFirst)
  const step = (k: number, j: string) => {
    const e = arr.elem(j).v as string
    g.line(`${states}[${j}] = ${chain[k]};`)
    g.line(`${chain[k]} = ${chain[k]} ${op} ${e};`)
  }
  const i = g.fresh('j')
  g.line(`for (let ${i} = 0; ${i} < ${run}; ${i}++) {`)
  g.indent(() => {
    for (let k = 0; k < 4; k++) step(k, at(k, i))
  })
  g.line('}')
  const r = g.fresh('j')
  g.line(`for (let ${r} = ${starts[3]} + ${run}; ${r} < ${m}; ${r}++) {`)
  g.indent(() => step(3, r))
  g.line('}')
  if (!trimmed) g.line(`${states}[${m}] = ${chain[3]};`)
  const totals = chain.map((c) => g.local(c, 'T')) as [string, string, string, string]
  const unitInit = x.init.k === 'const' && x.init.value === (op === '+' ? 0 : 1)
  const f0 = init.v as string
  const f1 = unitInit ? totals[0] : g.local(`${f0} ${op} ${totals[0]}`, 'f')
  const f2 = g.local(`${f1} ${op} ${totals[1]}`, 'f')
  const f3 = g.local(`${f2} ${op} ${totals[2]}`, 'f')
  return {
    value: { v: states, t: arrayType(R) } as TV,
    scan: { states, op, unit, array: x.array, m, run, starts, offsets: [f0, f1, f2, f3], unitInit, totals, trimmed },
  }
}

/** `last S`: the last block's offset combined with its total. */
export function blockedLast(g: { local(expr: string, base?: string): string }, s: BlockedScan): string {
  return g.local(`${s.offsets[3]} ${s.op} ${s.totals[3]}`)
}

/** The states made true in place (a use that reads S as an array): block k combined with f_k. */
export function fixUpBlockedScan(
  g: { line(s: string): void; fresh(base?: string): string; indent<T>(f: () => T): T },
  s: BlockedScan,
): void {
  const i = g.fresh('j')
  const fix = (k: number, j: string) => g.line(`${s.states}[${j}] = ${s.offsets[k]} ${s.op} ${s.states}[${j}];`)
  g.line(`for (let ${i} = 0; ${i} < ${s.run}; ${i}++) {`)
  g.indent(() => {
    for (let k = s.unitInit ? 1 : 0; k < 3; k++) fix(k, k === 0 ? i : `${s.starts[k]} + ${i}`)
  })
  g.line('}')
  const r = g.fresh('j')
  g.line(`for (let ${r} = ${s.starts[3]}; ${r} ${s.trimmed ? '<' : '<='} ${s.m}; ${r}++) {`)
  g.indent(() => fix(3, r))
  g.line('}')
}

/** The view of a blocked scan a map reads: S itself or `shift1R S` (the same indices). */
export function blockedView(a: Term, find: (name: string) => BlockedScan | undefined): BlockedScan | undefined {
  const inner = a.k === 'shift1R' ? a.array : a
  return inner.k === 'var' ? find(inner.name) : undefined
}

/**
 * `map f (scan ⊕' z' X) … S …` with S (or `shift1R S`) a blocked scan: the map's four blocks are
 * S's blocks, each chain adding its block's offset to the states of S it reads. The map's scan
 * starts each block from z' combined with the totals of the blocks before it in its direction:
 * S's totals when ⊕' = ⊕ and X is S's array (scanl, or an exclusive scanr: exclusive-scans.ts) or
 * `shift1L` of it (scanr), otherwise three
 * interleaved reductions first. Undefined (nothing emitted) when a body or an element has loops.
 */
export function alignedMapOverScan<TV extends { v: unknown; t: Type }, Src extends SourceLike<TV>>(
  g: ScanEmitter<TV, Src>,
  x: Extract<Term, { k: 'map' }>,
  env: ReadonlyMap<string, TV>,
  keep: number[],
  scanAt: number,
  read: ScanRead,
  op: '+' | '*',
  views: ReadonlyMap<number, BlockedScan>,
): TV | undefined {
  const scan = read.scan
  const left = scan.k === 'scanl'
  const unit = op === '+' ? '0' : '1'
  const s = [...views.values()][0]!
  const viewKinds = new Set([...views.keys()].map((i) => x.arrays[i]!.k))
  if ([...views.values()].some((w) => w !== s) || viewKinds.size !== 1) return undefined
  const saved = g.lines
  const pending = new Map(g.blockedScans)
  g.lines = []
  const init = g.emit(scan.init, env)
  const arr = scannedArray(g, read, env)
  const mx = arr.length
  const states = g.local(`${mx} + 1`, 'n')
  const others = x.arrays.map((a, i) =>
    keep.includes(i) && i !== scanAt && !views.has(i) ? g.source(a, env) : undefined,
  )
  // S's view has m + 1 (S) or m (shift1R S) elements
  const viewLength = x.arrays.some((a, i) => views.has(i) && a.k !== 'shift1R') ? `${s.m} + 1` : s.m
  const n = g.sourceLength([
    { length: states, elem: () => init } as unknown as Src,
    { length: viewLength, elem: () => init } as unknown as Src,
    ...others.filter((o): o is Src => o !== undefined),
  ])
  const setup = g.lines
  g.lines = []
  const probeEnv = new Map(env).set(x.params[scanAt]!, { v: 'probe', t: R } as TV)
  views.forEach((_, i) => probeEnv.set(x.params[i]!, { v: 'probe', t: R } as TV))
  others.forEach((o, i) => {
    if (o) probeEnv.set(x.params[i]!, o.elem('0'))
  })
  const elem = arr.elem('0')
  const body = g.emit(x.body, probeEnv)
  const loopFree = !g.lines.some((l) => /\bfor \(/.test(l))
  g.lines = saved
  if (!loopFree || init.t.kind !== 'R' || elem.t.kind !== 'R' || body.t.kind !== 'R' || arr.dir) {
    g.blockedScans = pending
    return undefined
  }
  g.lines.push(...setup)
  // block k: map indices [start_k, end_k), end_k = start_{k+1}, end_3 = n
  const run = s.run
  const ends = [s.starts[1], s.starts[2], s.starts[3], n]
  const at = (k: number, i: string) => (left ? (k === 0 ? i : `${s.starts[k]} + ${i}`) : `${ends[k]} - 1 - ${i}`)
  // the element that advances the state at index j: X[j] (scanl), X[j − 1] (scanr)
  const next = (j: string) => arr.elem(left ? j : `${j} - 1`).v as string
  // the totals of the map's scan over each block (in its direction), before the chains
  // (an exclusive scanr over A scans the virtual shift1L A: exclusive-scans.ts)
  const sameArray =
    op === s.op &&
    (left || read.exclusive
      ? alphaEqual(scan.array, s.array)
      : scan.array.k === 'shift1L' && alphaEqual(scan.array.array, s.array))
  let totals: string[]
  if (sameArray) {
    // scanl: the blocks of X = A before block k are S's; scanr: X[end_k − 1 …] = A[end_k …], S's later blocks
    totals = left ? [s.totals[0], s.totals[1], s.totals[2]] : [s.totals[1], s.totals[2], s.totals[3]]
  } else {
    totals = [0, 1, 2].map(() => g.fresh('acc'))
    g.line(`let ${totals.map((t) => `${t} = ${unit}`).join(', ')};`)
    const i0 = g.fresh('j')
    // scanl: U_k = X[start_k, start_k + B); scanr: V_k = X[end_k − 1, end_{k+1} − 1), V_2 to X's end
    const idx = (k: number, i: string) => (left ? (k === 0 ? i : `${s.starts[k]} + ${i}`) : `${ends[k]} - 1 + ${i}`)
    g.line(`for (let ${i0} = 0; ${i0} < ${run}; ${i0}++) {`)
    g.indent(() => totals.forEach((t, k) => g.line(`${t} = ${t} ${op} ${arr.elem(idx(k, i0)).v as string};`)))
    g.line('}')
    if (!left) {
      const r0 = g.fresh('j')
      g.line(`if (${run} > 0) for (let ${r0} = ${ends[2]} - 1 + ${run}; ${r0} < ${mx}; ${r0}++) {`)
      g.indent(() => g.line(`${totals[2]} = ${totals[2]} ${op} ${arr.elem(r0).v as string};`))
      g.line('}')
    }
  }
  const chain = [0, 1, 2, 3].map(() => g.fresh('acc'))
  if (left) {
    g.line(`let ${chain[0]} = ${init.v as string};`)
    for (let k = 1; k < 4; k++) g.line(`let ${chain[k]} = ${chain[k - 1]} ${op} ${totals[k - 1]};`)
  } else {
    g.line(`let ${chain[3]} = ${init.v as string};`)
    for (let k = 2; k >= 0; k--) g.line(`let ${chain[k]} = ${totals[k]} ${op} ${chain[k + 1]};`)
  }
  const out = g.inPlaceOutput(x, env, body.t) ?? g.allocate(arrayType(body.t), n)
  const element = (k: number, i: string) => {
    const j = at(k, i)
    const e = new Map(env).set(x.params[scanAt]!, { v: chain[k]!, t: R } as TV)
    views.forEach((w, q) => {
      const l = g.local(`${w.states}[${j}]`, 'e')
      const v = k === 0 && w.unitInit ? l : g.local(`${w.offsets[k]} ${w.op} ${l}`)
      e.set(x.params[q]!, { v, t: R } as TV)
    })
    others.forEach((o, q) => {
      if (o) e.set(x.params[q]!, o.elem(j))
    })
    const r = g.emit(x.body, e).v
    // the scan's last state has no successor: index mx (scanl, in block 3), index 0 (scanr, in
    // block 0, or in block 3 when the others are empty)
    // (none for an exclusive scan: its last advance reads an element of X, exclusive-scans.ts)
    const guarded = !read.exclusive && (left ? k === 3 : k === 0 || k === 3)
    // an unguarded advance reads its element before the store (loadsFirst)
    const early = guarded ? undefined : next(j)
    g.store(out, r, j)
    const adv = () => g.line(`${chain[k]} = ${chain[k]} ${op} ${early ?? next(j)};`)
    if (guarded) {
      g.line(left ? `if (${j} < ${mx}) {` : `if (${j} > 0) {`)
      g.indent(adv)
      g.line('}')
    } else adv()
  }
  const i = g.fresh('j')
  g.line(`for (let ${i} = 0; ${i} < ${run}; ${i}++) {`)
  g.indent(() => {
    for (let k = 0; k < 4; k++) element(k, i)
  })
  g.line('}')
  g.line(`for (let ${i} = ${run}; ${i} < ${n} - ${s.starts[3]}; ${i}++) {`)
  g.indent(() => element(3, i))
  g.line('}')
  return { v: out, t: arrayType(body.t) } as TV
}
