/**
 * Partial evaluation and the optimisations of seed 004 §5.1 and Fig. 12, on target terms:
 * β-reduction of the continuations (each is used once, Lemma 5.1), forward substitution of
 * variables and constants, tuple partial evaluation (πᵢ⟨e₁…eₙ⟩ ⇝ eᵢ, and tuples bound by `let`
 * split into their components), let normalisation, constant propagation, the algebraic
 * simplifications of the ring of reals lifted to tuples and arrays (0·e, 0 + e, 1·e, OnesLike,
 * ZerosLike), map fusion and dead-code elimination. The result of a reverse transform is
 * lambda-free (Lemma 5.3): a sequence of lets, SSA-like.
 *
 * Binders must be unique (the pipeline ensures it): substitution never captures, and a value is
 * moved (inlined at its single use) or left in place, never copied with its binders.
 */
import { BOOL_OPS, BUILTIN_OPS } from './ops.js'
import { dropPrimal, primalNames, primalWorthReusing, reusePrimals } from './primal-reuse.js'
import { children, fresh, mapChildren, substitute, uniquify, v, type Term } from './term.js'

/** Options of the partial evaluator. */
export interface PartialEvalOptions {
  /** algebraic simplification and constant propagation (default true) */
  algebraic?: boolean
  /** at most this many rounds (default 50) */
  maxRounds?: number
}

/** Partially evaluates a term to a fixpoint of the rewrite rules. */
export function partialEvaluate(t: Term, options: PartialEvalOptions = {}): Term {
  // two rounds to a fixpoint: the first keeps the primal maps that transposes are tagged with,
  // the rewrite between them reuses primal values (primal-reuse.ts), the second cleans up
  const first = rewriteToFixpoint(t, options)
  return rewriteToFixpoint(reusePrimals(first), options)
}

function rewriteToFixpoint(t: Term, options: PartialEvalOptions): Term {
  const algebraic = options.algebraic ?? true
  let cur = t
  for (let round = 0; round < (options.maxRounds ?? 50); round++) {
    const uses = countUses(cur)
    uses.keep = primalNames(cur)
    let changed = false
    const mark = <T>(x: T): T => {
      changed = true
      return x
    }
    const rw = (x: Term): Term => simplify(mapChildren(x, rw), uses, algebraic, mark)
    cur = rw(cur)
    if (!changed) break
  }
  return cur
}

/**
 * Occurrences of each variable, and whether some occurrence sits inside a loop body or lambda;
 * `keep`: lets not to be substituted away (primal maps a transpose refers to).
 */
interface Uses {
  count: Map<string, number>
  inLoop: Set<string>
  keep?: Set<string>
}

function countUses(t: Term): Uses {
  const count = new Map<string, number>()
  const inLoop = new Set<string>()
  const go = (x: Term, loop: boolean) => {
    if (x.k === 'var') {
      count.set(x.name, (count.get(x.name) ?? 0) + 1)
      if (loop) inLoop.add(x.name)
      return
    }
    const body = loopBody(x)
    for (const c of children(x)) go(c, loop || c === body)
  }
  go(t, false)
  return { count, inLoop }
}

/** The subterm of a node that runs many times (a loop body) or later (a lambda body). */
function loopBody(x: Term): Term | undefined {
  switch (x.k) {
    case 'map':
    case 'reduce':
    case 'fold':
    case 'scanl':
    case 'scanr':
    case 'mapAccum':
    case 'lam':
      return x.body
    default:
      return undefined
  }
}

const isConst = (x: Term, value?: number): x is Extract<Term, { k: 'const' }> =>
  x.k === 'const' && (value === undefined || Object.is(x.value, value) || x.value === value)
const isZero = (x: Term) => isConst(x, 0) || x.k === 'zero' || (x.k === 'tuple' && x.items.every(isZero))
const isAtom = (x: Term): boolean =>
  x.k === 'var' ||
  x.k === 'const' ||
  x.k === 'bool' ||
  (x.k === 'zero' && (!x.like || isAtom(x.like))) ||
  // a prefix of variables: a view, free to copy (a loop reads it by index, see codegen's `source`)
  (x.k === 'prefix' && x.array.k === 'var' && x.len.k === 'var') ||
  // OnesLike(A), a constant map over variables: a length and a value, free to copy
  (x.k === 'map' &&
    x.arrays.every((a) => a.k === 'var') &&
    (x.body.k === 'const' || (x.body.k === 'var' && !x.params.includes(x.body.name))))
