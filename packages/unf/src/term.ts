/**
 * Terms of the source language (seed 004, Fig. 2, with `fold`, `scanl`/`scanr`, `shift1L`/`shift1R`
 * and conditionals from §7) and of the target language (Fig. 3: lambdas, applications, and the
 * array constructs that transpose Jacobians need). Source is a subset of Target: one data type
 * serves both, and `checkSource` rejects target-only nodes in a source program.
 */
import type { Type } from './types.js'

/** A term. Source nodes first, target-only nodes after `lam`. */
export type Term =
  | { k: 'const'; value: number }
  | { k: 'bool'; value: boolean }
  | { k: 'var'; name: string }
  | { k: 'let'; name: string; value: Term; body: Term }
  | { k: 'tuple'; items: Term[] }
  /** `πᵢ e`, `index` 0-based (printed 1-based as in the paper) */
  | { k: 'proj'; index: number; of: Term }
  /** a scalar operation: `+ - * /`, `neg`, comparisons, `and`/`or`/`not`, built-in and registry primitives */
  | { k: 'op'; op: string; args: Term[] }
  /** `map (x₁ … xₖ. body) A₁ … Aₖ` (`map` for k = 1, `map2` for k = 2) */
  | { k: 'map'; params: string[]; body: Term; arrays: Term[] }
  /**
   * `reduce`: associative, closed scalar operator with a constant unit `init` (§3.1);
   * `fold`: fold-left of any operator, free variables allowed (§7.1);
   * `scanl`/`scanr`: every intermediate state of fold-left / fold-right (n + 1 states).
   */
  | { k: 'reduce' | 'fold' | 'scanl' | 'scanr'; acc: string; elem: string; body: Term; init: Term; array: Term }
  /** `shift1L` drops the first element, `shift1R` the last */
  | { k: 'shift1L' | 'shift1R'; array: Term }
  /** `prefix A L`: the first |L| elements of A (|L| ≤ |A|; L's elements are not read) — triangular loops */
  | { k: 'prefix'; array: Term; len: Term }
  | { k: 'if'; cond: Term; then: Term; else: Term }
  // ---- target only ----
  | { k: 'lam'; params: string[]; body: Term }
  | { k: 'app'; fn: Term; args: Term[] }
  /** `0_G`, the unit of `+̂` at ground type G; an array zero takes its shape from `like` */
  | { k: 'zero'; type: Type; like?: Term }
  /** `a +̂ b` on a ground type */
  | { k: 'add'; a: Term; b: Term }
  /** transposes of the shifts: a zero put back in front (`pad1L`) or at the end (`pad1R`) */
  | { k: 'pad1L' | 'pad1R'; array: Term }
  | { k: 'first' | 'last'; array: Term }
  /** the transpose of `prefix`: `padTo C A` is C followed by zeros (shaped like A's) up to |A| elements */
  | { k: 'padTo'; array: Term; len: Term }
  /**
   * One sweep over arrays, the loop the transpose Jacobians of map and fold need:
   * `body` (over `carry` and `params`) returns ⟨carry′, s, ⟨o₁ … oₘ⟩⟩; the result is
   * ⟨final carry, sumInit +̂ Σ s, ⟨[o₁…], …, [oₘ…]⟩⟩. `dir` is the order: `L` left to right,
   * `R` right to left, `none` with no carry (then equal to `reduce +̂ 0̂ (map …)` and `map`).
   * `linear`: the body is linear in the carry (a fold's transpose), so a zero carry gives zeros.
   * `primal`: the sweep is the transpose of the map bound to this variable, and its last output
   * is that map's body, element by element (partial evaluation reuses it; see `primal-reuse.ts`).
   */
  | {
      k: 'mapAccum'
      dir: 'L' | 'R' | 'none'
      carry: string
      params: string[]
      body: Term
      carryInit: Term
      sumInit: Term
      arrays: Term[]
      linear?: boolean
      primal?: string
    }

/** Term kinds that only the target language has. */
export const TARGET_ONLY = new Set([
  'lam',
  'app',
  'zero',
  'add',
  'pad1L',
  'pad1R',
  'first',
  'last',
  'mapAccum',
  'padTo',
])

// ---------------------------------------------------------------------------- builder API

