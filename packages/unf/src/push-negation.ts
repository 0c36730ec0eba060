/**
 * A rewrite before code generation: negations moved into the sweeps that produce what they
 * negate. The transpose of `a − b` hands `b` the negated cotangent, so a gradient often ends in
 *
 *   let G = mapAccum (… . (c, (s), (…, o, …))) … in … map (z. −z) (π₁ (π₂ G) +̂ π₂ (π₃ G)) …
 *
 * (the cotangent of the mean `μ` in `x − μ`: a sum over the factor's rows and a per-row output,
 * negated). Negating inside the sweep — its sum contribution and its output element — leaves a
 * bare sum of projections of G,
 *
 *   let G = mapAccum (… . (c, (map (z. −z) s), (…, −o, …))) … in … π₁ (π₂ G) +̂ π₂ (π₃ G) …
 *
 * which code generation can add straight into an enclosing accumulator (destination passing):
 * no array for the sum, no array for the output, no final pass that adds and negates them.
 *
 * The rules, bottom-up:
 * - `map (z. −z) (A +̂ B)` ⇝ `map (z. −z) A +̂ map (z. −z) B` (negation is linear);
 * - `map (z. −z) (map (x̄. e) Ā)` ⇝ `map (x̄. −e) Ā` (map fusion);
 * - `map (z. −z) (padTo C L)` ⇝ `padTo (map (z. −z) C) L` (the padding's zeros were −0 and
 *   are now +0: the same numbers up to the sign of a zero);
 * - in a let spine, `let G = mapAccum … in r` where r reads a sum `π_i (π₂ G)` (an array of reals)
 *   or an output `π_k (π₃ G)` (reals) once, and that once negated by a map: the sweep negates it,
 *   r reads it bare. A sum negated this way must start from zero (`−0̂ = 0̂`).
 * The rewrite itself is exact (IEEE negation commutes with rounding: −(a + b) = (−a) + (−b));
 * adding the parts into an accumulator one by one, as code generation then does, groups the
 * additions differently (rounding only).
 */
import { children, fresh, mapChildren, type Term } from './term.js'

/** Moves negations of sweep results into the sweeps (see the module comment). */
export function pushNegations(t: Term): Term {
  const x = mapChildren(t, pushNegations)
  if (x.k === 'let' && x.value.k === 'mapAccum') return intoSweep(x as Extract<Term, { k: 'let' }>)
  const inner = negated(x)
  if (inner?.k === 'add') return { k: 'add', a: pushNegations(negMap(inner.a)), b: pushNegations(negMap(inner.b)) }
  if (inner?.k === 'map') return { ...inner, body: neg(inner.body) }
  if (inner?.k === 'padTo') return { ...inner, array: pushNegations(negMap(inner.array)) }
  return x
}

/** `map (z. −z) A`. */
function negMap(a: Term): Term {
  const z = fresh('z')
  return { k: 'map', params: [z], body: { k: 'op', op: 'neg', args: [{ k: 'var', name: z }] }, arrays: [a] }
}

/** `−e`, with `−(−e)` ⇝ `e`. */
function neg(e: Term): Term {
  if (e.k === 'op' && e.op === 'neg' && e.args.length === 1) return e.args[0]!
  return { k: 'op', op: 'neg', args: [e] }
}

/** A, when x is `map (z. −z) A`. */
function negated(x: Term): Term | undefined {
  if (x.k !== 'map' || x.params.length !== 1 || x.arrays.length !== 1) return undefined
  const b = x.body
  if (
    b.k === 'op' &&
    b.op === 'neg' &&
    b.args.length === 1 &&
    b.args[0]!.k === 'var' &&
    b.args[0]!.name === x.params[0]
  )
    return x.arrays[0]
  return undefined
}

type Part = { of: 1 | 2; index: number }

