/**
 * Range versions (loop versioning of bounds checks). Without run-time checks the wasm backend
 * still guards every element access, since all arguments share one linear memory: an index out of
 * range would read or write another argument. In a counting loop of step 1 or −1 most indices are
 * affine in the loop variable v, `x[c·v + D]` with D made of names the body does not write: every
 * value such an index takes lies between its values at the two ends of the range. The loop then
 * checks once, when it starts, that each of those indices is in range at both ends, and if so runs
 * a copy of itself whose affine accesses carry no guard (marked `inBounds`); if not, it runs as
 * before, every access guarded. The copy runs only when no guard of the original could fail, so
 * the two versions do the same thing: a failing loop fails in the same iteration, at the same
 * access, with the same error, having written what it wrote before. Nothing changes but speed.
 *
 * Which accesses are checked at the start: those of the body's own statements (including the
 * headers of nested `if`, `while` and `for` statements and `@unchecked` blocks), not those inside
 * a branch, a `while` body or an inner loop, which may not run for every value of v. The code
 * generator versions a loop only where no enclosing loop has a version (neither copy versions the
 * loops inside it), so that a nest's code at most doubles; an inner loop of a nest whose outer
 * loop has none versions its own accesses. An index is affine when it is made of v, integer literals, names the
 * body does not write (nor declare), lengths of arrays the body does not (de)allocate, `+`, `-`,
 * negation and products with a literal or of such names, and products of such an invariant value
 * with an affine index (`x[i + m·v]`, column l of a matrix with m rows: the factor of v is then
 * the run-time value of `m`, see `RangeGroup.scale`; only in a loop with no loop inside, so that
 * no inner loop loses a version it would have had); the array is one the body does not
 * (de)allocate. Accesses of one array whose indices differ by a constant share one check (the
 * smallest and the largest constant).
 *
 * Exactness: D is evaluated once, before the loop, in wrapping i32 arithmetic as the body would
 * evaluate it (the body's index is c·v + D modulo 2³² whatever the association, since i32
 * arithmetic is arithmetic modulo 2³²), then c·v + D at both ends is computed exactly in i64:
 * both in [0, len) means every value between them is, and then the i32 index equals that exact
 * value. A check that fails only chooses the guarded version, which is always correct.
 *
 * This module only plans (which accesses, grouped how, and the body of the unguarded copy); the
 * code generator emits the check and the two versions.
 */
import type { Arg, Dataview, Expr, Stmt } from '@tenet/ir'
import { exprChildren, key, readNames, rootName, stmtExprs, walk } from '@tenet/ir/backend'

/** The largest |factor| of the loop variable and |constant| (so that a group's constants spread less than 2³¹). */
const MAX_FACTOR = 2 ** 20
const MAX_CONSTANT = 2 ** 30

/** The bodies of more statements than this (nested ones counted) are not versioned (the code would double). */
export const RANGE_VERSION_MAX_STATEMENTS = 400

/**
 * One check at the loop's start: `array[(factor + scale)·v + terms + k]` in range for every k in
 * low..high and every v of the range.
 */
export interface RangeGroup {
  array: string
  /** The literal part of the factor c of the loop variable. */
  factor: number
  /**
   * The part of the factor known only at run time (a sum of invariant values, such as the row
   * count `m` of `x[i + m·v]`), or null for none. The check evaluates factor + scale once, in
   * wrapping i32 arithmetic as the body would, and runs the guarded loop unless it is ≥ 0 and the
   * exact spread of the indices, computed in i64, is below 2³¹.
   */
  scale: Expr | null
  /** The sum of the index's other terms (names, lengths, their products), or null for none. */
  terms: Expr | null
  /** The smallest and largest integer constant added to it. */
  low: number
  high: number
}

/** The plan of a versioned loop: the checks at its start and the body of its unguarded copy. */
export interface RangeVersion {
  groups: RangeGroup[]
  /** The loop body with the checked accesses marked `inBounds`. */
  body: Stmt[]
  /** How many different elements (array and index) the copy reads or writes unguarded per iteration. */
  accesses: number
  /**
   * The fewest iterations for which the check at the start costs less than the guards it saves:
   * (4 · groups + 2) / accesses, the weights measured on the graph-embedding gradient (its inner
   * loops of k = 2…10 iterations); fewer iterations run the guarded loop without checking.
   */
  minTrips: number
}