/** A real constant. */
export const c = (value: number): Term => ({ k: 'const', value })
/** A variable. */
export const v = (name: string): Term => ({ k: 'var', name })
/** `let name = value in body`. */
export const let_ = (name: string, value: Term, body: Term): Term => ({ k: 'let', name, value, body })
/** A sequence of lets: `lets([['a', e1], ['b', e2]], body)`. */
export const lets = (bindings: Array<[string, Term]>, body: Term): Term =>
  bindings.reduceRight<Term>((b, [n, e]) => let_(n, e, b), body)
/** A tuple `⟨e₁, …, eₙ⟩`. */
export const tuple = (...items: Term[]): Term => ({ k: 'tuple', items })
/** `πᵢ e` with a 0-based index. */
export const proj = (index: number, of: Term): Term => ({ k: 'proj', index, of })
/** A scalar operation or primitive call. */
export const op = (name: string, ...args: Term[]): Term => ({ k: 'op', op: name, args })
/** `a + b`. */
export const add = (a: Term, b: Term): Term => op('+', a, b)
/** `a − b`. */
export const sub = (a: Term, b: Term): Term => op('-', a, b)
/** `a · b`. */
export const mul = (a: Term, b: Term): Term => op('*', a, b)
/** `a / b`. */
export const div = (a: Term, b: Term): Term => op('/', a, b)
/** `−a`. */
export const neg = (a: Term): Term => op('neg', a)
/** `exp a`. */
export const exp = (a: Term): Term => op('exp', a)
/** `log a`. */
export const log = (a: Term): Term => op('log', a)
/** `map (x. body) A` with a builder callback: `map(A, (x) => mul(x, x))`. */
export function map(array: Term, f: (x: Term) => Term, name = fresh('x')): Term {
  return { k: 'map', params: [name], body: f(v(name)), arrays: [array] }
}
/** `map2 (x, y. body) A B`. */
export function map2(
  a: Term,
  b: Term,
  f: (x: Term, y: Term) => Term,
  names: [string, string] = [fresh('x'), fresh('y')],
): Term {
  return { k: 'map', params: names, body: f(v(names[0]), v(names[1])), arrays: [a, b] }
}
/** `map (x₁ … xₖ. body) A₁ … Aₖ` over any number of arrays. */
export function mapN(arrays: Term[], f: (...xs: Term[]) => Term): Term {
  const names = arrays.map(() => fresh('x'))
  return { k: 'map', params: names, body: f(...names.map(v)), arrays }
}
type Folder = 'reduce' | 'fold' | 'scanl' | 'scanr'
function folder(k: Folder) {
  return (init: Term, array: Term, f: (acc: Term, x: Term) => Term): Term => {
    const acc = fresh('a'),
      elem = fresh('x')
    return { k, acc, elem, body: f(v(acc), v(elem)), init, array }
  }
}
/** `reduce (a, x. body) init A`: the operator must be associative and closed, `init` its unit. */
export const reduce = folder('reduce')
/** `fold (a, x. body) init A`: fold-left; the body may read any variable in scope. */
export const fold = folder('fold')
/** `scanl (a, x. body) init A`: the n + 1 states of fold-left, `init` first. */
export const scanl = folder('scanl')
/** `scanr (a, x. body) init A`: the n + 1 states of fold-right, `init` last. */
export const scanr = folder('scanr')
/** `shift1L A`: A without its first element. */
export const shift1L = (array: Term): Term => ({ k: 'shift1L', array })
/** `shift1R A`: A without its last element. */
export const shift1R = (array: Term): Term => ({ k: 'shift1R', array })
/**
 * `prefix(A, L)`: the first |L| elements of A, where L is any array at most as long as A (only
 * its length is read). A row of a triangular matrix stored by rows (row i of length i) reads the
 * matching prefix of a vector: `dot(row, prefix(x, row))`.
 */
export const prefix = (array: Term, len: Term): Term => ({ k: 'prefix', array, len })
/** `if cond then a else b`; `cond` is a boolean (a comparison). */
export const if_ = (cond: Term, then: Term, otherwise: Term): Term => ({ k: 'if', cond, then, else: otherwise })
/** Comparisons (non-smooth primitives R × R → B). */
/** `a < b` (B). */
export const lt = (a: Term, b: Term): Term => op('<', a, b)
/** `a > b` (B). */
export const gt = (a: Term, b: Term): Term => op('>', a, b)

// ---------------------------------------------------------------- library of common terms