const cst = (value: number): Term => ({ k: 'const', value })
const opT = (op: string, ...args: Term[]): Term => ({ k: 'op', op, args })

function simplify(x: Term, uses: Uses, algebraic: boolean, mark: <T>(x: T) => T): Term {
  switch (x.k) {
    case 'app': {
      // β-reduction: (fun (x₁…xₙ) → e)(e₁…eₙ) ⇝ let x₁ = e₁ in … e
      if (x.fn.k === 'lam') {
        const lam = x.fn
        return mark(
          lam.params.reduceRight<Term>((b, p, i) => ({ k: 'let', name: p, value: x.args[i]!, body: b }), lam.body),
        )
      }
      // f(let x = e₁ in e₂) ⇝ let x = e₁ in f(e₂), for the function position
      if (x.fn.k === 'let') return mark({ ...x.fn, body: { ...x, fn: x.fn.body } })
      return x
    }
    case 'let': {
      const n = uses.count.get(x.name) ?? 0
      if (n === 0) return mark(x.body) // dead code (the language is pure)
      if (x.body.k === 'var' && x.body.name === x.name) return mark(x.value) // let x = e in x ⇝ e
      // let normalisation
      if (x.value.k === 'let') return mark({ ...x.value, body: { ...x, value: x.value.body } })
      // forward substitution of variables and constants; a continuation used once is inlined
      const tagged = uses.keep?.has(x.name) || (x.value.k === 'mapAccum' && x.value.primal !== undefined)
      if (
        !tagged &&
        (isAtom(x.value) ||
          (x.value.k === 'lam' && n === 1 && countIn(x.body, x.name).count === 1) ||
          (n === 1 && cheapToMove(x.value) && movable(x.body, x.name)))
      ) {
        return mark(substitute(x.body, new Map([[x.name, x.value]])))
      }
      // dead components of a sweep: sums and outputs nobody projects are not computed
      if (x.value.k === 'mapAccum') {
        const pruned = pruneSweep(x.name, x.value, x.body)
        if (pruned) return mark(pruned)
      }
      // tuple partial evaluation: a bound tuple becomes one binding per component
      if (x.value.k === 'tuple') {
        const names = x.value.items.map(() => fresh('v'))
        const body = substitute(x.body, new Map([[x.name, { k: 'tuple', items: names.map(v) }]]))
        return mark(
          names.reduceRight<Term>(
            (b, nm, i) => ({ k: 'let', name: nm, value: (x.value as { items: Term[] }).items[i]!, body: b }),
            body,
          ),
        )
      }
      return x
    }
    case 'tuple': {
      // let normalisation: ⟨…, let x = e₁ in e₂, …⟩ ⇝ let x = e₁ in ⟨…, e₂, …⟩ (binders are unique)
      const i = x.items.findIndex((it) => it.k === 'let')
      if (i >= 0) {
        const l = x.items[i] as Extract<Term, { k: 'let' }>
        return mark({ ...l, body: { k: 'tuple', items: x.items.map((it, j) => (j === i ? l.body : it)) } })
      }
      return x
    }
    case 'proj': {
      if (x.of.k === 'tuple') return mark(x.of.items[x.index]!)
      // πᵢ (π₃ (mapAccum_none …)) used in place: only output i is needed, which is a map
      if (
        x.of.k === 'proj' &&
        x.of.index === 2 &&
        x.of.of.k === 'mapAccum' &&
        x.of.of.dir === 'none' &&
        x.of.of.primal === undefined
      ) {
        const sw = x.of.of
        return mark(uniquify({ k: 'map', params: sw.params, arrays: sw.arrays, body: projectOut(sw.body, x.index) }))
      }
      if (x.of.k === 'let') return mark({ ...x.of, body: { ...x, of: x.of.body } })
      if (x.of.k === 'if') return mark({ ...x.of, then: { ...x, of: x.of.then }, else: { ...x, of: x.of.else } })
      return x
    }
    case 'add': {
      // 0 +̂ e ⇝ e; of two zeros, keep the one that knows its shape
      const shapeless = (z: Term) => z.k === 'zero' && !z.like
      if (isZero(x.a) && !(shapeless(x.b) && !shapeless(x.a))) return mark(x.b)
      if (isZero(x.b)) return mark(x.a)
      if (x.a.k === 'tuple' && x.b.k === 'tuple') {
        const b = x.b
        return mark({ k: 'tuple', items: x.a.items.map((it, i) => ({ k: 'add', a: it, b: b.items[i]! })) })
      }
      if (isConst(x.a) && isConst(x.b)) return mark(cst(x.a.value + x.b.value))
      if (isConst(x.a) || isConst(x.b)) return mark(opT('+', x.a, x.b))
      return x
    }
    case 'op':
      return algebraic ? simplifyOp(x, mark) : x
    case 'if': {
      if (x.cond.k === 'bool') return mark(x.cond.value ? x.then : x.else)
      if (same(x.then, x.else)) return mark(x.then)
      if (x.then.k === 'tuple' && x.else.k === 'tuple') {
        // push the conditional into tuple components so that projections resolve statically
        const e = x.else
        const c = fresh('b')
        return mark({
          k: 'let',
          name: c,
          value: x.cond,
          body: {
            k: 'tuple',
            items: x.then.items.map((it, i) => ({ k: 'if', cond: v(c), then: it, else: e.items[i]! })),
          },
        })
      }
      return x
    }
    case 'pad1L':
    case 'pad1R':
    case 'shift1L':
    case 'shift1R':
      // a shift or pad of zeros is zeros, shaped like the shift or pad of the shape
      if (x.array.k === 'zero')
        return mark({
          k: 'zero',
          type: x.array.type,
          ...(x.array.like ? { like: { k: x.k, array: x.array.like } } : {}),
        })
      // shift (scan (·) 1 OnesLike(A)) ⇝ OnesLike(A): products of ones, as many as A's elements
      if (
        algebraic &&
        (x.k === 'shift1L' || x.k === 'shift1R') &&
        (x.array.k === 'scanl' || x.array.k === 'scanr') &&
        isConst(x.array.init, 1) &&
        isProductOf(x.array.body, x.array.acc, x.array.elem) &&
        x.array.array.k === 'map' &&
        isConst(x.array.array.body, 1)
      )
        return mark(x.array.array)
      return x
    case 'first':
    case 'last':
      if (x.array.k === 'zero') return mark(elemZero(x.array))
      return x
    case 'prefix':
    case 'padTo':
      // a prefix of zeros is zeros shaped like the prefix of the shape; zeros padded are zeros
      // shaped like the array they are padded to
      if (x.array.k === 'zero') {
        const like: Term | undefined =
          x.k === 'padTo' ? x.len : x.array.like ? { k: 'prefix', array: x.array.like, len: x.len } : undefined
        return mark({ k: 'zero', type: x.array.type, ...(like ? { like } : {}) })
      }
      return x
    case 'map':
      return algebraic ? simplifyMap(x, mark) : x
    case 'mapAccum':
      return simplifyMapAccum(x, mark)
    case 'scanl':
    case 'scanr': {
      // scan (·) 1 OnesLike(shift A) ⇝ OnesLike(A): the products of ones are ones, one more of them
      if (algebraic && isConst(x.init, 1) && isProductOf(x.body, x.acc, x.elem)) {
        const a = x.array
        if ((a.k === 'shift1L' || a.k === 'shift1R') && a.array.k === 'map' && isConst(a.array.body, 1))
          return mark(a.array)
      }
      return x
    }
    case 'reduce': {
      // reduce (*) 1 OnesLike(A) ⇝ 1; reduce (+) 0 ZerosLike(A) ⇝ 0
      if (algebraic && x.array.k === 'map' && isConst(x.array.body) && freeOfParams(x.array)) {
        if (isConst(x.init, 1) && isConst(x.array.body, 1) && isProductOf(x.body, x.acc, x.elem)) return mark(cst(1))
        if (isConst(x.init, 0) && isConst(x.array.body, 0)) return mark(cst(0))
      }
      return x
    }
    default:
      return x
  }
}

