/**
 * A rewrite before code generation: a `reduce` and a `scanl` of the same operator, initial value
 * and array compute the same states, the reduce only the last. The paper's rule for `reduce`
 * (∇prod, Example 1.2) asks for both: the value and the prefix products. They share one loop:
 *
 *   … reduce f z A … scanl f z A …  ⇝  let S = scanl f z A in … last S … S …
 *
 * Found within one scope (a let spine: the program, or one loop body), outside conditionals and
 * nested loop bodies, with `z` and `A` variables or constants (so `S` can be bound before the
 * reduce). The rewrite is pure (no evaluation order is observable) and keeps the cost: the scan
 * was computed anyway.
 */
import { alphaEqual, fresh, mapChildren, v, type Term } from './term.js'

/** Shares the loop of each `reduce` with an equal `scanl` in its scope. */
export function shareScans(t: Term): Term {
  return inScope(t)
}

const isAtom = (x: Term) => x.k === 'var' || x.k === 'const'

/** The children of x evaluated in x's scope (not loop or lambda bodies, not branches). */
export function sameScope(x: Term): Term[] {
  switch (x.k) {
    case 'let':
    case 'lam':
      return []
    case 'if':
      return [x.cond]
    case 'map':
      return x.arrays
    case 'reduce':
    case 'fold':
    case 'scanl':
    case 'scanr':
      return [x.init, x.array]
    case 'mapAccum':
      return [x.carryInit, x.sumInit, ...x.arrays]
    case 'const':
    case 'bool':
    case 'var':
      return []
    default:
      return mapChildrenList(x)
  }
}

function mapChildrenList(x: Term): Term[] {
  const out: Term[] = []
  mapChildren(x, (c) => {
    out.push(c)
    return c
  })
  return out
}

/** Every node reachable from t in t's scope, t included. */
function visible(t: Term, out: Term[] = []): Term[] {
  out.push(t)
  for (const c of sameScope(t)) visible(c, out)
  return out
}

/** Rebuilds t with the nodes of `repl` (by identity, in t's scope) replaced. */
function replace(t: Term, repl: ReadonlyMap<Term, Term>): Term {
  const r = repl.get(t)
  if (r) return r
  const kids = new Set(sameScope(t))
  if (kids.size === 0) return t
  return mapChildren(t, (c) => (kids.has(c) ? replace(c, repl) : c))
}

/** One scope: its let spine, with nested scopes handled first. */
function inScope(t: Term): Term {
  const lets: Array<{ name: string; value: Term }> = []
  let fin = t
  while (fin.k === 'let') {
    lets.push({ name: fin.name, value: fin.value })
    fin = fin.body
  }
  const items = [...lets.map((l) => l.value), fin].map(nested)
  const before: Array<Array<{ name: string; value: Term }>> = items.map(() => [])
  for (let i = 0; i < items.length; i++) {
    for (const r of visible(items[i]!)) {
      if (r.k !== 'reduce' || !isAtom(r.init) || !isAtom(r.array)) continue
      const asScan: Term = { ...r, k: 'scanl' }
      const found: Array<{ at: number; node: Term }> = []
      for (let j = i; j < items.length; j++) {
        for (const s of visible(items[j]!)) if (s.k === 'scanl' && alphaEqual(s, asScan)) found.push({ at: j, node: s })
      }
      if (found.length === 0) continue
      const name = fresh('S')
      before[i]!.push({ name, value: found[0]!.node })
      for (let j = i; j < items.length; j++) {
        const repl = new Map<Term, Term>(found.filter((f) => f.at === j).map((f) => [f.node, v(name)]))
        if (j === i) repl.set(r, { k: 'last', array: v(name) })
        if (repl.size > 0) items[j] = replace(items[j]!, repl)
      }
      break // one reduce per spine element and pass: the scan of another is found next time
    }
  }
  let out = items[items.length - 1]!
  for (let i = items.length - 1; i >= 0; i--) {
    if (i < lets.length) out = { k: 'let', name: lets[i]!.name, value: items[i]!, body: out }
    for (const b of before[i]!.slice().reverse()) out = { k: 'let', name: b.name, value: b.value, body: out }
  }
  return out
}

/** Nested scopes of a term evaluated in the current scope: loop and lambda bodies, branches. */
function nested(x: Term): Term {
  const same = new Set(sameScope(x))
  return mapChildren(x, (c) => (same.has(c) ? nested(c) : inScope(c)))
}
