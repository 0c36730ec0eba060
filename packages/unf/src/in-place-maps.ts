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
 * - the consuming map is a let value of the spine, or its result, or an item of a result tuple
 *   (nested or not) whose other items do not mention B; B is one of its arrays exactly once, and neither its body
 *   nor its other arrays mention B. Iteration j reads B[j] before it writes B[j], and no other
 *   iteration reads B[j].
 * - no binder inside body rebinds the name B (then it gives up rather than track the scope).
 */
import { children as childrenOf, type Term } from './term.js'

/** The maps that may write their result into one of their arrays: map term → the array's index. */
export function inPlaceMaps(t: Term): Map<Term, number> {
  const out = new Map<Term, number>()
  const visit = (x: Term): void => {
    if (x.k === 'let' && x.value.k === 'map' && !rebinds(x.body, x.name)) {
      const found = consumer(x.name, x.body)
      if (found) out.set(found.map, found.index)
    }
    for (const s of childrenOf(x)) visit(s)
  }
  visit(t)
  return out
}

/** The map of `body` that is the last use of `name` and may overwrite it (see the module comment). */
function consumer(name: string, body: Term): { map: Term; index: number } | undefined {
  let cur = body
  while (cur.k === 'let') {
    if (mentions(cur.value, name)) {
      const target = overwrites(cur.value, name)
      if (target !== undefined && !mentions(cur.body, name)) return { map: cur.value, index: target }
      if (!consumedOnly(cur.value, name)) return undefined
    }
    cur = cur.body
  }
  return inResult(cur, name)
}

/** The consuming map in the result: the result itself, or inside the one (nested) tuple item that mentions B. */
function inResult(x: Term, name: string): { map: Term; index: number } | undefined {
  const index = overwrites(x, name)
  if (index !== undefined) return { map: x, index }
  if (x.k !== 'tuple') return undefined
  const using = x.items.filter((i) => mentions(i, name))
  return using.length === 1 ? inResult(using[0]!, name) : undefined
}

/** The index of `name` among the map's arrays, when the map may write its result into it. */
function overwrites(x: Term, name: string): number | undefined {
  if (x.k !== 'map') return undefined
  const at = x.arrays.findIndex((a) => a.k === 'var' && a.name === name)
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
