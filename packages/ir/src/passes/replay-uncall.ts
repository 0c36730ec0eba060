/**
 * `replay-uncall` — with run-time checks on, run by the cpu backend on optimize's result: the
 * uncall `~f(a, x…)` that undoes a call `f(a, x…)` of the same block, where `f` only adds terms to
 * one float array `a` (an acceleration, a gradient, a histogram: `a[i] += e`), replays the terms
 * the call added instead of computing them again. The call runs `f$replay`, a copy of `f` that
 * records every term it adds to `a` (`a[i] += $record(e)`), and the uncall runs its inverse, the
 * control flow of `~f` and its updates of `a` alone, each by the recorded term
 * (`a[i] -= $replayed()`). A leapfrog step that computes the accelerations in a routine and
 * uncomputes them with `~routine` (paper 000 Appendix F) no longer computes them twice.
 *
 * `$record(e)` and `$replayed()` are reserved calls (their names cannot be written in a program):
 * `$record(e)` is `e`, also pushed on the module's tape of terms; `$replayed()` pops the last term
 * pushed. The pass pairs a call with its uncall only where the pairs between them nest: where an
 * earlier pair's uncall lies between them (`f(a…) f(b…) ~f(a…) ~f(b…)`, the pairs would cross and
 * the first uncall pop the second call's terms), the later call keeps its plain uncall. A pair
 * lies in one block, so the pairs of nested blocks and of other functions balance within them:
 * the tape is a stack, every uncall pops the terms its call pushed, those of the calls and
 * uncalls between them popped already.
 *
 * Why it is exact, checks included. The pass compares `f` with its inverse as written (not as one
 * may think an inverse looks): it evaluates both symbolically, each local scalar by the expression
 * of its value (a routine's `dx += x[j] - x[i]` from zero is `0 + (x[j] − x[i])`; after
 * `finite-uncompute`, `dx -= dx` is `(…) − (…)`). It applies where:
 * - `f` writes one parameter, a float array `a`, only by `a[i] += e` or `a[i] -= e`, `e` and `i`
 *   read no `a`;
 * - every other statement of `f` is a `for` or an `if` whose ranges and conditions read only
 *   parameters, loop variables and literals, or an allocation, update or deallocation of a scalar
 *   local allocated and deallocated in the same block (no calls, no host calls, no `while`, no
 *   stacks, no `@safe`, no `@unchecked`);
 * - `~f` has the same `for` and `if` nests in reverse order, with the updates of `a` in reverse
 *   order, each the opposite update of the same element by a term whose expression is the same
 *   (the same operations on the same parameters and loop variables, after substituting the
 *   locals' values) — so it subtracts the very bits the call added, in reverse order: the
 *   recorded terms;
 * - every check of `~f` that the replay leaves out (a local's deallocation, the bounds of an array
 *   read for a term) is, on the same symbolic values, a check of `f` in the same position of the
 *   same nest — one the call passed, or it would have failed first; the checks the replay keeps
 *   (loop ranges, `if` post-conditions, the bounds of `a[i]`) are `~f`'s own;
 * - in the caller, the uncall has the call's arguments, and nothing between them writes what the
 *   call reads other than `a` (a write of `a` between them is allowed: `~f` subtracts the same
 *   terms whatever `a` holds, since no term reads it); `f` has no host effect. A written array
 *   shares no memory with another argument (the aliasing rule, `call/overlap`), so the arrays the
 *   call reads hold the same values at the uncall.
 *
 * So the uncall writes the same values into `a` as `~f`, every check it drops could not fail, and
 * no other check moves. With checks off, `dead-ancillas` drops such uncomputes altogether.
 *
 * A call that fails between a recording call and its uncall leaves the terms of that call on the
 * tape; the backend drops them, so that repeated failing calls do not pile them up: the cpu
 * backend empties the tape at its entries and as a check fails where the module never calls out
 * to JavaScript, and elsewhere (a host function may call an entry while a live call below it holds
 * terms) puts the tape's top back, as a throw leaves an entry, where it was when entered.
 */