/** What the planner needs of the program: the parameters each function writes. */
export interface RangeVersionContext {
  /** The parameters a function writes (undefined for a bijection: all its arguments count as written). */
  writes: (callee: string) => readonly boolean[] | undefined
}

/** (c + Σ scale·factorTerm)·v + Σ scale·term + constant. */
interface Linear {
  factor: number
  /** Invariant values that multiply v (their sum is the run-time part of its factor). */
  factorTerms: Array<{ scale: number; e: Expr }>
  constant: number
  terms: Array<{ scale: number; e: Expr }>
}

const I32 = 'i32'
const num = (value: number): Expr => ({ kind: 'num', value, isFloat: false, type: I32 })

function scaled(l: Linear, by: number): Linear {
  return {
    factor: l.factor * by,
    factorTerms: l.factorTerms.map((t) => ({ ...t, scale: t.scale * by })),
    constant: l.constant * by,
    terms: l.terms.map((t) => ({ ...t, scale: t.scale * by })),
  }
}

function sum(a: Linear, b: Linear, sign: 1 | -1): Linear {
  return {
    factor: a.factor + sign * b.factor,
    factorTerms: [...a.factorTerms, ...b.factorTerms.map((t) => ({ ...t, scale: t.scale * sign }))],
    constant: a.constant + sign * b.constant,
    terms: [...a.terms, ...b.terms.map((t) => ({ ...t, scale: t.scale * sign }))],
  }
}

const isConstant = (l: Linear) => l.factor === 0 && l.factorTerms.length === 0 && l.terms.length === 0
/** Whether an index part does not depend on the loop variable. */
const isInvariant = (l: Linear) => l.factor === 0 && l.factorTerms.length === 0

/**
 * The product of an invariant value \`e\` (not a literal) with an index part \`l\` affine in v
 * whose factor is a literal: \`m·(c·v + Σ t + k)\` is \`(c·m)·v + Σ m·t + k·m\`. Each new term is
 * evaluated as written (a product of invariant values), in wrapping i32 arithmetic, so the sum
 * is the body's index modulo 2³² (see the module comment).
 */
function invariantTimes(e: Expr, l: Linear): Linear | undefined {
  if (l.factorTerms.length) return undefined
  const times = (t: Expr): Expr => ({ kind: 'binary', op: '*', left: e, right: t, type: I32 })
  return {
    factor: 0,
    factorTerms: l.factor ? [{ scale: l.factor, e }] : [],
    constant: 0,
    terms: [
      ...l.terms.map((t) => ({ scale: t.scale, e: times(t.e) })),
      ...(l.constant ? [{ scale: l.constant, e }] : []),
    ],
  }
}

/** An i32 index as c·v + terms + constant, or undefined when it is not affine with invariant terms. */
function linear(
  e: Expr,
  v: string,
  invariant: (name: string) => boolean,
  fixedLength: (name: string) => boolean,
): Linear | undefined {
  if (e.type !== I32) return undefined
  switch (e.kind) {
    case 'num':
      return Number.isInteger(e.value) ? { factor: 0, factorTerms: [], constant: e.value, terms: [] } : undefined
    case 'var':
      if (e.name === v) return { factor: 1, factorTerms: [], constant: 0, terms: [] }
      return invariant(e.name) ? { factor: 0, factorTerms: [], constant: 0, terms: [{ scale: 1, e }] } : undefined
    case 'call':
      return e.callee === 'len' && e.args.length === 1 && e.args[0]!.kind === 'var' && fixedLength(e.args[0]!.name)
        ? { factor: 0, factorTerms: [], constant: 0, terms: [{ scale: 1, e }] }
        : undefined
    case 'unary': {
      if (e.op !== '-') return undefined
      const a = linear(e.arg, v, invariant, fixedLength)
      return a && scaled(a, -1)
    }
    case 'binary': {
      if (e.op !== '+' && e.op !== '-' && e.op !== '*') return undefined
      const l = linear(e.left, v, invariant, fixedLength),
        r = linear(e.right, v, invariant, fixedLength)
      if (!l || !r) return undefined
      if (e.op === '+') return sum(l, r, 1)
      if (e.op === '-') return sum(l, r, -1)
      if (isConstant(l)) return scaled(r, l.constant)
      if (isConstant(r)) return scaled(l, r.constant)
      // a product of invariant values: one term, evaluated as written
      if (isInvariant(l) && isInvariant(r))
        return !readNames(e).has(v) ? { factor: 0, factorTerms: [], constant: 0, terms: [{ scale: 1, e }] } : undefined
      // an invariant value times an affine index: the value is part of v's factor
      if (isInvariant(l) && !readNames(e.left).has(v)) return invariantTimes(e.left, r)
      if (isInvariant(r) && !readNames(e.right).has(v)) return invariantTimes(e.right, l)
      return undefined
    }
    default:
      return undefined
  }
}

