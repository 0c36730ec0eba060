/**
 * Dead-update elimination for gradient programs run without checks. The drivers run a fused
 * gradient program (or the tangent of one, for Hessians) on their own copies and read back only
 * the gradients (or their tangents) and the loss value: the values that the adjoint part restores
 * (uncomputes) are never looked at. An update whose target is not read afterwards (by a later
 * statement, a loop condition or a later iteration) therefore does nothing observable and is
 * dropped. The analysis is the usual backward liveness over structured code, with whole variables
 * and whole arrays as the unit (an array element counts as its array), refined in two ways:
 *
 * - **Calls** are specialised: a call of a function of the program gets a copy of the callee
 *   (`<name>$live<n>`) whose observed parameters are those whose arguments are live after the
 *   call, with the callee's own dead updates dropped; the arguments live before the call are those
 *   whose parameters the copy reads. Inverse calls keep everything they touch.
 * - **Loop-private arrays**: in `for i …`, an array whose every access in the body is an element
 *   `a[i·c + k]` (0 ≤ k < c, one c per array; `i·c` possibly held in an integer ancilla that the
 *   body allocates and never changes) touches different elements in different iterations, so an
 *   update in one iteration is never read by another: only reads in the same iteration or after
 *   the loop keep it. `k` may also be an expression d that an enclosing `if 0 <= d && d < c'`
 *   (c' ≤ c) bounds, when that `if`'s branch writes nothing d reads (the unit-seed updates of
 *   the tangent transform, `t$y[j·w + (i − o)]`).
 *
 * Stacks and host effects keep everything they touch. The result is no longer reversible (an
 * ancilla is not back at zero when it is deallocated), so it is only used when run-time checks
 * are off.
 */
import { printExpr, type Arg, type Expr, type FunctionDef, type Registry, type Stmt } from '@tenet/ir'
import { readNames, rootName } from '@tenet/ir/backend'
import { stmtExprs as exprsOf, valueReads as reads } from '@tenet/ir/backend'

type ForStmt = Extract<Stmt, { kind: 'for' }>

/** Index expressions inside a dataview (what writing it reads). */
function addressReads(dv: Expr | Arg, out: Set<string>): void {
  switch (dv.kind) {
    case 'index':
      reads(dv.index, out)
      break
    case 'field':
      addressReads(dv.target, out)
      break
    case 'neg':
      addressReads(dv.target, out)
      break
  }
}

const union = (a: Set<string>, b: Set<string>): Set<string> => {
  const u = new Set(a)
  for (const x of b) u.add(x)
  return u
}
const minus = (a: Set<string>, b: Set<string>): Set<string> => {
  const u = new Set(a)
  for (const x of b) u.delete(x)
  return u
}
const same = (a: Set<string>, b: Set<string>): boolean => a.size === b.size && [...a].every((x) => b.has(x))

function nested(s: Stmt): Stmt[][] {
  switch (s.kind) {
    case 'if':
      return [s.then, s.else]
    case 'while':
    case 'for':
    case 'unchecked':
      return [s.body]
    default:
      return []
  }
}

function eachStmt(body: Stmt[], visit: (s: Stmt) => void): void {
  for (const s of body) {
    visit(s)
    for (const b of nested(s)) eachStmt(b, visit)
  }
}

/** Whether a statement (or one nested in it) names `name` anywhere. */
function mentions(s: Stmt, name: string): boolean {
  if ((s.kind === 'alloc' || s.kind === 'dealloc') && s.name === name) return true
  if (s.kind === 'for' && s.variable === name) return true
  if (exprsOf(s).some((e) => readNames(e).has(name))) return true
  return nested(s).some((b) => b.some((x) => mentions(x, name)))
}

/**
 * Whether the variable `name` is only ever accumulated into in `body`: every statement that names
 * it (at any depth) is `name += e` or `name -= e` with `e` not reading it. Its final value is then
 * its initial value plus terms that do not depend on it, so its derivative with respect to its
 * own initial value is exactly 1 and nothing else depends on that value.
 */