/**
 * Moving a single-use value to its use changes no cost when the use is not in a loop; scalar
 * operations stay bound (SSA form), other values move so that the array rules see through lets.
 */
function cheapToMove(x: Term): boolean {
  return x.k !== 'lam' && x.k !== 'op'
}

/** Whether `name` occurs exactly once in `body`, outside loops and lambdas (counted afresh). */
function movable(body: Term, name: string): boolean {
  const c = countIn(body, name)
  return c.count === 1 && !c.inLoop
}

function countIn(t: Term, name: string): { count: number; inLoop: boolean } {
  let count = 0,
    inLoop = false
  const go = (x: Term, loop: boolean) => {
    if (x.k === 'var') {
      if (x.name === name) {
        count++
        if (loop) inLoop = true
      }
      return
    }
    const body = loopBody(x)
    for (const c of children(x)) go(c, loop || c === body)
  }
  go(t, false)
  return { count, inLoop }
}

/** The element of a zero array: 0, or a zero shaped like the first element of the shape (a loop over it is non-empty). */
function elemZero(z: Extract<Term, { k: 'zero' }>): Term {
  if (z.type.kind !== 'array') throw new Error('internal: element of a non-array zero')
  if (z.type.elem.kind === 'R') return cst(0)
  return { k: 'zero', type: z.type.elem, ...(z.like ? { like: { k: 'first', array: z.like } } : {}) }
}

