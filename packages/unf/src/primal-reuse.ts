/**
 * Reuse of primal values between a `map` and its transpose (a rewrite between the two rounds
 * of partial evaluation, §5). The transpose of `B = map f Ā` is a sweep over Ā that evaluates
 * the vector–Jacobian product of f per element, forward pass included; UNF⁻¹ makes the sweep
 * return f's value per element as its last output and tags it with B (`mapAccum.primal`). Then:
 *
 * - **The sweep computes B** when nothing the sweep reads depends on B (the map's cotangent is
 *   known without B, e.g. a map summed into the result): `let B = map f Ā in … let G = sweep`
 *   ⇝ `… let G = sweep in let B = π_last(π₃ G) in …`. The forward pass of f then runs once, in
 *   the sweep, instead of once for the value and once more in the sweep.
 * - **The sweep reads B** otherwise, when f's value is bound in the sweep's body by a
 *   computation worth saving (a non-linear primitive or a loop, e.g. `tanh`): B joins the
 *   sweep's arrays and that binding becomes B's element.
 *
 * Every tag is removed afterwards, so the second round of partial evaluation prunes the primal
 * outputs nobody reads. Binders are unique (the pipeline's invariant), so lets can be reordered
 * by their data dependences alone.
 */
import { alphaEqual, children, fresh, freeVars, mapChildren, uniquify, v, type Term } from './term.js'

type Sweep = Extract<Term, { k: 'mapAccum' }>

/** Applies both rewrites wherever a tagged sweep and its primal map share a let spine; removes every tag. */
export function reusePrimals(t: Term): Term {
  return stripTags(scope(t))
}

/** The names every tagged sweep of t refers to (these lets are kept bound until the rewrite). */
export function primalNames(t: Term, out: Set<string> = new Set()): Set<string> {
  if (t.k === 'mapAccum' && t.primal !== undefined) out.add(t.primal)
  for (const c of children(t)) primalNames(c, out)
  return out
}

/** The final tuple ⟨carry, sums, ⟨outputs⟩⟩ of a sweep body, past its lets. */
export function sweepResult(body: Term): { carry: Term; sums: Term; outs: Term[] } | undefined {
  let fin = body
  while (fin.k === 'let') fin = fin.body
  if (fin.k !== 'tuple' || fin.items.length !== 3 || fin.items[2]!.k !== 'tuple') return undefined
  return { carry: fin.items[0]!, sums: fin.items[1]!, outs: fin.items[2].items }
}

/** A sweep without its primal output (and tag). */
export function dropPrimal(x: Sweep): Sweep {
  const { primal: _, ...rest } = x
  const go = (t: Term): Term => {
    if (t.k === 'let') return { ...t, body: go(t.body) }
    const [c, s, o] = (t as { items: Term[] }).items as [Term, Term, { items: Term[] }]
    return { k: 'tuple', items: [c, s, { k: 'tuple', items: o.items.slice(0, -1) }] }
  }
  return { ...rest, body: go(x.body) }
}

function stripTags(t: Term): Term {
  const x = mapChildren(t, stripTags)
  if (x.k === 'mapAccum' && x.primal !== undefined) {
    const { primal: _, ...rest } = x
    return rest
  }
  return x
}

/** Terms worth reading from memory rather than recomputing: non-linear primitives and loops. */
function worthSaving(t: Term): boolean {
  if (t.k === 'op')
    return !['+', '-', '*', 'neg'].includes(t.op) || t.args.some((a) => a.k !== 'var' && a.k !== 'const')
  return t.k !== 'var' && t.k !== 'const' && t.k !== 'tuple' && t.k !== 'proj'
}

/** Whether the sweep's primal output is bound in its body by a computation worth saving. */
export function primalWorthReusing(x: Sweep): boolean {
  const res = sweepResult(x.body)
  const last = res?.outs[res.outs.length - 1]
  if (!last || last.k !== 'var') return false
  for (let b = x.body; b.k === 'let'; b = b.body) if (b.name === last.name) return worthSaving(b.value)
  return false
}

