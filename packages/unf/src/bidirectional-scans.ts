/**
 * Bidirectional scan fusion (code generation): a map that reads a `scanl` and a `scanr` of the
 * same length (each as a scan or as its exclusive form, `shift1R (scanl …)` / `shift1L (scanr …)`,
 * exclusive-scans.ts) runs both scans in one loop, from both ends at once:
 *
 * ```
 * map2 g (scanl f z A) (scanr h w B)          (n states each)
 * ```
 *
 * Iteration i advances the left scan at index i and the right scan at index n − 1 − i, so the two
 * chains of states (each waits for its previous state: latency-bound) overlap. Whichever scan
 * reaches an index first stores its state in the result's array there; the second applies g to
 * its own state and the stored one, in g's argument order (`g(l, out[i])` when the left scan
 * arrives second, `g(out[k], r)` when the right one does). In the first ⌊n/2⌋ iterations both
 * store; for odd n the middle index is reached by both in the same iteration (g of the two
 * states); in the rest both apply g. One loop, one array (the result), where the unfused code
 * runs the right scan into an array of its n states and then the map with the left scan fused
 * into it (two loops, one chain after the other, two arrays).
 *
 * Each chain advances over the same indices in the same order as in its own loop, with the same
 * operations, and g is applied to the same three values, so the result is bit for bit the
 * unfused one, whatever f, h and g are. It needs the states and g's results to be reals (the
 * states are kept in the result's Float64Array until their partner arrives); other arrays of the
 * map are read by index at either end.
 *
 * It applies to the scans written in the map's arrays. A scan bound by a `let` is emitted there
 * (a blocked stored scan when it is + or ·, blocked-scans.ts); ∇prod's map reads such a scan
 * (`shift1R S`, S shared with the value `last S`) beside its suffix products, and keeps its
 * two blocked passes (four chains each, written into the result's array), which are faster than
 * two chains in one loop.
 */
import type { BlockedScan } from './blocked-scans.js'
import { scanRead, type ScanRead } from './exclusive-scans.js'
import type { Term } from './term.js'
import { arrayType, R, type Type } from './types.js'

/** An array read by a loop (codegen's `Source`); a scan's states advance after each index. */
export interface BidirectionalSource<TV> {
  length: string
  elem: (j: string) => TV
  dir?: 'L' | 'R'
  advance?: (j: string) => void
}

/** The part of the code generator this fusion uses. */
export interface BidirectionalEmitter<TV extends { v: unknown; t: Type }, Src extends BidirectionalSource<TV>> {
  lines: string[]
  /** the blocked scans not yet fixed up (a snapshot is restored when emitted lines are discarded) */
  blockedScans: Map<string, BlockedScan>
  /** arrays of reals the code allocated for a map (what an in-place map may overwrite) */
  mapArrays: Set<string>
  line(s: string): void
  local(expr: string, base?: string): string
  fresh(base?: string): string
  indent<T>(f: () => T): T
  emit(x: Term, env: ReadonlyMap<string, TV>): TV
  source(a: Term, env: ReadonlyMap<string, TV>): Src
  /** a scan's states produced by the reading loop (one local, advanced after each index) */
  scanSource(read: ScanRead, env: ReadonlyMap<string, TV>): Src
  sourceLength(sources: Src[]): string
  allocate(t: Type, n: string): unknown
  store(out: unknown, v: unknown, j: string): void
}

/**
 * The two scans of a map this fusion applies to: the indices (among the map's arrays) of the one
 * left and the one right scan the body reads, when those are the map's only scans; undefined
 * otherwise.
 */
export function bidirectionalPair(
  x: Extract<Term, { k: 'map' }>,
  keep: readonly number[],
  reads: ReadonlySet<string>,
): { left: number; right: number } | undefined {
  const scans = keep.filter((i) => scanRead(x.arrays[i]!) !== undefined)
  if (scans.length !== 2) return undefined
  const left = scans.find((i) => scanRead(x.arrays[i]!)!.scan.k === 'scanl')
  const right = scans.find((i) => scanRead(x.arrays[i]!)!.scan.k === 'scanr')
  if (left === undefined || right === undefined) return undefined
  if (!reads.has(x.params[left]!) || !reads.has(x.params[right]!)) return undefined
  if (x.params[left] === x.params[right]) return undefined
  return { left, right }
}