/** The terms as one i32 expression (sorted by key, so that equal sums group together), or null. */
function termsExpr(terms: Linear['terms']): { expr: Expr | null; key: string } | undefined {
  const byKey = new Map<string, { scale: number; e: Expr }>()
  for (const t of terms) {
    const k = key(t.e)
    const had = byKey.get(k)
    byKey.set(k, { scale: (had?.scale ?? 0) + t.scale, e: t.e })
  }
  const kept = [...byKey].filter(([, t]) => t.scale !== 0).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
  if (kept.some(([, t]) => !Number.isSafeInteger(t.scale))) return undefined
  let expr: Expr | null = null
  for (const [, t] of kept) {
    const abs = Math.abs(t.scale)
    const one: Expr = abs === 1 ? t.e : { kind: 'binary', op: '*', left: num(abs | 0), right: t.e, type: I32 }
    if (expr === null) expr = t.scale < 0 ? { kind: 'unary', op: '-', arg: one, type: I32 } : one
    else expr = { kind: 'binary', op: t.scale < 0 ? '-' : '+', left: expr, right: one, type: I32 }
  }
  return { expr, key: kept.map(([k, t]) => `${t.scale}*${k}`).join(' + ') }
}

/** What a loop body may change: names it writes or declares (`len:x` for arrays it (de)allocates), and inner loop variables. */
function changes(body: Stmt[], ctx: RangeVersionContext): Set<string> {
  const w = new Set<string>()
  const root = (a: Arg) => {
    const r = rootName(a)
    if (r !== undefined) w.add(r)
  }
  walk(body, (s) => {
    switch (s.kind) {
      case 'update':
        root(s.target)
        break
      case 'push':
      case 'pop':
        root(s.value)
        w.add(s.stack.name)
        break
      case 'callstmt': {
        const writes = s.target === 'function' ? ctx.writes(s.callee) : undefined
        s.args.forEach((a, i) => {
          if (writes?.[i] !== false) root(a)
        })
        break
      }
      case 'alloc':
      case 'dealloc':
        w.add(s.name)
        w.add(`len:${s.name}`)
        break
      case 'for':
        w.add(s.variable)
        break
    }
  })
  return w
}

/** Every element access of an expression, nested ones included. */
function accessesOf(e: Expr | Arg, out: Array<Extract<Expr, { kind: 'index' }>>): void {
  if (e.kind === 'neg') return accessesOf(e.target, out)
  if (e.kind === 'index') out.push(e)
  for (const c of exprChildren(e)) accessesOf(c, out)
}

/** The accesses of a body that run on every iteration (see the module comment). */
function everyIteration(body: readonly Stmt[], out: Array<Extract<Expr, { kind: 'index' }>>): void {
  for (const s of body) {
    for (const e of stmtExprs(s, { assertions: false })) accessesOf(e, out)
    if (s.kind === 'unchecked') everyIteration(s.body, out)
  }
}

function countStatements(body: Stmt[]): number {
  let n = 0
  walk(body, () => {
    n++
  })
  return n
}

/**
 * The range version of a loop of step 1 or −1 (see the module comment), or null when none of its
 * accesses can be checked at its start (or its body is too large to copy).
 */