export function onlyAccumulates(body: Stmt[], name: string): boolean {
  return body.every((s) => {
    if (s.kind === 'update' && (s.op === '+=' || s.op === '-=') && s.target.kind === 'var' && s.target.name === name)
      return !readNames(s.value).has(name)
    if ((s.kind === 'alloc' || s.kind === 'dealloc') && s.name === name) return false
    if (s.kind === 'for' && s.variable === name) return false
    if (exprsOf(s).some((e) => readNames(e).has(name))) return false
    return nested(s).every((b) => onlyAccumulates(b, name))
  })
}

const isInt = (e: Expr, lo: number): e is Extract<Expr, { kind: 'num' }> =>
  e.kind === 'num' && Number.isInteger(e.value) && e.value >= lo

/** (d, c) of a condition `0 <= d && d < c` (c an integer literal ≥ 1), or null. */
function bounded(e: Expr): [Expr, number] | null {
  if (e.kind !== 'binary' || e.op !== '&&') return null
  const lo = e.left,
    hi = e.right
  if (lo.kind !== 'binary' || lo.op !== '<=' || !isInt(lo.left, 0) || lo.left.value !== 0) return null
  if (hi.kind !== 'binary' || hi.op !== '<' || !isInt(hi.right, 1)) return null
  return printExpr(lo.right) === printExpr(hi.left) ? [hi.left, hi.right.value] : null
}

/** Whether a statement of `body` (at any depth) writes a variable or array named in `names`. */
function writesAny(body: Stmt[], names: Set<string>): boolean {
  let hit = false
  eachStmt(body, (s) => {
    const written =
      s.kind === 'update'
        ? [s.target]
        : s.kind === 'callstmt'
          ? s.args
          : s.kind === 'push' || s.kind === 'pop'
            ? [s.value]
            : []
    for (const a of written) if (names.has(rootName(a) ?? '')) hit = true
    if (
      (s.kind === 'alloc' || s.kind === 'dealloc' || s.kind === 'for') &&
      names.has(s.kind === 'for' ? s.variable : s.name)
    )
      hit = true
  })
  return hit
}

/**
 * The arrays of `for i …` that each iteration accesses only at its own elements `a[i·c + k]`
 * (0 ≤ k < c, the same c for all accesses of a; k a literal or an expression bounded by an
 * enclosing `if`): see the module comment.
 */