/**
 * Emits the map with its left and right scans run from both ends of one loop (see the module
 * comment); undefined (nothing emitted) when a state or the body's value is not a real.
 */
export function bidirectionalMap<TV extends { v: unknown; t: Type }, Src extends BidirectionalSource<TV>>(
  g: BidirectionalEmitter<TV, Src>,
  x: Extract<Term, { k: 'map' }>,
  env: ReadonlyMap<string, TV>,
  keep: readonly number[],
  reads: ReadonlySet<string>,
  pair: { left: number; right: number },
): TV | undefined {
  const saved = g.lines
  const pending = new Map(g.blockedScans) // fix-ups in discarded lines are undone with them
  g.lines = []
  const sources = x.arrays.map((a, i) => {
    if (!keep.includes(i)) return undefined
    return i === pair.left || i === pair.right ? g.scanSource(scanRead(a)!, env) : g.source(a, env)
  })
  const n = g.sourceLength(sources.filter((s): s is Src => s !== undefined))
  const setup = g.lines
  const left = sources[pair.left]!,
    right = sources[pair.right]!
  const l = left.elem('0'),
    r = right.elem('0')
  // the body at index j with the left state `lv` and the right state `rv`
  const bodyAt = (j: string, lv: string, rv: string): TV => {
    const e = new Map(env)
    x.params.forEach((p, q) => {
      if (q === pair.left) e.set(p, { v: lv, t: R } as TV)
      else if (q === pair.right) e.set(p, { v: rv, t: R } as TV)
      else if (sources[q] && reads.has(p)) e.set(p, sources[q]!.elem(j))
    })
    return g.emit(x.body, e)
  }
  let fits = l.t.kind === 'R' && r.t.kind === 'R' && left.dir === 'L' && right.dir === 'R'
  if (fits) {
    // probe the body's type (lines discarded)
    g.lines = []
    fits = bodyAt('0', l.v as string, r.v as string).t.kind === 'R'
  }
  g.lines = saved
  if (!fits) {
    g.blockedScans = pending
    return undefined
  }
  g.lines.push(...setup)
  const lv = l.v as string,
    rv = r.v as string
  const out = g.allocate(arrayType(R), n) as string
  g.mapArrays.add(out)
  const half = g.local(`${n} >> 1`, 'n')
  const i = g.fresh('j')
  g.line(`let ${i} = 0;`)
  // both scans store: the left one at i, the right one at n − 1 − i
  g.line(`for (; ${i} < ${half}; ${i}++) {`)
  g.indent(() => {
    const k = g.local(`${n} - 1 - ${i}`, 'k')
    g.store(out, lv, i)
    left.advance!(i)
    g.store(out, rv, k)
    right.advance!(k)
  })
  g.line('}')
  // odd n: both reach the middle index in the same iteration
  g.line(`if (${i} + ${i} < ${n}) {`)
  g.indent(() => {
    g.store(out, bodyAt(i, lv, rv).v, i)
    left.advance!(i)
    right.advance!(i)
    g.line(`${i}++;`)
  })
  g.line('}')
  // both combine: the left scan with the right state stored at i, the right scan with the left
  // state stored at n − 1 − i
  g.line(`for (; ${i} < ${n}; ${i}++) {`)
  g.indent(() => {
    const k = g.local(`${n} - 1 - ${i}`, 'k')
    const storedR = g.local(`${out}[${i}]`, 'e')
    g.store(out, bodyAt(i, lv, storedR).v, i)
    left.advance!(i)
    const storedL = g.local(`${out}[${k}]`, 'e')
    g.store(out, bodyAt(k, storedL, rv).v, k)
    right.advance!(k)
  })
  g.line('}')
  return { v: out, t: arrayType(R) } as TV
}