export function planRangeVersion(loop: Extract<Stmt, { kind: 'for' }>, ctx: RangeVersionContext): RangeVersion | null {
  if (countStatements(loop.body) > RANGE_VERSION_MAX_STATEMENTS) return null
  const changed = changes(loop.body, ctx)
  if (changed.has(loop.variable)) return null
  const invariant = (n: string) => !changed.has(n)
  const fixedLength = (n: string) => !changed.has(`len:${n}`)
  const found: Array<Extract<Expr, { kind: 'index' }>> = []
  everyIteration(loop.body, found)
  // a factor known only at run time only in a loop with no loop inside: a versioned loop's inner
  // loops are not versioned (see the module comment), and they have the more accesses
  let nested = false
  walk(loop.body, (s) => {
    if (s.kind === 'for' || s.kind === 'while') nested = true
  })
  const groups = new Map<string, RangeGroup>()
  const covered = new Set<Expr>()
  const elements = new Set<string>()
  for (const access of found) {
    if (access.inBounds === true || !fixedLength(access.array.name)) continue
    const l = linear(access.index, loop.variable, invariant, fixedLength)
    if (!l || Math.abs(l.factor) > MAX_FACTOR || Math.abs(l.constant) > MAX_CONSTANT) continue
    if (nested && l.factorTerms.length) continue
    const t = termsExpr(l.terms),
      f = termsExpr(l.factorTerms)
    if (!t || !f) continue
    const k = `${access.array.name}|${l.factor}|${f.key}|${t.key}`
    const g = groups.get(k)
    if (g) {
      g.low = Math.min(g.low, l.constant)
      g.high = Math.max(g.high, l.constant)
    } else
      groups.set(k, {
        array: access.array.name,
        factor: l.factor,
        scale: f.expr,
        terms: t.expr,
        low: l.constant,
        high: l.constant,
      })
    covered.add(access)
    elements.add(`${access.array.name}[${key(access.index)}]`)
  }
  if (!covered.size) return null
  return {
    groups: [...groups.values()],
    body: markBlock(loop.body, covered),
    accesses: elements.size,
    minTrips: Math.max(1, Math.ceil((4 * groups.size + 2) / elements.size)),
  }
}

/** A copy of a block with the accesses in `covered` marked `inBounds` (the rest shared). */
function markBlock(body: readonly Stmt[], covered: Set<Expr>): Stmt[] {
  return body.map((s) => markStmt(s, covered))
}

function markStmt(s: Stmt, covered: Set<Expr>): Stmt {
  const x = <T extends Expr | Arg>(e: T): T => mark(e, covered) as T
  switch (s.kind) {
    case 'update':
      return { ...s, target: x(s.target), value: x(s.value) }
    case 'callstmt':
      return { ...s, args: s.args.map(x) }
    case 'alloc':
    case 'dealloc':
      return s.value.kind === 'emptystack' ? s : ({ ...s, value: x(s.value) } as Stmt)
    case 'if':
      return { ...s, pre: x(s.pre) }
    case 'while':
      return { ...s, pre: x(s.pre) }
    case 'for':
      return { ...s, start: x(s.start), stop: x(s.stop), step: s.step ? x(s.step) : null }
    case 'push':
    case 'pop':
      return { ...s, value: x(s.value) }
    case 'safe':
      return { ...s, expr: x(s.expr) }
    case 'unchecked':
      return { ...s, body: markBlock(s.body, covered) }
    default:
      return s
  }
}

/** `e` with the accesses in `covered` marked (new nodes along the way, the rest shared). */
function mark(e: Expr | Arg, covered: Set<Expr>): Expr | Arg {
  switch (e.kind) {
    case 'index': {
      const index = mark(e.index, covered) as Expr
      if (covered.has(e)) return { ...e, index, inBounds: true }
      return index === e.index ? e : { ...e, index }
    }
    case 'unary': {
      const arg = mark(e.arg, covered) as Expr
      return arg === e.arg ? e : { ...e, arg }
    }
    case 'binary': {
      const left = mark(e.left, covered) as Expr,
        right = mark(e.right, covered) as Expr
      return left === e.left && right === e.right ? e : { ...e, left, right }
    }
    case 'call': {
      const args = e.args.map((a) => mark(a, covered) as Expr)
      return args.every((a, i) => a === e.args[i]) ? e : { ...e, args }
    }
    case 'field': {
      const target = mark(e.target, covered) as Expr
      return target === e.target ? e : { ...e, target }
    }
    case 'neg': {
      const target = mark(e.target, covered) as Dataview
      return target === e.target ? e : { ...e, target }
    }
    default:
      return e
  }
}