function isProductOf(body: Term, a: string, b: string): boolean {
  return (
    body.k === 'op' &&
    body.op === '*' &&
    body.args.length === 2 &&
    body.args.every((x) => x.k === 'var') &&
    new Set(body.args.map((x) => (x as { name: string }).name)).size === 2 &&
    body.args.some((x) => (x as { name: string }).name === a) &&
    body.args.some((x) => (x as { name: string }).name === b)
  )
}

/** Structural equality, for small terms only (a large comparison per round costs more than it saves). */
function same(a: Term, b: Term): boolean {
  const small = (t: Term, budget = { n: 64 }): boolean => --budget.n >= 0 && children(t).every((c) => small(c, budget))
  return small(a) && small(b) && JSON.stringify(a) === JSON.stringify(b)
}

function freeOfParams(m: Extract<Term, { k: 'map' }>): boolean {
  const fv = new Set<string>()
  collectVars(m.body, fv)
  return !m.params.some((p) => fv.has(p))
}

function collectVars(t: Term, out: Set<string>) {
  if (t.k === 'var') out.add(t.name)
  for (const c of children(t)) collectVars(c, out)
}

/** Algebraic simplification and constant propagation of scalar operations. */
function simplifyOp(x: Extract<Term, { k: 'op' }>, mark: <T>(x: T) => T): Term {
  const [a, b] = x.args
  if (!BOOL_OPS.has(x.op) && x.args.every((y) => isConst(y))) {
    const o = BUILTIN_OPS.get(x.op)
    if (o && o.result.kind === 'R')
      return mark(cst(o.evaluate(...x.args.map((y) => (y as { value: number }).value)) as number))
  }
  switch (x.op) {
    case '*':
      if (isConst(a!, 0) || isConst(b!, 0)) return mark(cst(0))
      if (isConst(a!, 1)) return mark(b!)
      if (isConst(b!, 1)) return mark(a!)
      if (isConst(a!, -1)) return mark(opT('neg', b!))
      if (isConst(b!, -1)) return mark(opT('neg', a!))
      // constants to the front, so that c₁·(c₂·e) folds
      if (isConst(b!) && !isConst(a!)) return mark(opT('*', b!, a!))
      {
        const l = a as Term,
          r = b as Term
        if (l.k === 'const' && r.k === 'op' && r.op === '*' && r.args[0]!.k === 'const')
          return mark(opT('*', cst(l.value * r.args[0]!.value), r.args[1]!))
      }
      if (a!.k === 'op' && a!.op === 'neg') return mark(opT('neg', opT('*', a!.args[0]!, b!)))
      if (b!.k === 'op' && b!.op === 'neg') return mark(opT('neg', opT('*', a!, b!.args[0]!)))
      return x
    case '+':
      if (isConst(a!, 0)) return mark(b!)
      if (isConst(b!, 0)) return mark(a!)
      if (b!.k === 'op' && b!.op === 'neg') return mark(opT('-', a!, b!.args[0]!))
      if (a!.k === 'op' && a!.op === 'neg') return mark(opT('-', b!, a!.args[0]!))
      return x
    case '-':
      if (isConst(b!, 0)) return mark(a!)
      if (isConst(a!, 0)) return mark(opT('neg', b!))
      if (b!.k === 'op' && b!.op === 'neg') return mark(opT('+', a!, b!.args[0]!))
      return x
    case '/':
      if (isConst(b!, 1)) return mark(a!)
      if (isConst(a!, 0)) return mark(cst(0))
      return x
    case 'neg':
      if (a!.k === 'op' && a!.op === 'neg') return mark(a!.args[0]!)
      return x
    default:
      return x
  }
}