/** `π_{index} (π_{of} name)` (0-based), or undefined. */
function partOf(t: Term, name: string): Part | undefined {
  if (t.k !== 'proj' || t.of.k !== 'proj' || t.of.of.k !== 'var' || t.of.of.name !== name) return undefined
  if (t.of.index !== 1 && t.of.index !== 2) return undefined
  return { of: t.of.index, index: t.index }
}

const key = (p: Part) => `${p.of}:${p.index}`

/** Counts every read of a part of `name` in t, and the negated ones. */
function uses(t: Term, name: string, all: Map<string, number>, neg: Map<string, number>): void {
  const p = partOf(t, name)
  if (p) {
    all.set(key(p), (all.get(key(p)) ?? 0) + 1)
    return
  }
  const inner = negated(t)
  const q = inner && partOf(inner, name)
  if (q) {
    all.set(key(q), (all.get(key(q)) ?? 0) + 1)
    neg.set(key(q), (neg.get(key(q)) ?? 0) + 1)
    return
  }
  for (const c of children(t)) uses(c, name, all, neg)
}

/** Whether t reads `name` other than through a part `πᵢ (πⱼ name)`. */
function readsWhole(t: Term, name: string): boolean {
  if (t.k === 'proj' && t.of.k === 'proj' && t.of.of.k === 'var' && t.of.of.name === name) return false
  if (t.k === 'var') return t.name === name
  return children(t).some((c) => readsWhole(c, name))
}

/** Replaces `map (z. −z) (part)` by `part` in t for the parts in `keys`. */
function unnegate(t: Term, name: string, keys: ReadonlySet<string>): Term {
  const inner = negated(t)
  const q = inner && partOf(inner, name)
  if (q && keys.has(key(q))) return inner!
  if (partOf(t, name)) return t
  return mapChildren(t, (c) => unnegate(c, name, keys))
}

/** The let spine's final term, replaced by f of it. */
function withFinal(t: Term, f: (x: Term) => Term): Term {
  return t.k === 'let' ? { ...t, body: withFinal(t.body, f) } : f(t)
}

function finalOf(t: Term): Term {
  while (t.k === 'let') t = t.body
  return t
}

/** `let G = mapAccum … in r`: the parts of G that r reads only negated are negated in G. */
function intoSweep(x: Extract<Term, { k: 'let' }>): Term {
  const g = x.value as Extract<Term, { k: 'mapAccum' }>
  const all = new Map<string, number>(),
    negs = new Map<string, number>()
  if (readsWhole(x.body, x.name)) return x
  uses(x.body, x.name, all, negs)
  const final = finalOf(g.body)
  if (final.k !== 'tuple' || final.items.length !== 3) return x
  const sums = final.items[1]!,
    outs = final.items[2]!
  const sumInits = g.sumInit.k === 'tuple' ? g.sumInit.items : undefined
  const keys = new Set<string>()
  for (const [k, n] of negs) {
    if (all.get(k) !== n || n !== 1) continue
    const [of, i] = k.split(':').map(Number) as [number, number]
    if (of === 1) {
      // a sum: negated term by term, from a zero start
      if (sums.k !== 'tuple' || !sumInits || sumInits[i]?.k !== 'zero' || !sums.items[i]) continue
    } else if (outs.k !== 'tuple' || !outs.items[i]) continue
    keys.add(k)
  }
  if (keys.size === 0) return x
  const body = withFinal(g.body, (f) => {
    const [c, s, o] = (f as { items: Term[] }).items as [Term, Term, Term]
    const negItem = (of: number) => (t: Term, i: number) => {
      if (!keys.has(`${of}:${i}`)) return t
      return of === 1 ? pushNegations(negMap(t)) : neg(t)
    }
    return {
      k: 'tuple',
      items: [
        c,
        s.k === 'tuple' ? { k: 'tuple', items: s.items.map(negItem(1)) } : s,
        o.k === 'tuple' ? { k: 'tuple', items: o.items.map(negItem(2)) } : o,
      ],
    }
  })
  return { ...x, value: { ...g, body }, body: unnegate(x.body, x.name, keys) }
}