import type { CallStmt, Expr, FunctionDef, Stmt } from '../ast.js'
import type { Program } from '../plugin.js'
import { callsHost } from './insert-checks.js'
import { writtenNames } from './hoist-invariants.js'
import { readNames } from '../check.js'
import { key } from '../cse.js'
import { exprChildren, stmtExprs } from '../stmt-exprs.js'

/** The reserved call `$record(e)`: `e`, pushed on the tape of recorded terms. */
export const RECORD = '$record'
/** The reserved call `$replayed()`: the last term pushed on the tape, popped. */
export const REPLAYED = '$replayed'
/** The suffix of the recording copy of a function (`accel$replay`; `$` cannot be written in a name). */
export const REPLAY_SUFFIX = '$replay'

/** Whether an expression (or argument) records or replays a term: an effect on the tape. */
export function callsTape(e: Expr | CallStmt['args'][number]): boolean {
  if (e.kind === 'neg') return callsTape(e.target)
  if (e.kind === 'call' && (e.callee === RECORD || e.callee === REPLAYED)) return true
  return exprChildren(e).some(callsTape)
}

/** Whether an expression calls the host or records or replays a term. */
export const callsHostOrTape = (e: Expr | CallStmt['args'][number]): boolean => callsHost(e) || callsTape(e)

/** The float element types whose terms the tape (a Float64Array) holds exactly. */
const FLOATS: ReadonlySet<string> = new Set(['f64', 'f32'])

/** A key longer than this is not compared (a symbolic value that grew with a chain of updates). */
const MAX_KEY = 20000

/** What a block of `f` (or of `~f`) does that the comparison looks at. */
interface Skeleton {
  items: Item[]
  /** The checks the block's dropped statements make, by symbolic key. */
  checks: Set<string>
}
type Item =
  | { kind: 'update'; op: '+=' | '-='; index: string; value: string }
  | { kind: 'for'; head: string; reverse: boolean; body: Skeleton }
  | { kind: 'if'; pre: string; post: string; then: Skeleton; else: Skeleton }

/** Thrown inside the analysis where `f` is not of the shape (caught by {@link replayable}). */
class NotReplayable extends Error {}
const fail = (): never => {
  throw new NotReplayable()
}

/**
 * The symbolic evaluation of one function: `a` the recorded array, `params` the other parameters
 * (read only), `locals` the scalar locals in scope with the keys of their values, `loops` the loop
 * variables in scope.
 */
class Symbolic {
  constructor(
    readonly a: string,
    readonly params: ReadonlySet<string>,
  ) {}

  /** The key of `e`'s value, the locals replaced by theirs; `checks` gets the bounds of its reads. */
  value(e: Expr, locals: ReadonlyMap<string, string> | null, loops: ReadonlySet<string>, checks?: Set<string>): string {
    const k = this.sym(e, locals, loops, checks)
    if (k.length > MAX_KEY) fail()
    return k
  }

  private sym(
    e: Expr,
    locals: ReadonlyMap<string, string> | null,
    loops: ReadonlySet<string>,
    checks?: Set<string>,
  ): string {
    switch (e.kind) {
      case 'num':
      case 'bool':
        return key(e)
      case 'var': {
        if (e.name === this.a) fail()
        if (loops.has(e.name)) return `$${e.name}`
        const l = locals?.get(e.name)
        if (l !== undefined) return `{${l}}`
        // (a parameter: read only; an array only as the argument of `len`, handled below)
        if (this.params.has(e.name) && (typeof e.type === 'string' || e.type?.kind === 'scalar')) return `$${e.name}`
        return fail()
      }
      case 'index': {
        if (e.array.name === this.a || !this.params.has(e.array.name)) fail()
        const i = this.sym(e.index, locals, loops, checks)
        const k = `${e.array.name}[${i}]:${e.type ?? ''}`
        checks?.add(`bounds ${k}`)
        return k
      }
      case 'unary':
        return `${e.op}(${this.sym(e.arg, locals, loops, checks)}):${e.type ?? ''}`
      case 'binary':
        return `(${this.sym(e.left, locals, loops, checks)} ${e.op} ${this.sym(e.right, locals, loops, checks)}):${e.type ?? ''}`
      case 'call': {
        if (e.callee.startsWith('$')) fail()
        if (e.callee === 'len') {
          const x = e.args[0]
          if (x?.kind !== 'var' || x.name === this.a || !this.params.has(x.name)) fail()
          return `len(${(x as { name: string }).name})`
        }
        return `${e.callee}(${e.args.map((x) => this.sym(x, locals, loops, checks)).join(', ')}):${e.type ?? ''}`
      }
      default:
        return fail()
    }
  }