/** Array simplifications of Fig. 12 on `map`: ZerosLike/OnesLike arguments, identity maps, fusion. */
function simplifyMap(x: Extract<Term, { k: 'map' }>, mark: <T>(x: T) => T): Term {
  // map (x. x) A ⇝ A, and more generally a body that is one parameter
  if (x.body.k === 'var') {
    const i = x.params.indexOf(x.body.name)
    if (i >= 0) return mark(x.arrays[i]!)
  }
  // ZerosLike: a map with body 0 is the zero array of that length
  if (isConst(x.body, 0))
    return mark({ k: 'zero', type: { kind: 'array', elem: { kind: 'R' } }, like: lengthWitness(x.arrays[0]!) })
  const fv = new Set<string>()
  collectVars(x.body, fv)
  // an argument whose elements are known (a zero array, or a map with a constant body) is substituted
  for (let i = 0; i < x.arrays.length; i++) {
    const a = x.arrays[i]!
    const known: Term | undefined =
      a.k === 'zero' ? elemZero(a) : a.k === 'map' && freeOfParams(a) && isAtom(a.body) ? a.body : undefined
    if (known && x.arrays.length > 1) {
      const p = x.params[i]!
      const keepWitness = a.k === 'map' && !x.arrays.some((b, j) => j !== i && b.k !== 'zero')
      if (keepWitness) continue
      return mark({
        ...x,
        params: x.params.filter((_, j) => j !== i),
        arrays: x.arrays.filter((_, j) => j !== i),
        body: substitute(x.body, new Map([[p, known]])),
      })
    }
    if (known && x.arrays.length === 1 && a.k === 'map') {
      // map f (map (_. c) B) ⇝ map (_. f c) B
      return mark({
        ...x,
        params: a.params,
        arrays: a.arrays,
        body: substitute(x.body, new Map([[x.params[0]!, known]])),
      })
    }
  }
  // an argument the body does not read only gives the length: take the simplest array of that length
  for (let i = 0; i < x.arrays.length; i++) {
    if (fv.has(x.params[i]!)) continue
    const w = lengthWitness(x.arrays[i]!)
    if (w !== x.arrays[i]) return mark({ ...x, arrays: x.arrays.map((a, j) => (j === i ? w : a)) })
  }
  // parameters the body does not read are dropped while another array gives the length;
  // a variable is the preferred witness
  const unused = x.params.map((p, i) => (!fv.has(p) ? i : -1)).filter((i) => i >= 0)
  if (unused.length > 0 && x.arrays.length > 1) {
    const used = x.params.map((_, i) => i).filter((i) => !unused.includes(i))
    let keep = used
    if (keep.length === 0) {
      const varIdx = x.arrays.findIndex((a) => a.k === 'var')
      keep = [varIdx >= 0 ? varIdx : 0]
    }
    if (keep.length < x.arrays.length)
      return mark({ ...x, params: keep.map((i) => x.params[i]!), arrays: keep.map((i) => x.arrays[i]!) })
  }
  {
    const a0 = x.arrays[0]!
    if (
      x.arrays.length === 1 &&
      a0.k === 'zero' &&
      isConst(x.body, 0) &&
      a0.type.kind === 'array' &&
      a0.type.elem.kind === 'R'
    )
      return mark(a0)
  }
  // classic fusion: map (y. e₁) (map (x̄. e₂) Ā) ⇝ map (x̄. let y = e₂ in e₁) Ā
  for (let i = 0; i < x.arrays.length; i++) {
    const a = x.arrays[i]!
    if (a.k === 'map' && x.arrays.length === 1) {
      return mark({
        k: 'map',
        params: a.params,
        arrays: a.arrays,
        body: { k: 'let', name: x.params[0]!, value: a.body, body: x.body },
      })
    }
  }
  return x
}

/**
 * An array of the same length as `a` that is cheaper to reach: shifts of scans have the length
 * of the scanned array, maps the length of their arrays.
 */
