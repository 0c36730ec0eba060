/**
 * In-place maps: `let B = map f A in … map g B …` where that `map g B` is B's last use writes its
 * result into B's array instead of a new one. ∇logsumexp is the example: the exponentials are
 * stored (and summed) by one loop, and the softmax `map (b. b · (1/Σ)) B` scales them where they
 * are, so one n-element array is written and read twice instead of two arrays once each (and the
 * array returned is B's, allocated once per call as the softmax's was).
 *
 * The analysis is on the term code generation emits (`inPlaceMaps`); code generation honours it
 * only where B is an array of reals the generated code allocated for a map (never an argument,
 * a view, a row of another array, or a kept buffer shared with anything else) and the consuming
 * map yields reals. The conditions, on `let B = map … in body`:
 * - walking body's spine of lets (each value is evaluated before the next), every occurrence of B
 *   before the consuming map is consumed element by element by a loop (`map`, `reduce`, `fold`,
 *   `scanl`/`scanr` reading B as their array, or a `map`'s element): its value never aliases B;
 *   `first B` and `last B` read one element before the overwrite;
 * - the consuming map is a let value of the spine, or its result, or an item of a result tuple
 *   (nested or not) whose other items do not mention B, or, in the program's own result (emitted
 *   item by item in order; a sweep's body tuple is not), whose later items do not mention B and
 *   whose earlier items only consume it; B is one of its arrays exactly once, and neither its body
 *   nor its other arrays mention B. Iteration j reads B[j] before it writes B[j], and no other
 *   iteration reads B[j].
 * - no binder inside body rebinds the name B (then it gives up rather than track the scope).
 *
 * A stored scan is such an array too: `let S = scanl f z A in … map g (shift1R S) …` (or
 * `map g S`). ∇prod is the example: its prefix products S are stored, `last S` is the value,
 * and the gradient `map2 (·) (shift1R S) (suffix products)` is S's last use. When every use of S
 * is `shift1R S` or `last S` (`trimmedScans`), S's array holds its first |A| states only (code
 * generation keeps the last in a local, as a blocked scan does anyway), so the map writes its
 * |A| results over them and S's array is the gradient: one array, one allocation.
 */
import { children as childrenOf, type Term } from './term.js'

/** The maps that may write their result into one of their arrays: map term → the array's index. */
export function inPlaceMaps(t: Term): Map<Term, number> {
  return analyse(t).maps
}

/**
 * The stored scans `let S = scanl … in body` whose last state need not be stored: S's last use
 * is a map marked in place over `shift1R S`, and every use of S is `shift1R S` or `last S`. The
 * array then holds the first |A| states, so that the map's result (|A| elements) is S's array.
 */
export function trimmedScans(t: Term): Set<Term> {
  return analyse(t).trimmed
}

function analyse(t: Term): { maps: Map<Term, number>; trimmed: Set<Term> } {
  const maps = new Map<Term, number>()
  const trimmed = new Set<Term>()
  // `root`: x is on the program's own let spine, whose result tuple is emitted item by item in
  // order (a sweep's body tuple is not: its sums are accumulated after its outputs)
  const visit = (x: Term, root: boolean): void => {
    if (x.k === 'let' && (x.value.k === 'map' || x.value.k === 'scanl') && !rebinds(x.body, x.name)) {
      const scan = x.value.k === 'scanl'
      const found = consumer(x.name, x.body, scan, root)
      if (found) {
        maps.set(found.map, found.index)
        const target = (found.map as Extract<Term, { k: 'map' }>).arrays[found.index]!
        if (scan && target.k === 'shift1R' && shiftedOrLastOnly(x.body, x.name)) trimmed.add(x.value)
      }
    }
    if (x.k === 'let') {
      visit(x.value, false)
      visit(x.body, root)
    } else for (const s of childrenOf(x)) visit(s, false)
  }
  visit(t, true)
  return { maps, trimmed }
}

/** Whether every occurrence of `name` in `x` is `shift1R name` or `last name`. */
function shiftedOrLastOnly(x: Term, name: string): boolean {
  if ((x.k === 'shift1R' || x.k === 'last') && x.array.k === 'var' && x.array.name === name) return true
  if (x.k === 'var') return x.name !== name
  return childrenOf(x).every((s) => shiftedOrLastOnly(s, name))
}