export function privateArrays(loop: ForStmt): Set<string> {
  const i = loop.variable
  let ok = true
  // integer ancillas the body allocates as i·c and never changes: name → c
  const bases = new Map<string, number>()
  const spoiled = new Set<string>()
  const stride = (e: Expr): number | null => {
    if (e.kind === 'var') return e.name === i ? 1 : null
    if (e.kind !== 'binary' || e.op !== '*') return null
    if (e.left.kind === 'var' && e.left.name === i && isInt(e.right, 1)) return e.right.value
    if (e.right.kind === 'var' && e.right.name === i && isInt(e.left, 1)) return e.left.value
    return null
  }
  eachStmt(loop.body, (s) => {
    if (s.kind === 'for' && s.variable === i) ok = false
    if (s.kind === 'alloc') {
      const c = s.value.kind === 'emptystack' ? null : stride(s.value as Expr)
      if (c === null || (bases.has(s.name) && bases.get(s.name) !== c)) spoiled.add(s.name)
      else bases.set(s.name, c)
    }
    const written =
      s.kind === 'update'
        ? [s.target]
        : s.kind === 'callstmt'
          ? s.args
          : s.kind === 'push' || s.kind === 'pop'
            ? [s.value]
            : []
    for (const a of written) {
      const r = rootName(a)
      if (r === i) ok = false
      if (r !== undefined) spoiled.add(r)
    }
  })
  if (!ok) return new Set()
  for (const v of spoiled) bases.delete(v)
  // expressions that an enclosing `if` bounds to [0, c), by their printed text → c
  const guarded = new Map<string, number>()
  /** (c, k) of an index of the form i·c + k, or null (k is 0 for a bounded expression). */
  const classify = (e: Expr): [number, number] | null => {
    if (e.kind === 'var' && bases.has(e.name)) return [bases.get(e.name)!, 0]
    const c = stride(e)
    if (c !== null) return [c, 0]
    if (e.kind === 'binary' && e.op === '+') {
      const [x, k] = isInt(e.right, 0)
        ? [e.left, e.right.value]
        : isInt(e.left, 0)
          ? [e.right, e.left.value]
          : [null, 0]
      const b = x ? classify(x) : null
      if (b && b[1] === 0 && k < b[0]) return [b[0], k]
      if (!x) {
        for (const [base, d] of [
          [e.left, e.right],
          [e.right, e.left],
        ] as const) {
          const g = guarded.get(printExpr(d))
          const c = g === undefined ? null : classify(base)
          if (c && c[1] === 0 && g! <= c[0]) return [c[0], 0]
        }
      }
    }
    return null
  }
  const strides = new Map<string, number | null>()
  const bad = new Set<string>()
  const visit = (e: Expr | Arg): void => {
    switch (e.kind) {
      case 'index': {
        const ck = classify(e.index)
        const prev = strides.get(e.array.name)
        if (!ck || (prev !== undefined && prev !== ck[0])) bad.add(e.array.name)
        else strides.set(e.array.name, ck[0])
        visit(e.index)
        break
      }
      case 'var':
        bad.add(e.name)
        break
      case 'field':
      case 'neg':
        visit(e.target)
        break
      case 'unary':
        visit(e.arg)
        break
      case 'binary':
        visit(e.left)
        visit(e.right)
        break
      // the length of an array is not one of its elements
      case 'call':
        for (const a of e.args) if (!(e.callee === 'len' && a.kind === 'var')) visit(a)
        break
    }
  }
  const walk = (body: Stmt[]): void => {
    for (const s of body) {
      for (const e of exprsOf(s)) visit(e)
      if (s.kind !== 'if') {
        for (const b of nested(s)) walk(b)
        continue
      }
      const g = bounded(s.pre)
      const key = g && !writesAny(s.then, readNames(g[0])) ? printExpr(g[0]) : null
      const before = key === null ? undefined : guarded.get(key)
      if (key !== null) guarded.set(key, Math.min(g![1], before ?? g![1]))
      walk(s.then)
      if (key !== null) {
        if (before === undefined) guarded.delete(key)
        else guarded.set(key, before)
      }
      walk(s.else)
    }
  }
  walk(loop.body)
  return new Set([...strides.keys()].filter((a) => !bad.has(a)))
}

/**
 * Whether `body` only updates variables outside `live` (and its own ancillas): no calls, stack
 * operations or host effects.
 */
function onlyWritesDead(body: Stmt[], live: ReadonlySet<string>): boolean {
  return body.every((s) => {
    switch (s.kind) {
      case 'update': {
        const r = rootName(s.target)
        return r !== undefined && !live.has(r)
      }
      case 'alloc':
      case 'dealloc':
        return s.value.kind !== 'emptystack'
      case 'if':
        return onlyWritesDead(s.then, live) && onlyWritesDead(s.else, live)
      case 'while':
      case 'for':
      case 'unchecked':
        return onlyWritesDead(s.body, live)
      default:
        return false
    }
  })
}

/** Liveness and dead-update elimination over one program (a set of functions that call each other). */
class DeadUpdates {
  private readonly specialised = new Map<string, { name: string; liveIn: boolean[]; empty: boolean }>()
  readonly out: FunctionDef[] = []

  constructor(
    private readonly functions: ReadonlyMap<string, FunctionDef>,
    private readonly isBijection: (name: string) => boolean,
  ) {}

  /** `f` without its dead updates when only the parameters named in `observed` are read after it. */
  run(f: FunctionDef, observed: ReadonlySet<string>): FunctionDef {
    return { ...f, body: this.sweep(f.body, new Set(observed), true).body }
  }