/** `sum A = reduce (+) 0 A`. */
export const sum = (a: Term): Term => reduce(c(0), a, (x, y) => add(x, y))
/** `prod A = reduce (*) 1 A`. */
export const prod = (a: Term): Term => reduce(c(1), a, (x, y) => mul(x, y))
/** `dot A B = reduce (+) 0 (map2 (*) A B)`. */
export const dot = (a: Term, b: Term): Term => sum(map2(a, b, (x, y) => mul(x, y)))
/**
 * `logsumexp A = m + log (sum (map (x. exp (x − m)) A))` with `m` the maximum of A (the
 * stable form; the maximum is a fold with a conditional).
 */
export function logsumexp(a: Term): Term {
  const m = fresh('m')
  const arr = a.k === 'var' ? a : v(fresh('A'))
  // the value does not depend on m (any shift gives the same result): m carries no gradient
  const body = let_(
    m,
    nograd(fold(c(-Infinity), arr, (acc, x) => if_(gt(x, acc), x, acc))),
    add(v(m), log(sum(map(arr, (x) => exp(sub(x, v(m))))))),
  )
  return a.k === 'var' ? body : let_((arr as { name: string }).name, a, body)
}

/**
 * `nograd e`: the value of e, through which no gradient flows (a stop-gradient). Sound where the
 * result does not depend on e's value mathematically (the shift of a log-sum-exp).
 */
export const nograd = (e: Term): Term => op('nograd', e)

let counter = 0
/** A fresh variable name for the builder (`x#3`): never a user name, since users cannot write `#`. */
export function fresh(base: string): string {
  return `${base}#${++counter}`
}

// ---------------------------------------------------------------------------- printing

const INFIX = new Set(['+', '-', '*', '/', '<', '<=', '>', '>=', '==', '!=', 'and', 'or'])
const PREC: Record<string, number> = {
  or: 1,
  and: 2,
  '<': 3,
  '<=': 3,
  '>': 3,
  '>=': 3,
  '==': 3,
  '!=': 3,
  '+': 4,
  '-': 4,
  '*': 5,
  '/': 5,
}