  /** The skeleton of a block (see {@link Skeleton}); `outer`: the locals of the enclosing blocks. */
  block(body: Stmt[], outer: ReadonlyMap<string, string>, loops: ReadonlySet<string>): Skeleton {
    const locals = new Map(outer)
    const own = new Set<string>()
    const checks = new Set<string>()
    const items: Item[] = []
    for (const s of body) {
      if (stmtExprs(s).some(callsHost)) fail()
      switch (s.kind) {
        case 'alloc': {
          if (s.type?.kind !== 'scalar' || s.value.kind === 'emptystack') fail()
          if (locals.has(s.name) || loops.has(s.name) || this.params.has(s.name) || s.name === this.a) fail()
          locals.set(s.name, this.value(s.value as Expr, locals, loops, checks))
          own.add(s.name)
          break
        }
        case 'dealloc': {
          if (!own.has(s.name) || s.value.kind === 'emptystack') fail()
          checks.add(
            `dealloc ${s.name}: ${locals.get(s.name)} -> ${this.value(s.value as Expr, locals, loops, checks)}`,
          )
          locals.delete(s.name)
          own.delete(s.name)
          break
        }
        case 'update': {
          if (s.op !== '+=' && s.op !== '-=') fail()
          const t = s.target
          if (t.kind === 'var' && own.has(t.name)) {
            const v = this.value(s.value, locals, loops, checks)
            locals.set(
              t.name,
              `(${locals.get(t.name)} ${s.op === '+=' ? '+' : '-'} ${v}):${typeof t.type === 'string' ? t.type : ''}`,
            )
            break
          }
          if (t.kind !== 'index' || t.array.name !== this.a) fail()
          const idx = t as Extract<Expr, { kind: 'index' }>
          // (the element's index is kept in the replay, where the locals are not: it reads none)
          const index = this.value(idx.index, null, loops)
          items.push({
            kind: 'update',
            op: s.op as '+=' | '-=',
            index,
            value: this.value(s.value, locals, loops, checks),
          })
          break
        }
        case 'for': {
          if (loops.has(s.variable) || locals.has(s.variable)) fail()
          const range = [s.start, s.stop, ...(s.step ? [s.step] : [])].map((e) => this.value(e, null, loops))
          const inner = new Set(loops).add(s.variable)
          items.push({
            kind: 'for',
            head: `${s.variable} in ${range.join(', ')}${s.step ? '' : ' (1)'}${s.inclusive ? ' ..=' : ' ..'}`,
            reverse: !!s.reverse,
            body: this.block(s.body, locals, inner),
          })
          break
        }
        case 'if':
          items.push({
            kind: 'if',
            pre: this.value(s.pre, null, loops),
            post: this.value(s.post ?? s.pre, null, loops),
            then: this.block(s.then, locals, loops),
            else: this.block(s.else, locals, loops),
          })
          break
        default:
          // (calls, `while`, stacks, `@safe`, `@unchecked`, asserts)
          fail()
      }
    }
    if (own.size) fail()
    return { items, checks }
  }
}