  /** The copy of `name` specialised for the observed parameters (memoised); its live-in parameters. */
  private specialise(name: string, observed: boolean[]): { name: string; liveIn: boolean[]; empty: boolean } {
    const key = `${name}|${observed.map((b) => (b ? 1 : 0)).join('')}`
    const hit = this.specialised.get(key)
    if (hit) return hit
    const f = this.functions.get(name)!
    // while its body is analysed (recursion), the copy counts as reading every parameter
    const entry = { name: `${name}$live${this.specialised.size}`, liveIn: f.params.map(() => true), empty: false }
    this.specialised.set(key, entry)
    const r = this.sweep(f.body, new Set(f.params.filter((_, i) => observed[i]).map((p) => p.name)), true)
    entry.liveIn = f.params.map((p) => r.live.has(p.name))
    // a copy that does nothing observable: its calls are dropped
    entry.empty = r.body.length === 0
    this.out.push({ ...f, name: entry.name, body: r.body })
    return entry
  }

  /**
   * Liveness before `body` given liveness after it; with `drop`, returns the body without its dead
   * updates too.
   */
  private sweep(body: Stmt[], after: Set<string>, drop: boolean): { live: Set<string>; body: Stmt[] } {
    // the deallocation that ends each scalar ancilla of this body: dropped with a dead allocation
    const ends = new Map<number, number>()
    const open = new Map<string, number>()
    body.forEach((s, i) => {
      if (
        s.kind === 'alloc' &&
        s.value.kind !== 'emptystack' &&
        !(s.value.kind === 'call' && s.value.callee === 'zeros')
      )
        open.set(s.name, i)
      else if (s.kind === 'dealloc' && open.has(s.name)) {
        ends.set(open.get(s.name)!, i)
        open.delete(s.name)
      }
    })
    let live = after
    const kept: Array<Stmt | null> = []
    const keptAt = new Map<number, number>()
    for (let i = body.length - 1; i >= 0; i--) {
      const s = body[i]!
      const end = ends.get(i)
      // (deallocations are always kept: `kept` holds this ancilla's, then the statements of its scope)
      const at = end === undefined ? undefined : keptAt.get(end)
      if (
        s.kind === 'alloc' &&
        at !== undefined &&
        !live.has(s.name) &&
        !kept.slice(at + 1).some((k) => k && mentions(k, s.name))
      ) {
        // an ancilla nothing reads (and no kept statement passes): neither it nor its deallocation is needed
        kept[at] = null
        continue
      }
      const r = this.stmt(s, live, drop)
      live = r.live
      if (r.stmt) {
        keptAt.set(i, kept.length)
        kept.push(r.stmt)
      }
    }
    return { live, body: kept.filter((x): x is Stmt => x !== null).reverse() }
  }