/** One let spine (nested spines first). */
function scope(t: Term): Term {
  const lets: Array<{ name: string; value: Term }> = []
  let fin = t
  while (fin.k === 'let') {
    lets.push({ name: fin.name, value: nested(fin.value) })
    fin = fin.body
  }
  fin = nested(fin)
  for (let g = 0; g < lets.length; g++) {
    const sw = lets[g]!.value
    if (sw.k !== 'mapAccum' || sw.primal === undefined) continue
    const b = lets.findIndex((l) => l.name === sw.primal)
    if (b < 0 || b > g) continue
    const res = sweepResult(sw.body)
    if (!res || res.outs.length === 0) continue
    // the lets between B and G that depend on B
    const dep = new Set([sw.primal])
    for (let i = b + 1; i < g; i++) if ([...freeVars(lets[i]!.value)].some((n) => dep.has(n))) dep.add(lets[i]!.name)
    const fv = freeVars(sw)
    if (![...fv].some((n) => dep.has(n))) {
      // the sweep computes B
      const { primal: _, ...untagged } = sw
      const k = res.outs.length - 1
      const mid = lets.slice(b + 1, g)
      const reordered = [
        ...lets.slice(0, b),
        ...mid.filter((l) => !dep.has(l.name)),
        { name: lets[g]!.name, value: untagged as Term },
        { name: sw.primal, value: { k: 'proj', index: k, of: { k: 'proj', index: 2, of: v(lets[g]!.name) } } as Term },
        ...mid.filter((l) => dep.has(l.name)),
      ]
      lets.splice(0, g + 1, ...reordered)
      continue
    }
    // the map stores the intermediate arrays the sweep would recompute (residuals)
    const stored = storeResiduals(lets, b, g)
    if (stored) {
      lets.splice(b, g - b + 1, ...stored)
      g = b + stored.length - 1
      continue
    }
    // the sweep reads B: its value's binding in the body becomes B's element
    const last = res.outs[res.outs.length - 1]!
    if (last.k !== 'var') continue
    const param = fresh('b')
    let replaced = false
    const swap = (body: Term): Term => {
      if (body.k !== 'let') return body
      if (body.name === last.name && worthSaving(body.value)) {
        replaced = true
        return { ...body, value: v(param), body: body.body }
      }
      return { ...body, body: swap(body.body) }
    }
    const body = swap(sw.body)
    if (replaced)
      lets[g] = {
        name: lets[g]!.name,
        value: { ...sw, params: [...sw.params, param], arrays: [...sw.arrays, v(sw.primal)], body },
      }
  }
  return lets.reduceRight<Term>((body, l) => ({ k: 'let', name: l.name, value: l.value, body }), fin)
}

/**
 * The third rewrite, where the sweep depends on B: `B = map f Ā` becomes a sweep F over Ā that
 * returns, per element, f's value and the intermediate arrays of the forward pass that the
 * transpose would compute again (loops whose inputs are all known where B is bound); the
 * transpose reads them as extra arrays instead (what a tape stores, by name). Returns the lets
 * that replace lets[b..g], or undefined.
 */