/**
 * The map of `body` that is the last use of `name` and may overwrite it (see the module comment);
 * `shifted`: `name` is a scan's states, which a map may also read as `shift1R name` (its first
 * |A| states, at the map's own indices).
 */
function consumer(
  name: string,
  body: Term,
  shifted: boolean,
  ordered: boolean,
): { map: Term; index: number } | undefined {
  let cur = body
  while (cur.k === 'let') {
    if (mentions(cur.value, name)) {
      const target = overwrites(cur.value, name, shifted)
      if (target !== undefined && !mentions(cur.body, name)) return { map: cur.value, index: target }
      if (!consumedOnly(cur.value, name)) return undefined
    }
    cur = cur.body
  }
  return inResult(cur, name, shifted, ordered)
}

/**
 * The consuming map in the result: the result itself, or inside the one (nested) tuple item that
 * mentions B; in the program's own result (`ordered`, emitted item by item in order), inside the
 * last item that mentions B, the items before it consuming B element by element (`last B` or a
 * reduction of B is read before B is overwritten).
 */
function inResult(x: Term, name: string, shifted: boolean, ordered: boolean): { map: Term; index: number } | undefined {
  const index = overwrites(x, name, shifted)
  if (index !== undefined) return { map: x, index }
  if (x.k !== 'tuple') return undefined
  const using = x.items.filter((i) => mentions(i, name))
  if (using.length === 0 || (!ordered && using.length > 1)) return undefined
  if (!using.slice(0, -1).every((i) => consumedOnly(i, name))) return undefined
  return inResult(using[using.length - 1]!, name, shifted, ordered)
}

/** The index of `name` (or `shift1R name`, when `shifted`) among the map's arrays, when the map may write its result into it. */
function overwrites(x: Term, name: string, shifted = false): number | undefined {
  if (x.k !== 'map') return undefined
  const isName = (a: Term) => a.k === 'var' && a.name === name
  const at = x.arrays.findIndex((a) => isName(a) || (shifted && a.k === 'shift1R' && isName(a.array)))
  if (at < 0) return undefined
  if (x.params.includes(name)) return undefined
  if (mentions(x.body, name)) return undefined
  if (x.arrays.some((a, i) => i !== at && mentions(a, name))) return undefined
  return at
}

/** Whether every occurrence of `name` in `x` is an array a loop reads element by element. */
function consumedOnly(x: Term, name: string): boolean {
  const isName = (a: Term) => a.k === 'var' && a.name === name
  switch (x.k) {
    case 'var':
      return x.name !== name
    case 'map':
      return x.arrays.every((a) => isName(a) || consumedOnly(a, name)) && consumedOnly(x.body, name)
    case 'reduce':
    case 'fold':
    case 'scanl':
    case 'scanr':
      return (
        (isName(x.array) || consumedOnly(x.array, name)) && consumedOnly(x.init, name) && consumedOnly(x.body, name)
      )
    case 'first':
    case 'last':
      // one element, read before the overwrite
      return isName(x.array) || consumedOnly(x.array, name)
    default:
      return childrenOf(x).every((s) => consumedOnly(s, name))
  }
}

/** Whether `name` occurs in `x` (as a variable). */
function mentions(x: Term, name: string): boolean {
  if (x.k === 'var') return x.name === name
  return childrenOf(x).some((s) => mentions(s, name))
}

/** Whether a binder inside `x` binds `name`. */
function rebinds(x: Term, name: string): boolean {
  switch (x.k) {
    case 'let':
      if (x.name === name) return true
      break
    case 'map':
    case 'lam':
      if (x.params.includes(name)) return true
      break
    case 'reduce':
    case 'fold':
    case 'scanl':
    case 'scanr':
      if (x.acc === name || x.elem === name) return true
      break
    case 'mapAccum':
      if (x.carry === name || x.params.includes(name)) return true
      break
    default:
  }
  return childrenOf(x).some((s) => rebinds(s, name))
}