  private stmt(s: Stmt, after: Set<string>, drop: boolean): { live: Set<string>; stmt: Stmt | null } {
    switch (s.kind) {
      case 'update': {
        const root = rootName(s.target)
        if (root !== undefined && !after.has(root)) return { live: after, stmt: null }
        const live = new Set(after)
        reads(s.value, live)
        addressReads(s.target, live)
        return { live, stmt: s }
      }
      case 'alloc': {
        const live = new Set(after)
        live.delete(s.name)
        if (s.value.kind !== 'emptystack') reads(s.value, live)
        return { live, stmt: s }
      }
      // without run-time checks a deallocation reads nothing
      case 'dealloc':
        return { live: after, stmt: s }
      case 'callstmt': {
        // generated IR that the checker has not seen yet has no \`target\`
        const bijection =
          s.target === 'bijection' ||
          (s.target === undefined && !this.functions.has(s.callee) && this.isBijection(s.callee))
        if (bijection) {
          // a bijection whose written arguments are all dead is dropped
          if (
            s.args.every((a) => {
              const r = rootName(a)
              return r !== undefined && !after.has(r)
            })
          )
            return { live: after, stmt: null }
        } else if (!s.inverse && this.functions.has(s.callee)) {
          const callee = this.functions.get(s.callee)!
          const observed = s.args.map((a) => {
            const r = rootName(a)
            return r !== undefined && after.has(r)
          })
          if (callee.params.length === s.args.length) {
            const spec = this.specialise(s.callee, observed)
            if (spec.empty) return { live: after, stmt: null }
            const live = new Set(after)
            s.args.forEach((a, i) => {
              const r = rootName(a)
              if (r === undefined || a.kind === 'unary') reads(a, live)
              else {
                addressReads(a, live)
                if (spec.liveIn[i]) live.add(r)
              }
            })
            return { live, stmt: drop ? { ...s, callee: spec.name } : s }
          }
        }
        // any other call keeps everything it touches
        const live = new Set(after)
        for (const a of s.args) reads(a, live)
        return { live, stmt: s }
      }
      case 'if': {
        const t = this.sweep(s.then, after, drop),
          e = this.sweep(s.else, after, drop)
        // without checks the conditions only choose a branch: with nothing in either, nothing is left
        if (t.body.length === 0 && e.body.length === 0 && drop) return { live: after, stmt: null }
        const live = union(t.live, e.live)
        reads(s.pre, live)
        return { live, stmt: drop ? { ...s, then: t.body, else: e.body } : s }
      }
      case 'while':
      case 'for': {
        // the loop head: live after the loop, or at the start of another iteration (where the
        // loop-private arrays of a `for` are other elements, see `privateArrays`)
        const control = new Set<string>()
        if (s.kind === 'while') reads(s.pre, control)
        else {
          reads(s.start, control)
          reads(s.stop, control)
          if (s.step) reads(s.step, control)
        }
        const priv = s.kind === 'for' ? privateArrays(s) : new Set<string>()
        let head = union(after, control)
        for (;;) {
          const next = union(union(after, control), minus(this.sweep(s.body, head, false).live, priv))
          if (s.kind === 'for') next.delete(s.variable)
          const merged = union(head, next)
          if (same(merged, head)) break
          head = merged
        }
        const r = this.sweep(s.body, head, drop)
        // a loop left updating only what is dead after it (a counting loop with nothing left, the
        // countdown of an uncompute loop whose body went) does nothing observable. Its control
        // values are live, so computed as f computes them: it ends when f's own loop does.
        if (drop && onlyWritesDead(r.body, after)) return { live: after, stmt: null }
        const live = union(head, r.live)
        if (s.kind === 'for') {
          live.delete(s.variable)
          for (const x of control) live.add(x)
        }
        return { live, stmt: drop ? ({ ...s, body: r.body } as Stmt) : s }
      }
      case 'unchecked': {
        const r = this.sweep(s.body, after, drop)
        return { live: r.live, stmt: drop ? (r.body.length ? { ...s, body: r.body } : null) : s }
      }
      default: {
        // push, pop, @safe: keep, and everything they mention is live
        const live = new Set(after)
        const visit = (e: Expr | Arg | undefined) => {
          if (e) reads(e, live)
        }
        if (s.kind === 'push' || s.kind === 'pop') {
          live.add(s.stack.name)
          visit(s.value)
        } else if (s.kind === 'safe') visit(s.expr)
        return { live, stmt: s }
      }
    }
  }
}

/**
 * `f` without the updates whose results nothing reads before the end, where only the
 * parameters named in `observed` are read after the end. Calls keep everything they touch.
 */
export function dropDeadUpdates(f: FunctionDef, observed: ReadonlySet<string>): FunctionDef {
  return new DeadUpdates(new Map(), () => false).run(f, observed)
}

/**
 * Dead-update elimination over a program: `entry` (one of `functions`) without its dead updates
 * when only the parameters named in `observed` are read after it, its calls of functions in
 * `functions` redirected to copies specialised the same way (see the module comment). Returns the
 * new entry and every function it may call: `functions` (inverse calls use them) plus the copies.
 * `registry` tells the bijections among the callees of calls the checker has not resolved yet
 * (generated IR).
 */
export function dropDeadUpdatesIn(
  functions: FunctionDef[],
  entry: FunctionDef,
  observed: ReadonlySet<string>,
  registry?: Registry,
): { entry: FunctionDef; functions: FunctionDef[] } {
  const du = new DeadUpdates(
    new Map(functions.map((g) => [g.name, g])),
    (n) => registry?.findPrimitive(n)?.kind === 'bijection',
  )
  const e = du.run(entry, observed)
  return { entry: e, functions: [...functions.filter((g) => g.name !== entry.name), ...du.out, e] }
}