/**
 * With run-time checks on: the range version of a loop of step 1 or −1 whose body's bounds asserts
 * (`assert outOfBounds($inrange(index, len(x)))`, which `insert-checks` of `@tenet/ir` places
 * before the statements that read or write `x[index]` and `hoist-bounds` could not move out of the
 * loop, as in a branch of its body) have indices affine in the loop variable: one check at the
 * loop's start, as above, that every such index is in range at both ends of the range, and a copy
 * of the loop without those asserts when it holds; the loop as it is (every assert in place) when
 * it does not. Asserts inside a branch count too: the check then asks for more than the loop reads
 * (a branch that does not run for some value of the variable reads nothing there), which only
 * sends more calls to the loop as it is. The copy runs only when none of the asserts it lacks could
 * fail, so the two do the same thing, and every other check (deallocations, branch and loop
 * conditions) stays in both, in its place: the errors are the reference's.
 *
 * Only a loop with no loop inside it is versioned (its inner loops version their own asserts,
 * which then see the outer variables as invariant).
 */
export function planCheckedRangeVersion(
  loop: Extract<Stmt, { kind: 'for' }>,
  ctx: RangeVersionContext,
): RangeVersion | null {
  if (countStatements(loop.body) > RANGE_VERSION_MAX_STATEMENTS) return null
  let nested = false
  walk(loop.body, (s) => {
    if (s.kind === 'for' || s.kind === 'while') nested = true
  })
  if (nested) return null
  const changed = changes(loop.body, ctx)
  if (changed.has(loop.variable)) return null
  const invariant = (n: string) => !changed.has(n)
  const fixedLength = (n: string) => !changed.has(`len:${n}`)
  const groups = new Map<string, RangeGroup>()
  const covered = new Set<Stmt>()
  const elements = new Set<string>()
  walk(loop.body, (s) => {
    const bound = boundsAssert(s)
    if (!bound || !fixedLength(bound.array)) return
    const l = linear(bound.index, loop.variable, invariant, fixedLength)
    if (!l || Math.abs(l.factor) > MAX_FACTOR || Math.abs(l.constant) > MAX_CONSTANT) return
    const t = termsExpr(l.terms),
      f = termsExpr(l.factorTerms)
    if (!t || !f) return
    const k = `${bound.array}|${l.factor}|${f.key}|${t.key}`
    const g = groups.get(k)
    if (g) {
      g.low = Math.min(g.low, l.constant)
      g.high = Math.max(g.high, l.constant)
    } else
      groups.set(k, {
        array: bound.array,
        factor: l.factor,
        scale: f.expr,
        terms: t.expr,
        low: l.constant,
        high: l.constant,
      })
    covered.add(s)
    elements.add(`${bound.array}[${key(bound.index)}]`)
  })
  if (!covered.size) return null
  return {
    groups: [...groups.values()],
    body: withoutAsserts(loop.body, covered),
    accesses: elements.size,
    minTrips: Math.max(1, Math.ceil((4 * groups.size + 2) / elements.size)),
  }
}

/** The array and index of a bounds assert `$inrange(index, len(array))`, or undefined for any other statement. */
function boundsAssert(s: Stmt): { array: string; index: Expr } | undefined {
  if (s.kind !== 'assert' || s.check !== 'outOfBounds') return undefined
  const c = s.cond
  if (c.kind !== 'call' || c.callee !== '$inrange' || c.args.length !== 2) return undefined
  const [index, n] = c.args as [Expr, Expr]
  if (n.kind !== 'call' || n.callee !== 'len' || n.args.length !== 1 || n.args[0]!.kind !== 'var') return undefined
  return { array: n.args[0]!.name, index }
}

/** A copy of a block (of no loops) without the asserts in `covered` (the rest shared). */
function withoutAsserts(body: readonly Stmt[], covered: Set<Stmt>): Stmt[] {
  return body
    .filter((s) => !covered.has(s))
    .map((s): Stmt => {
      switch (s.kind) {
        case 'if':
          return { ...s, then: withoutAsserts(s.then, covered), else: withoutAsserts(s.else, covered) }
        case 'unchecked':
          return { ...s, body: withoutAsserts(s.body, covered) }
        default:
          return s
      }
    })
}