function lengthWitness(a: Term): Term {
  if ((a.k === 'shift1L' || a.k === 'shift1R') && (a.array.k === 'scanl' || a.array.k === 'scanr'))
    return lengthWitness(a.array.array)
  if (a.k === 'map') return lengthWitness(a.arrays.find((b) => b.k === 'var') ?? a.arrays[0]!)
  if (a.k === 'prefix' || a.k === 'padTo') return lengthWitness(a.len)
  return a
}

/**
 * `let G = mapAccum … in body` where body reads G only through `πᵢ (π₂ G)` / `πᵢ (π₃ G)`: the sum
 * and output components never read are removed (and the projections renumbered).
 */
function pruneSweep(name: string, sweep: Extract<Term, { k: 'mapAccum' }>, body: Term): Term | undefined {
  let fin = sweep.body
  while (fin.k === 'let') fin = fin.body
  if (
    fin.k !== 'tuple' ||
    fin.items.length !== 3 ||
    fin.items[1]!.k !== 'tuple' ||
    fin.items[2]!.k !== 'tuple' ||
    sweep.sumInit.k !== 'tuple'
  )
    return undefined
  const nSums = fin.items[1]!.items.length,
    nOuts = fin.items[2]!.items.length
  if (sweep.sumInit.items.length !== nSums) return undefined
  const used = [new Set<number>(), new Set<number>()]
  let opaque = false
  const scan = (t: Term) => {
    if (
      t.k === 'proj' &&
      t.of.k === 'proj' &&
      t.of.of.k === 'var' &&
      t.of.of.name === name &&
      (t.of.index === 1 || t.of.index === 2)
    ) {
      used[t.of.index - 1]!.add(t.index)
      return
    }
    if (t.k === 'proj' && t.of.k === 'var' && t.of.name === name && t.index === 0) return
    if (t.k === 'var' && t.name === name) {
      opaque = true
      return
    }
    children(t).forEach(scan)
  }
  scan(body)
  if (sweep.primal !== undefined) used[1]!.add(nOuts - 1) // kept until primal-reuse.ts has seen it
  if (opaque || (used[0]!.size === nSums && used[1]!.size === nOuts)) return undefined
  const keepS = [...Array(nSums).keys()].filter((i) => used[0]!.has(i))
  const keepO = [...Array(nOuts).keys()].filter((i) => used[1]!.has(i))
  const rebuildFinal = (t: Term): Term => {
    if (t.k === 'let') return { ...t, body: rebuildFinal(t.body) }
    const [c, sm, o] = (t as { items: Term[] }).items as [Term, { items: Term[] }, { items: Term[] }]
    return {
      k: 'tuple',
      items: [
        c,
        { k: 'tuple', items: keepS.map((i) => sm.items[i]!) },
        { k: 'tuple', items: keepO.map((i) => o.items[i]!) },
      ],
    }
  }
  const newSweep: Term = {
    ...sweep,
    body: rebuildFinal(sweep.body),
    sumInit: { k: 'tuple', items: keepS.map((i) => (sweep.sumInit as { items: Term[] }).items[i]!) },
  }
  const renumber = (t: Term): Term => {
    if (
      t.k === 'proj' &&
      t.of.k === 'proj' &&
      t.of.of.k === 'var' &&
      t.of.of.name === name &&
      (t.of.index === 1 || t.of.index === 2)
    ) {
      const keep = t.of.index === 1 ? keepS : keepO
      return { ...t, index: keep.indexOf(t.index) }
    }
    return mapChildren(t, renumber)
  }
  return { k: 'let', name, value: newSweep, body: renumber(body) }
}

/** The body of a sweep with its result replaced by output i: lets kept, ⟨c, s, ⟨o…⟩⟩ ⇝ oᵢ. */
function projectOut(body: Term, i: number): Term {
  if (body.k === 'let') return { ...body, body: projectOut(body.body, i) }
  if (body.k === 'tuple' && body.items[2]?.k === 'tuple') return body.items[2].items[i]!
  return { k: 'proj', index: i, of: { k: 'proj', index: 2, of: body } }
}

/** No loops and at most 8 scalar operations: cheap enough to recompute once per output. */
function isCheapBody(body: Term): boolean {
  let ops = 0,
    loops = false
  const go = (x: Term) => {
    if (x.k === 'op') ops++
    if (loopBody(x) !== undefined || x.k === 'if') loops = true
    children(x).forEach(go)
  }
  go(body)
  return !loops && ops <= 8
}