/** Prints a term in the paper's notation (ASCII arrows, `π1` for the first projection). */
export function printTerm(t: Term, indent = ''): string {
  const p = (x: Term, ctx = 0): string => {
    switch (x.k) {
      case 'const':
        return Number.isInteger(x.value) || !Number.isFinite(x.value) ? String(x.value) : String(x.value)
      case 'bool':
        return String(x.value)
      case 'var':
        return x.name
      case 'tuple':
        return `(${x.items.map((i) => p(i)).join(', ')})`
      case 'proj':
        return `π${x.index + 1} ${atom(x.of)}`
      case 'op': {
        if (INFIX.has(x.op) && x.args.length === 2) {
          const pr = PREC[x.op]!
          const s = `${p(x.args[0]!, pr)} ${x.op} ${p(x.args[1]!, pr + 1)}`
          return pr < ctx ? `(${s})` : s
        }
        if (x.op === 'neg') return `-${atom(x.args[0]!)}`
        return `${x.op}(${x.args.map((a) => p(a)).join(', ')})`
      }
      case 'let':
      case 'lam':
      case 'if': {
        const s = block(x)
        return ctx > 0 ? `(${s})` : s
      }
      case 'map':
        return `map${x.arrays.length === 1 ? '' : x.arrays.length} (${x.params.join(', ')}. ${p(x.body)}) ${x.arrays.map(atom).join(' ')}`
      case 'reduce':
      case 'fold':
      case 'scanl':
      case 'scanr':
        return `${x.k} (${x.acc}, ${x.elem}. ${p(x.body)}) ${atom(x.init)} ${atom(x.array)}`
      case 'shift1L':
      case 'shift1R':
      case 'pad1L':
      case 'pad1R':
      case 'first':
      case 'last':
        return `${x.k} ${atom(x.array)}`
      case 'prefix':
      case 'padTo':
        return `${x.k} ${atom(x.array)} ${atom(x.len)}`
      case 'app':
        return `${atom(x.fn)}(${x.args.map((a) => p(a)).join(', ')})`
      case 'zero':
        return x.like ? `0̂[${p(x.like)}]` : '0̂'
      case 'add': {
        const s = `${p(x.a, 4)} +̂ ${p(x.b, 5)}`
        return ctx > 4 ? `(${s})` : s
      }
      case 'mapAccum':
        return `mapAccum${x.dir} (${x.dir === 'none' ? '' : `${x.carry}; `}${x.params.join(', ')}. ${p(x.body)}) ${atom(x.carryInit)} ${atom(x.sumInit)} ${x.arrays.map(atom).join(' ')}`
    }
  }
  const atom = (x: Term): string => {
    const s = p(x, 10)
    return /^(?:[\w#.]|\u0302)+$/u.test(s) || (s.startsWith('(') && balancedOuter(s)) ? s : `(${s})`
  }
  const block = (x: Term): string => {
    const lines: string[] = []
    let cur = x
    while (cur.k === 'let') {
      lines.push(`let ${cur.name} = ${p(cur.value)} in`)
      cur = cur.body
    }
    if (cur.k === 'lam') lines.push(`fun (${cur.params.join(', ')}) -> ${p(cur.body)}`)
    else if (cur.k === 'if') lines.push(`if ${p(cur.cond)} then ${p(cur.then)} else ${p(cur.else)}`)
    else lines.push(p(cur))
    return lines.join('\n' + indent)
  }
  return p(t)
}

function balancedOuter(s: string): boolean {
  let depth = 0
  for (let i = 0; i < s.length; i++) {
    if (s[i] === '(') depth++
    else if (s[i] === ')') {
      depth--
      if (depth === 0 && i < s.length - 1) return false
    }
  }
  return true
}

/** The free variables of a term. */
export function freeVars(t: Term, out: Set<string> = new Set(), bound: ReadonlySet<string> = new Set()): Set<string> {
  const go = (x: Term, b: ReadonlySet<string>): void => {
    switch (x.k) {
      case 'const':
      case 'bool':
        return
      case 'var':
        if (!b.has(x.name)) out.add(x.name)
        return
      case 'let':
        go(x.value, b)
        go(x.body, new Set([...b, x.name]))
        return
      case 'lam':
        go(x.body, new Set([...b, ...x.params]))
        return
      case 'map':
        x.arrays.forEach((a) => go(a, b))
        go(x.body, new Set([...b, ...x.params]))
        return
      case 'reduce':
      case 'fold':
      case 'scanl':
      case 'scanr':
        go(x.init, b)
        go(x.array, b)
        go(x.body, new Set([...b, x.acc, x.elem]))
        return
      case 'mapAccum':
        go(x.carryInit, b)
        go(x.sumInit, b)
        x.arrays.forEach((a) => go(a, b))
        go(x.body, new Set([...b, x.carry, ...x.params]))
        return
      case 'zero':
        if (x.like) go(x.like, b)
        return
      default:
        for (const s of children(x)) go(s, b)
    }
  }
  go(t, bound)
  return out
}

/** The immediate subterms of a term (binders not distinguished). */
export function children(x: Term): Term[] {
  switch (x.k) {
    case 'const':
    case 'bool':
    case 'var':
      return []
    case 'let':
      return [x.value, x.body]
    case 'tuple':
      return x.items
    case 'proj':
      return [x.of]
    case 'op':
      return x.args
    case 'map':
      return [...x.arrays, x.body]
    case 'reduce':
    case 'fold':
    case 'scanl':
    case 'scanr':
      return [x.init, x.array, x.body]
    case 'shift1L':
    case 'shift1R':
    case 'pad1L':
    case 'pad1R':
    case 'first':
    case 'last':
      return [x.array]
    case 'prefix':
    case 'padTo':
      return [x.array, x.len]
    case 'if':
      return [x.cond, x.then, x.else]
    case 'lam':
      return [x.body]
    case 'app':
      return [x.fn, ...x.args]
    case 'zero':
      return x.like ? [x.like] : []
    case 'add':
      return [x.a, x.b]
    case 'mapAccum':
      return [x.carryInit, x.sumInit, ...x.arrays, x.body]
  }
}

/**
 * Replaces free variables by variables (capture-free when binders are unique, see `uniquify`).
 */
export function renameFree(t: Term, names: ReadonlyMap<string, string>): Term {
  if (names.size === 0) return t
  return substitute(t, new Map([...names].map(([a, b]) => [a, v(b)])))
}

/** Substitutes terms for free variables (binders are assumed unique, so no capture). */
export function substitute(t: Term, s: ReadonlyMap<string, Term>): Term {
  if (s.size === 0) return t
  const go = (x: Term): Term => {
    if (x.k === 'var') return s.get(x.name) ?? x
    if (x.k === 'mapAccum' && x.primal !== undefined && s.has(x.primal)) {
      // the tag follows a renaming; a primal replaced by anything else is no longer known
      const r = s.get(x.primal)!
      const { primal: _, ...rest } = x
      return mapChildren(r.k === 'var' ? { ...x, primal: r.name } : rest, go)
    }
    return mapChildren(x, go)
  }
  return go(t)
}

/** Rebuilds a term with every immediate subterm transformed by `f`. */
export function mapChildren(x: Term, f: (t: Term) => Term): Term {
  switch (x.k) {
    case 'const':
    case 'bool':
    case 'var':
      return x
    case 'let':
      return { ...x, value: f(x.value), body: f(x.body) }
    case 'tuple':
      return { ...x, items: x.items.map(f) }
    case 'proj':
      return { ...x, of: f(x.of) }
    case 'op':
      return { ...x, args: x.args.map(f) }
    case 'map':
      return { ...x, arrays: x.arrays.map(f), body: f(x.body) }
    case 'reduce':
    case 'fold':
    case 'scanl':
    case 'scanr':
      return { ...x, init: f(x.init), array: f(x.array), body: f(x.body) }
    case 'shift1L':
    case 'shift1R':
    case 'pad1L':
    case 'pad1R':
    case 'first':
    case 'last':
      return { ...x, array: f(x.array) }
    case 'prefix':
    case 'padTo':
      return { ...x, array: f(x.array), len: f(x.len) }
    case 'if':
      return { ...x, cond: f(x.cond), then: f(x.then), else: f(x.else) }
    case 'lam':
      return { ...x, body: f(x.body) }
    case 'app':
      return { ...x, fn: f(x.fn), args: x.args.map(f) }
    case 'zero':
      return x.like ? { ...x, like: f(x.like) } : x
    case 'add':
      return { ...x, a: f(x.a), b: f(x.b) }
    case 'mapAccum':
      return { ...x, carryInit: f(x.carryInit), sumInit: f(x.sumInit), arrays: x.arrays.map(f), body: f(x.body) }
  }
}

/** Renames every binder of a term to a fresh name (so binders are unique program-wide). */
export function uniquify(t: Term): Term {
  const go = (x: Term, s: Map<string, Term>): Term => {
    const bind = (names: string[]) => {
      const s2 = new Map(s)
      const fresh2 = names.map((n) => {
        const f = fresh(n.replace(/#\d+$/, ''))
        s2.set(n, v(f))
        return f
      })
      return [s2, fresh2] as const
    }
    switch (x.k) {
      case 'var':
        return s.get(x.name) ?? x
      case 'let': {
        const [s2, [n]] = bind([x.name])
        return { ...x, name: n!, value: go(x.value, s), body: go(x.body, s2) }
      }
      case 'lam': {
        const [s2, ps] = bind(x.params)
        return { ...x, params: [...ps], body: go(x.body, s2) }
      }
      case 'map': {
        const [s2, ps] = bind(x.params)
        return { ...x, params: [...ps], arrays: x.arrays.map((a) => go(a, s)), body: go(x.body, s2) }
      }
      case 'reduce':
      case 'fold':
      case 'scanl':
      case 'scanr': {
        const [s2, [a, e]] = bind([x.acc, x.elem])
        return { ...x, acc: a!, elem: e!, init: go(x.init, s), array: go(x.array, s), body: go(x.body, s2) }
      }
      case 'mapAccum': {
        const [s2, [cy, ...ps]] = bind([x.carry, ...x.params])
        const tag = x.primal !== undefined ? s.get(x.primal) : undefined
        return {
          ...x,
          carry: cy!,
          params: ps,
          carryInit: go(x.carryInit, s),
          sumInit: go(x.sumInit, s),
          arrays: x.arrays.map((a) => go(a, s)),
          body: go(x.body, s2),
          ...(tag?.k === 'var' ? { primal: tag.name } : {}),
        }
      }
      default:
        return mapChildren(x, (c) => go(c, s))
    }
  }
  return go(t, new Map())
}

/**
 * Renames generated names (`y#17`) to short sequential ones (`y1`, `y2`, …) in binding order,
 * for stable, readable printing. User names are kept.
 */
export function canonicalNames(t: Term): Term {
  const map = new Map<string, string>()
  const counts = new Map<string, number>()
  const taken = new Set<string>()
  const collect = (x: Term) => {
    if (x.k === 'var' && !x.name.includes('#')) taken.add(x.name)
    children(x).forEach(collect)
  }
  collect(t)
  const name = (n: string): string => {
    if (!n.includes('#')) return n
    let m = map.get(n)
    if (!m) {
      const base = n.replace(/#\d+$/, '')
      do {
        const c = (counts.get(base) ?? 0) + 1
        counts.set(base, c)
        m = `${base}${c}`
      } while (taken.has(m))
      taken.add(m)
      map.set(n, m)
    }
    return m
  }
  const go = (x: Term): Term => {
    switch (x.k) {
      case 'var':
        return { k: 'var', name: name(x.name) }
      case 'let': {
        const n = name(x.name)
        return { ...x, name: n, value: go(x.value), body: go(x.body) }
      }
      case 'lam': {
        const ps = x.params.map(name)
        return { ...x, params: ps, body: go(x.body) }
      }
      case 'map': {
        const ps = x.params.map(name)
        return { ...x, params: ps, arrays: x.arrays.map(go), body: go(x.body) }
      }
      case 'reduce':
      case 'fold':
      case 'scanl':
      case 'scanr': {
        const a = name(x.acc),
          e = name(x.elem)
        return { ...x, acc: a, elem: e, init: go(x.init), array: go(x.array), body: go(x.body) }
      }
      case 'mapAccum': {
        const cy = name(x.carry),
          ps = x.params.map(name)
        return {
          ...x,
          carry: cy,
          params: ps,
          carryInit: go(x.carryInit),
          sumInit: go(x.sumInit),
          arrays: x.arrays.map(go),
          body: go(x.body),
          ...(x.primal !== undefined ? { primal: name(x.primal) } : {}),
        }
      }
      default:
        return mapChildren(x, go)
    }
  }
  return go(t)
}

/**
 * Whether two terms are equal up to the names of their bound variables (α-equivalence). Free
 * variables must have the same names.
 */
export function alphaEqual(a: Term, b: Term): boolean {
  const go = (x: Term, y: Term, m: ReadonlyMap<string, string>): boolean => {
    if (x.k !== y.k) return false
    const bind = (xs: string[], ys: string[]) => {
      const m2 = new Map(m)
      xs.forEach((n, i) => m2.set(n, ys[i]!))
      return m2
    }
    switch (x.k) {
      case 'const':
      case 'bool':
        return Object.is(x.value, (y as typeof x).value)
      case 'var':
        return (m.get(x.name) ?? x.name) === (y as typeof x).name
      case 'let': {
        const z = y as typeof x
        return go(x.value, z.value, m) && go(x.body, z.body, bind([x.name], [z.name]))
      }
      case 'lam': {
        const z = y as typeof x
        return x.params.length === z.params.length && go(x.body, z.body, bind(x.params, z.params))
      }
      case 'map': {
        const z = y as typeof x
        return (
          x.params.length === z.params.length &&
          x.arrays.length === z.arrays.length &&
          x.arrays.every((t, i) => go(t, z.arrays[i]!, m)) &&
          go(x.body, z.body, bind(x.params, z.params))
        )
      }
      case 'reduce':
      case 'fold':
      case 'scanl':
      case 'scanr': {
        const z = y as typeof x
        return (
          go(x.init, z.init, m) && go(x.array, z.array, m) && go(x.body, z.body, bind([x.acc, x.elem], [z.acc, z.elem]))
        )
      }
      case 'mapAccum': {
        const z = y as typeof x
        return (
          x.dir === z.dir &&
          !!x.linear === !!z.linear &&
          x.params.length === z.params.length &&
          x.arrays.length === z.arrays.length &&
          go(x.carryInit, z.carryInit, m) &&
          go(x.sumInit, z.sumInit, m) &&
          x.arrays.every((t, i) => go(t, z.arrays[i]!, m)) &&
          go(x.body, z.body, bind([x.carry, ...x.params], [z.carry, ...z.params]))
        )
      }
      case 'op': {
        const z = y as typeof x
        return x.op === z.op && x.args.length === z.args.length && x.args.every((t, i) => go(t, z.args[i]!, m))
      }
      case 'proj':
        return x.index === (y as typeof x).index && go(x.of, (y as typeof x).of, m)
      case 'zero': {
        const z = y as typeof x
        return (
          JSON.stringify(x.type) === JSON.stringify(z.type) &&
          !!x.like === !!z.like &&
          (!x.like || go(x.like, z.like!, m))
        )
      }
      default: {
        const cx = children(x),
          cy = children(y)
        return cx.length === cy.length && cx.every((t, i) => go(t, cy[i]!, m))
      }
    }
  }
  return go(a, b, new Map())
}