/** Whether skeleton `inv` is that of the inverse of `fwd` (see the module comment). */
function inverseOf(fwd: Skeleton, inv: Skeleton): boolean {
  const n = fwd.items.length
  if (inv.items.length !== n) return false
  for (const c of inv.checks) if (!fwd.checks.has(c)) return false
  for (let k = 0; k < n; k++) {
    const f = fwd.items[n - 1 - k]!
    const i = inv.items[k]!
    if (f.kind !== i.kind) return false
    if (f.kind === 'update') {
      const u = i as typeof f
      if (u.op === f.op || u.index !== f.index || u.value !== f.value) return false
    } else if (f.kind === 'for') {
      const l = i as typeof f
      if (l.head !== f.head || l.reverse === f.reverse || !inverseOf(f.body, l.body)) return false
    } else {
      const c = i as typeof f
      if (c.pre !== f.post || c.post !== f.pre || !inverseOf(f.then, c.then) || !inverseOf(f.else, c.else)) return false
    }
  }
  return true
}

/**
 * The index of the parameter whose terms a call of `f` can record and its uncall (running `inv`,
 * `~f` as compiled) replay, or undefined where `f` is not of that shape (see the module comment).
 * `writes`: which parameters `f` writes.
 */
export function replayable(f: FunctionDef, inv: FunctionDef, writes: readonly boolean[]): number | undefined {
  const written = writes.flatMap((w, i) => (w ? [i] : []))
  if (written.length !== 1) return undefined
  const k = written[0]!
  const p = f.params[k]!
  if (p.type.kind !== 'array' || !FLOATS.has(p.type.elem)) return undefined
  if (inv.params.length !== f.params.length || inv.params.some((q, i) => q.name !== f.params[i]!.name)) return undefined
  const params = new Set(f.params.filter((_, i) => i !== k).map((q) => q.name))
  try {
    const sym = new Symbolic(p.name, params)
    const fwd = sym.block(f.body, new Map(), new Set())
    const back = sym.block(inv.body, new Map(), new Set())
    if (!fwd.items.length) return undefined
    return inverseOf(fwd, back) ? k : undefined
  } catch (e) {
    if (e instanceof NotReplayable) return undefined
    throw e
  }
}

/** `f` with every update of array `a` adding `$record(e)` for its term `e`: the recording copy. */
export function recording(f: FunctionDef, a: string): FunctionDef {
  const block = (body: Stmt[]): Stmt[] =>
    body.map((s): Stmt => {
      switch (s.kind) {
        case 'update':
          if (s.target.kind === 'index' && s.target.array.name === a) {
            const t = s.target.type
            return { ...s, value: { kind: 'call', callee: RECORD, args: [s.value], ...(t ? { type: t } : {}) } }
          }
          return s
        case 'for':
          return { ...s, body: block(s.body) }
        case 'if':
          return { ...s, then: block(s.then), else: block(s.else) }
        default:
          return s
      }
    })
  return { ...f, name: f.name + REPLAY_SUFFIX, body: block(f.body) }
}

/**
 * The replay of `inv` (`~f`): its loops and `if`s, and its updates of array `a`, each by the term
 * the recording copy pushed last (`$replayed()`); the locals and their statements go.
 */
export function replaying(inv: FunctionDef, a: string): FunctionDef {
  const block = (body: Stmt[]): Stmt[] =>
    body.flatMap((s): Stmt[] => {
      switch (s.kind) {
        case 'update':
          if (s.target.kind === 'index' && s.target.array.name === a) {
            const t = s.target.type
            return [{ ...s, value: { kind: 'call', callee: REPLAYED, args: [], ...(t ? { type: t } : {}) } }]
          }
          return []
        case 'for':
          return [{ ...s, body: block(s.body) }]
        case 'if':
          return [{ ...s, then: block(s.then), else: block(s.else) }]
        default:
          return []
      }
    })
  return { ...inv, name: inv.name + REPLAY_SUFFIX, body: block(inv.body) }
}

