/**
 * A rewrite before code generation: loop-invariant code motion. A `let` in the body of a loop
 * (`map`, `mapAccum`, `reduce`, `fold`, `scanl`, `scanr`) whose value reads nothing the loop
 * binds (its element, accumulator or carry, or a `let` of the body that is not moved) has the
 * same value in every iteration; it is bound once, before the loop:
 *
 *   … map (x. let y = e in b) A …  ⇝  let y = e in … map (x. b) A …      (x, lets of b ∉ fv(e))
 *
 * Partial evaluation leaves such lets where the transform put them: the transpose of a map over
 * rows evaluates, per row, what depends only on the data (`Σ B²` in `Σ_row sum(row)·Σ B²`), or
 * the scalar factors of a prior (`½γ²` per mixture component). Inner loops are done first, so a
 * value invariant in several nested loops moves out of all of them.
 *
 * Moved values are reals (an array moved out of a loop would be shared by every element of the
 * loop's result) and cannot fail, so that a loop that runs no iteration still gives its result:
 * scalar operations (built-in ones only: a registry primitive may throw), conditionals, and
 * reductions over one array (`map` of several arrays checks their lengths). Found
 * within one scope (a let spine), outside conditionals, as in `share-scans.ts`. The rewrite is
 * pure (nothing observable depends on evaluation order) and never adds work (a loop that runs no
 * iteration is the one case that evaluates the value once more).
 */
import { BUILTIN_OPS } from './ops.js'
import { sameScope } from './share-scans.js'
import { freeVars, mapChildren, type Term } from './term.js'

/** Moves the loop-invariant lets of every loop body out of the loop. */
export function hoistInvariants(t: Term): Term {
  return inScope(t)
}

type Loop = Extract<Term, { k: 'map' | 'mapAccum' | 'reduce' | 'fold' | 'scanl' | 'scanr' }>

const isLoop = (x: Term): x is Loop =>
  x.k === 'map' || x.k === 'mapAccum' || x.k === 'reduce' || x.k === 'fold' || x.k === 'scanl' || x.k === 'scanr'

/** The names a loop binds in its body. */
function loopBound(x: Loop): string[] {
  if (x.k === 'map') return x.params
  if (x.k === 'mapAccum') return [x.carry, ...x.params]
  return [x.acc, x.elem]
}

/** Whether evaluating t can fail (or is not worth moving): see the module comment. */
function safe(t: Term): boolean {
  switch (t.k) {
    case 'const':
    case 'bool':
    case 'var':
      return true
    case 'op':
      return BUILTIN_OPS.has(t.op) && t.args.every(safe)
    case 'tuple':
      return t.items.every(safe)
    case 'proj':
      return safe(t.of)
    case 'if':
      return safe(t.cond) && safe(t.then) && safe(t.else)
    case 'let':
      return safe(t.value) && safe(t.body)
    case 'map':
      return t.arrays.length === 1 && t.arrays.every(safe) && safe(t.body)
    case 'reduce':
    case 'fold':
    case 'scanl':
    case 'scanr':
      return safe(t.init) && safe(t.array) && safe(t.body)
    default:
      return false
  }
}

/**
 * Whether t's value is a real (or a condition): a moved array would be one array shared by every
 * element of a loop's result, where the code generator expects one array per element.
 */
function scalar(t: Term): boolean {
  switch (t.k) {
    case 'const':
    case 'bool':
    case 'reduce':
      return true
    case 'op':
      return t.op !== 'nograd' || scalar(t.args[0]!)
    case 'if':
      return scalar(t.then) && scalar(t.else)
    default:
      return false
  }
}

/**
 * The body of a loop with its invariant lets taken out: returns the new body and the lets, in
 * order. `taken` holds the names bound around the scope (a moved let must not shadow them).
 */
function takeInvariants(
  body: Term,
  bound: string[],
  taken: ReadonlySet<string>,
): { body: Term; lets: Array<{ name: string; value: Term }> } {
  const variant = new Set(bound)
  const lets: Array<{ name: string; value: Term }> = []
  const kept: Array<{ name: string; value: Term }> = []
  let b = body
  while (b.k === 'let') {
    const fv = freeVars(b.value)
    if (![...fv].some((n) => variant.has(n)) && !taken.has(b.name) && scalar(b.value) && safe(b.value))
      lets.push({ name: b.name, value: b.value })
    else {
      kept.push({ name: b.name, value: b.value })
      variant.add(b.name)
    }
    b = b.body
  }
  if (lets.length === 0) return { body, lets }
  let out: Term = b
  for (let i = kept.length - 1; i >= 0; i--) out = { k: 'let', name: kept[i]!.name, value: kept[i]!.value, body: out }
  return { body: out, lets }
}

/** One scope: its let spine, with nested scopes (loop bodies, branches) handled first. */
function inScope(t: Term): Term {
  const spine: Array<{ name: string; value: Term }> = []
  let fin = t
  while (fin.k === 'let') {
    spine.push({ name: fin.name, value: fin.value })
    fin = fin.body
  }
  const items = [...spine.map((l) => l.value), fin].map(nested)
  // names a moved let must not take: every name free in the scope or bound by its spine
  const taken = new Set<string>([...freeVars(t), ...spine.map((l) => l.name)])
  const before: Array<Array<{ name: string; value: Term }>> = items.map(() => [])
  items.forEach((item, i) => {
    const move = (x: Term): Term => {
      if (isLoop(x)) {
        const { body, lets } = takeInvariants(x.body, loopBound(x), taken)
        for (const l of lets) {
          before[i]!.push(l)
          taken.add(l.name)
        }
        x = { ...x, body } as Term
      }
      const same = new Set(sameScope(x))
      return same.size === 0 ? x : mapChildren(x, (c) => (same.has(c) ? move(c) : c))
    }
    items[i] = move(item)
  })
  let out = items[items.length - 1]!
  for (let i = items.length - 1; i >= 0; i--) {
    if (i < spine.length) out = { k: 'let', name: spine[i]!.name, value: items[i]!, body: out }
    for (const b of before[i]!.slice().reverse()) out = { k: 'let', name: b.name, value: b.value, body: out }
  }
  return out
}

/** Nested scopes of a term evaluated in the current scope: loop bodies and branches. */
function nested(x: Term): Term {
  const same = new Set(sameScope(x))
  return mapChildren(x, (c) => (same.has(c) ? nested(c) : inScope(c)))
}
