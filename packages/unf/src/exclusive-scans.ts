/**
 * Exclusive scans, as a map reads them (code generation): `shift1R (scanl f z X)` and
 * `shift1L (scanr f z X)` hold, for each element of X, the state *before* it in the scan's
 * direction (z ⊕ the elements before it), one state per element. The reduce rule's suffix
 * products are one (`shift1L (scanr (·) 1 A)`, unf-inverse.ts), beside the prefix products
 * `shift1R (scanl (·) 1 A)`.
 *
 * A map reads such a scan as the scan it shifts over a *virtual* array X′ of |X| − 1 elements,
 * X without its last element (scanl) or its first (scanr): the states of a scan over X′ are the
 * shifted scan's states, and every loop that fuses a scan into a map (one chain, or four blocks)
 * then works unchanged. No state needs a guard: the element that advances a state past the last
 * one the map reads is still an element of X (the last advance computes a state nobody reads),
 * so the loops run without a branch per element. For |X| = 0 the virtual array has −1 elements
 * and the map none.
 */
import type { Term } from './term.js'
import type { Type } from './types.js'

type ScanTerm = Extract<Term, { k: 'reduce' | 'fold' | 'scanl' | 'scanr' }>

/** A scan among a map's arrays: the scan, and whether the map reads it shifted (exclusive). */
export interface ScanRead {
  /** a `scanl` or a `scanr` */
  scan: ScanTerm
  exclusive: boolean
}

/** The scan a map's array reads: a scan itself, or `shift1R (scanl …)` / `shift1L (scanr …)`. */
export function scanRead(a: Term): ScanRead | undefined {
  if (a.k === 'scanl' || a.k === 'scanr') return { scan: a, exclusive: false }
  if (a.k === 'shift1R' && a.array.k === 'scanl') return { scan: a.array, exclusive: true }
  if (a.k === 'shift1L' && a.array.k === 'scanr') return { scan: a.array, exclusive: true }
  return undefined
}

/** What the fused loops need of the scanned array (codegen's `Source`). */
export interface ScannedSource<TV> {
  length: string
  elem: (j: string) => TV
  dir?: 'L' | 'R'
}

/**
 * The array a fused loop scans: X itself, or for an exclusive scan the virtual X′ (length
 * |X| − 1, element q read from X at q, or q + 1 for a scanr).
 */
export function scannedArray<TV extends { v: unknown; t: Type }, Src extends ScannedSource<TV>>(
  g: { source(a: Term, env: ReadonlyMap<string, TV>): Src; local(expr: string, base?: string): string },
  read: ScanRead,
  env: ReadonlyMap<string, TV>,
): Src {
  const arr = g.source(read.scan.array, env)
  if (!read.exclusive) return arr
  const left = read.scan.k === 'scanl'
  return {
    ...arr,
    length: g.local(`${arr.length} - 1`, 'n'),
    elem: left ? arr.elem : (q: string) => arr.elem(q.endsWith(' - 1') ? q.slice(0, -4) : `${q} + 1`),
  }
}