/** mapAccum with known arrays (zero cotangents, constant maps): the elements are substituted. */
function simplifyMapAccum(x: Extract<Term, { k: 'mapAccum' }>, mark: <T>(x: T) => T): Term {
  // a fold's transpose with a zero cotangent: nothing flows back
  if (x.linear && isZero(x.carryInit)) {
    let fin = x.body
    while (fin.k === 'let') fin = fin.body
    const nOut = fin.k === 'tuple' && fin.items[2]?.k === 'tuple' ? fin.items[2].items.length : 0
    if (fin.k === 'tuple' && fin.items[2]?.k === 'tuple') {
      return mark({
        k: 'tuple',
        items: [
          x.carryInit,
          x.sumInit,
          {
            k: 'tuple',
            items: Array.from(
              { length: nOut },
              () => ({ k: 'zero', type: { kind: 'array', elem: { kind: 'R' } } }) as Term,
            ),
          },
        ],
      })
    }
  }
  for (let i = 0; i < x.arrays.length; i++) {
    const a = x.arrays[i]!
    const known: Term | undefined =
      a.k === 'zero' ? elemZero(a) : a.k === 'map' && freeOfParams(a) && isAtom(a.body) ? a.body : undefined
    if (known && x.arrays.length > 1) {
      return mark({
        ...x,
        params: x.params.filter((_, j) => j !== i),
        arrays: x.arrays.filter((_, j) => j !== i),
        body: substitute(x.body, new Map([[x.params[i]!, known]])),
      })
    }
  }
  // a sweep that the rules below turn into maps needs no primal output: it is dropped first
  if (x.primal !== undefined && x.dir === 'none') {
    const r = finalOf(x.body)
    if (r.k === 'tuple' && r.items.length === 3 && r.items[2]!.k === 'tuple') {
      const sums = r.items[1]!,
        outs = r.items[2].items.slice(0, -1)
      const noSums = isZero(sums) || (sums.k === 'tuple' && sums.items.length === 0)
      const splits =
        outs.length === 1 ||
        (outs.length > 1 && isCheapBody(x.body)) ||
        outs.every((o) => o.k === 'var' && x.params.includes(o.name))
      const last = outs.length > 0 ? r.items[2].items[outs.length]! : undefined
      // (decided once the value is a variable or constant: a projection may still resolve to one)
      const settled = last !== undefined && (last.k === 'var' || last.k === 'const')
      if (noSums && splits && settled && !primalWorthReusing(x)) return mark(dropPrimal(x))
    }
  }
  // without carry and sums, a sweep is a map per output: outputs that are parameters are the arrays themselves
  let result = x.body
  while (result.k === 'let') result = result.body
  if (x.dir === 'none' && x.primal === undefined && result.k === 'tuple' && result.items.length === 3) {
    const [, sums, outs] = result.items
    if (isZero(sums!) || (sums!.k === 'tuple' && sums!.items.length === 0)) {
      // a cheap body (no loops, few operations) is split into one map per output, each of which
      // fuses with its consumer (no intermediate arrays); its shared operations are recomputed
      if (outs!.k === 'tuple' && (outs!.items.length === 1 || (outs!.items.length > 1 && isCheapBody(x.body)))) {
        const items = outs!.items.map((_, i) => {
          const copy = uniquify({
            k: 'map',
            params: x.params,
            arrays: x.arrays,
            body: projectOut(x.body, i),
          }) as Extract<Term, { k: 'map' }>
          return { ...copy, arrays: x.arrays } as Term
        })
        return mark({ k: 'tuple', items: [x.carryInit, x.sumInit, { k: 'tuple', items }] })
      }
      if (
        x.body.k === 'tuple' &&
        outs!.k === 'tuple' &&
        outs!.items.every((o) => o.k === 'var' && x.params.includes(o.name))
      ) {
        return mark({
          k: 'tuple',
          items: [
            x.carryInit,
            x.sumInit,
            { k: 'tuple', items: outs!.items.map((o) => x.arrays[x.params.indexOf((o as { name: string }).name)]!) },
          ],
        })
      }
    }
  }
  return x
}

function finalOf(t: Term): Term {
  while (t.k === 'let') t = t.body
  return t
}