function storeResiduals(
  lets: Array<{ name: string; value: Term }>,
  b: number,
  g: number,
): Array<{ name: string; value: Term }> | undefined {
  const bm = lets[b]!.value,
    sw = lets[g]!.value as Sweep
  if (bm.k !== 'map' || sw.dir !== 'none' || sw.carryInit.k !== 'tuple' || sw.carryInit.items.length !== 0)
    return undefined
  const nA = bm.arrays.length
  if (sw.arrays.length < nA || !bm.arrays.every((a, i) => alphaEqual(a, sw.arrays[i]!))) return undefined
  // names not available where B is bound, and the sweep's own non-element inputs
  const blocked = new Set([...lets.slice(b).map((l) => l.name), ...sw.params.slice(nA), sw.carry])
  const spine: Array<{ name: string; value: Term }> = []
  let fin = sw.body
  while (fin.k === 'let') {
    spine.push({ name: fin.name, value: fin.value })
    fin = fin.body
  }
  const inSpine = new Set(spine.map((l) => l.name))
  // forward lets: computable from the elements of Ā and what is known at B
  const forward = new Set<string>()
  const computable = (t: Term) => [...freeVars(t)].every((n) => !blocked.has(n) && (!inSpine.has(n) || forward.has(n)))
  for (const l of spine) if (computable(l.value)) forward.add(l.name)
  const res = sweepResult(sw.body)
  if (!res) return undefined
  const primalOut = res.outs[res.outs.length - 1]!
  if (!computable(primalOut)) return undefined
  // residuals: forward loops that the rest of the body reads
  const usedByRest = new Set<string>()
  for (const l of spine) if (!forward.has(l.name)) freeVars(l.value, usedByRest)
  freeVars(res.carry, usedByRest)
  freeVars(res.sums, usedByRest)
  res.outs.slice(0, -1).forEach((o) => freeVars(o, usedByRest))
  const kept = spine.filter((l) => forward.has(l.name) && usedByRest.has(l.name) && isLoop(l.value))
  if (kept.length === 0) return undefined
  const fBody = spine
    .filter((l) => forward.has(l.name))
    .reduceRight<Term>((body, l) => ({ k: 'let', name: l.name, value: l.value, body }), {
      k: 'tuple',
      items: [
        { k: 'tuple', items: [] },
        { k: 'tuple', items: [] },
        { k: 'tuple', items: [primalOut, ...kept.map((l) => v(l.name))] },
      ],
    })
  const F = uniquify({
    k: 'mapAccum',
    dir: 'none',
    carry: fresh('u'),
    params: sw.params.slice(0, nA),
    body: fBody,
    carryInit: { k: 'tuple', items: [] },
    sumInit: { k: 'tuple', items: [] },
    arrays: bm.arrays,
  })
  const fName = fresh('F')
  const out = (i: number): Term => ({ k: 'proj', index: i, of: { k: 'proj', index: 2, of: v(fName) } })
  const params = kept.map(() => fresh('r'))
  const swap = (t: Term): Term => {
    if (t.k !== 'let') return t
    const i = kept.findIndex((l) => l.name === t.name)
    return { ...t, value: i >= 0 ? v(params[i]!) : t.value, body: swap(t.body) }
  }
  const { primal: _, ...untagged } = sw
  return [
    { name: fName, value: F },
    { name: lets[b]!.name, value: out(0) },
    ...lets.slice(b + 1, g),
    {
      name: lets[g]!.name,
      value: {
        ...untagged,
        params: [...sw.params, ...params],
        arrays: [...sw.arrays, ...kept.map((_, i) => out(i + 1))],
        body: swap(sw.body),
      },
    },
  ]
}

/** A loop (an array built or reduced): worth storing rather than recomputing. */
function isLoop(t: Term): boolean {
  return t.k === 'map' || t.k === 'reduce' || t.k === 'fold' || t.k === 'scanl' || t.k === 'scanr' || t.k === 'mapAccum'
}

/** Nested spines: loop and lambda bodies, branches, let-free subterms. */
function nested(x: Term): Term {
  return mapChildren(x, (c) => (c.k === 'let' || isBodyOf(x, c) ? scope(c) : nested(c)))
}

function isBodyOf(x: Term, c: Term): boolean {
  return (
    (x.k === 'map' ||
      x.k === 'reduce' ||
      x.k === 'fold' ||
      x.k === 'scanl' ||
      x.k === 'scanr' ||
      x.k === 'mapAccum' ||
      x.k === 'lam') &&
    x.body === c
  )
}