/** The names that an argument list reads (the arrays passed whole included). */
const argNames = (args: CallStmt['args']): Set<string> => {
  const out = new Set<string>()
  for (const x of args) readNames(x, out)
  return out
}

const sameArgs = (a: CallStmt['args'], b: CallStmt['args']): boolean =>
  a.length === b.length &&
  a.every((x, i) => {
    const y = b[i]!
    return x.kind !== 'neg' && y.kind !== 'neg' && key(x) === key(y)
  })

/**
 * The program with each call–uncall pair of a replayable function (see the module comment)
 * calling its recording copy, and the copies (`f$replay`, its inverse the replay) added, with
 * their inverses; `effectful`: the functions with a host effect.
 */
export function replayUncalls(
  program: Program,
  inverses: Map<string, FunctionDef>,
  effectful: ReadonlySet<string>,
): { program: Program; inverses: Map<string, FunctionDef> } {
  const plans = new Map<string, number | undefined>()
  const plan = (name: string): number | undefined => {
    if (!plans.has(name)) {
      const f = program.functions.get(name)
      const inv = inverses.get(name)
      const w = program.writes.get(name)
      plans.set(name, f && inv && w && !effectful.has(name) ? replayable(f, inv, w) : undefined)
    }
    return plans.get(name)
  }
  const used = new Set<string>()
  const block = (body: Stmt[]): Stmt[] => {
    const out = body.map((s): Stmt => {
      switch (s.kind) {
        // (not inside `@unchecked`: the argument rests on the call's checks)
        case 'for':
        case 'while':
          return { ...s, body: block(s.body) } as Stmt
        case 'if':
          return { ...s, then: block(s.then), else: block(s.else) }
        default:
          return s
      }
    })
    for (let p = 0; p < out.length; p++) {
      const call = out[p]!
      if (call.kind !== 'callstmt' || call.inverse || call.target !== 'function' || call.callee.endsWith(REPLAY_SUFFIX))
        continue
      const k = plan(call.callee)
      if (k === undefined) continue
      const a = call.args[k]!
      if (a.kind !== 'var' || call.args.some((x) => callsHost(x))) continue
      // what the call reads, `a` aside, must not change before the uncall
      const kept = argNames(call.args)
      kept.delete(a.name)
      for (let q = p + 1; q < out.length; q++) {
        const s = out[q]!
        // pairs nest: an earlier pair's uncall here (its call is before this call) would cross this
        // pair, its replay popping this call's terms (those of the calls and uncalls inside other
        // blocks and functions balance within them)
        if (s.kind === 'callstmt' && s.target === 'function' && s.callee.endsWith(REPLAY_SUFFIX)) break
        if (
          s.kind === 'callstmt' &&
          s.inverse &&
          s.target === 'function' &&
          s.callee === call.callee &&
          sameArgs(s.args, call.args)
        ) {
          out[p] = { ...call, callee: call.callee + REPLAY_SUFFIX }
          out[q] = { ...s, callee: call.callee + REPLAY_SUFFIX }
          used.add(call.callee)
          break
        }
        const w = writtenNames([s], effectful, program.writes)
        if (w === undefined || [...w].some((n) => kept.has(n))) break
      }
    }
    return out
  }
  const functions = new Map([...program.functions].map(([n, d]) => [n, { ...d, body: block(d.body) }]))
  const inverted = new Map([...inverses].map(([n, d]) => [n, { ...d, body: block(d.body) }]))
  if (!used.size) return { program, inverses }
  const writes = new Map(program.writes)
  for (const name of used) {
    const k = plans.get(name)!
    const f = program.functions.get(name)!
    const a = f.params[k]!.name
    functions.set(name + REPLAY_SUFFIX, recording(f, a))
    inverted.set(name + REPLAY_SUFFIX, replaying(inverses.get(name)!, a))
    writes.set(name + REPLAY_SUFFIX, program.writes.get(name)!)
  }
  return { program: { ...program, functions, writes }, inverses: inverted }
}
