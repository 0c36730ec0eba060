/**
 * Pass `hoist-calls` (loop-invariant code motion of expensive pure calls, the values a
 * bijection's lowering computes included): a statement of a `for` loop's body that applies an
 * expensive pure primitive to a value the loop never writes computes the same value on every
 * iteration. It is computed once, into a scalar ancilla, before the loop; an expression reads the
 * ancilla instead, and a bijection call is marked with it (`CallStmt.tabulated`), so that its
 * lowering reads it instead of computing it (ROT(a, b, θ) computes cos θ and sin θ):
 *
 *     for l in 0..n { ROT(x[i + m * l], x[i + 1 + m * l], theta[k]) }
 * becomes
 *     l$hc0: f64 <- 0.0
 *     l$hc1: f64 <- 0.0
 *     if (0 < n, ~) { l$hc0 += cos(theta[k]); l$hc1 += sin(theta[k]) }
 *     for l in 0..n { ROT(x[i + m * l], x[i + 1 + m * l], theta[k]) }   (cos θ, sin θ: l$hc0, l$hc1)
 *     @unchecked { if (0 < n, ~) { l$hc1 -= sin(theta[k]); l$hc0 -= cos(theta[k]) }; l$hc1 -> 0.0; l$hc0 -> 0.0 }
 *
 * It complements `hoist-invariants`, which moves invariant expressions but takes every dataview
 * argument of a call as written: here a bijection's `in` arguments are read only (see
 * `writtenBy`), so ROT's angle is invariant where the loop does not write it, and the values a
 * lowering computes move too. Only the primitives worth a table move (`worthTabulating`: one
 * f64 argument, more than one native instruction), only from statements of the body itself
 * (evaluated on every iteration), and the computation is guarded by "the loop runs at least once"
 * (the argument may read an element), so it is evaluated exactly where the program evaluated it.
 * Equal calls (the same printed expression) share one ancilla.
 *
 * Exact: an ancilla holds `0 + f(a)`, which is `f(a)` to the last bit, and `a` keeps its value
 * while the loop runs. The uncompute sits in `@unchecked` (`f − f` is NaN for an infinite `f`),
 * and `dead-ancillas` drops it. Loops are processed innermost first, so a value invariant in two
 * nested loops climbs out of both (the inner loop's computation is then itself an expression of
 * the outer loop's body).
 *
 * With run-time checks on (`checks`), the pass runs too, and leaves the uncompute out (it would
 * evaluate every hoisted call a second time, and `dead-ancillas` does not run with checks): the
 * ancillas are the pass's own, deallocated in `@unchecked`, so no check ever looked at them. Every
 * check of the program stays where it was: the statements of the loop are the same statements
 * (only where their lowering reads cos θ changes), and `insert-checks`, which runs after, gives the
 * hoisted computation the bounds checks of the elements it reads (`theta[k]`), under the same
 * guard. What changes for a failing program: such a check now fires before the loop's first
 * iteration, not during it, so where that iteration's statements would have failed an earlier
 * check of their own (an index of another array out of range), the hoisted one is raised instead
 * — the order in which two independent failing checks are reached, nothing else.
 */
import type { Arg, CallExpr, Expr, ForStmt, FunctionDef, Stmt, TabulatedValue, VarRef } from '../ast.js'
import { walk } from '../check.js'
import { printExpr } from '../printer.js'
import type { Registry } from '../registry.js'
import { valueReads } from '../stmt-exprs.js'
import { rewriteExpr } from './rewrite.js'
import { loweredPureCalls, worthTabulating, writtenBy } from './tabulate.js'
import { callsRuntime } from './insert-checks.js'

/** What the pass knows of the program around a function. */
interface Context {
  registry: Registry
  checks: boolean
  effectful: ReadonlySet<string>
  writes?: ReadonlyMap<string, boolean[]>
  names: { next: number; taken: Set<string> }
}

const intLiteral = (e: Expr | null): number | undefined =>
  e === null ? 1 : e.kind === 'num' && Number.isInteger(e.value) ? e.value : undefined

/** "The loop runs at least once" over its range: `true` for a literal range that does, undefined where unknown. */
function nonEmpty(s: ForStmt): Expr | true | undefined {
  const step = intLiteral(s.step)
  if (step === undefined || step === 0) return undefined
  const a = intLiteral(s.start),
    b = intLiteral(s.stop)
  if (a !== undefined && b !== undefined && s.start.kind === 'num' && s.stop.kind === 'num') {
    const ok = step > 0 ? (s.inclusive ? a <= b : a < b) : s.inclusive ? a >= b : a > b
    return ok ? true : undefined
  }
  const op = step > 0 ? (s.inclusive ? '<=' : '<') : s.inclusive ? '>=' : '>'
  return { kind: 'binary', op, left: s.start, right: s.stop, type: 'bool', ...(s.loc ? { loc: s.loc } : {}) }
}

/** The loop with its invariant expensive calls computed before it: the statements to put in its place. */
function hoistLoop(s: ForStmt, ctx: Context): Stmt[] {
  const { registry } = ctx
  const written = writtenBy(s.body, registry, ctx.effectful, ctx.writes)
  const guard = nonEmpty(s)
  if (!written || guard === undefined) return [s]
  // the guard is evaluated again after the loop (for the uncompute): the loop must not change it
  for (const e of [s.start, s.stop]) for (const n of valueReads(e)) if (written.has(n)) return [s]
  written.add(s.variable)
  // names bound inside the body are not values from before the loop
  walk(s.body, (x) => {
    if (x.kind === 'alloc') written.add(x.name)
    if (x.kind === 'for') written.add(x.variable)
  })
  const found = new Map<string, { name: string; value: CallExpr }>()
  const loc = s.loc ? { loc: s.loc } : {}
  const hoisted = (callee: string, arg: Expr | Arg): VarRef | undefined => {
    if (arg.kind === 'neg' || arg.type !== 'f64' || !worthTabulating(registry, callee) || callsRuntime(arg))
      return undefined
    for (const n of valueReads(arg)) if (written.has(n)) return undefined
    const value: CallExpr = { kind: 'call', callee, args: [arg as Expr], type: 'f64', ...loc }
    const key = printExpr(value)
    let h = found.get(key)
    if (!h) {
      let name: string
      do name = `${s.variable}$hc${ctx.names.next++}`
      while (ctx.names.taken.has(name))
      ctx.names.taken.add(name)
      h = { name, value }
      found.set(key, h)
    }
    return { kind: 'var', name: h.name, type: 'f64', ...loc }
  }
  const expr = (e: Expr): Expr =>
    rewriteExpr(e, (x) =>
      x.kind === 'call' && x.args.length === 1 && x.type === 'f64' ? (hoisted(x.callee, x.args[0]!) ?? x) : x,
    ) as Expr
  const body = s.body.map((x): Stmt => {
    switch (x.kind) {
      case 'update':
        return { ...x, value: expr(x.value) }
      case 'callstmt': {
        if (x.target !== 'bijection') return x
        let spec = registry.bijection(x.callee)
        if (x.inverse && spec.inverse !== 'self') spec = registry.bijection(spec.inverse)
        const tabulated: TabulatedValue[] = [...(x.tabulated ?? [])]
        for (const c of loweredPureCalls(registry, spec)) {
          if (spec.roles[c.arg] === 'inout' || tabulated.some((t) => t.callee === c.callee && t.arg === c.arg)) continue
          const a = x.args[c.arg]
          const v = a && hoisted(c.callee, a)
          if (v) tabulated.push({ callee: c.callee, arg: c.arg, read: v })
        }
        return tabulated.length ? { ...x, tabulated } : x
      }
      default:
        return x
    }
  })
  if (!found.size) return [s]
  const before: Stmt[] = [],
    compute: Stmt[] = [],
    uncompute: Stmt[] = [],
    after: Stmt[] = []
  const type = { kind: 'scalar' as const, name: 'f64' }
  const zero: Expr = { kind: 'num', value: 0, isFloat: true, type: 'f64' }
  for (const h of found.values()) {
    const v: VarRef = { kind: 'var', name: h.name, type: 'f64', ...loc }
    before.push({ kind: 'alloc', name: h.name, value: zero, type, declared: type, ...loc })
    compute.push({ kind: 'update', op: '+=', target: v, value: h.value, ...loc })
    uncompute.unshift({ kind: 'update', op: '-=', target: v, value: h.value, ...loc })
    after.unshift({ kind: 'dealloc', name: h.name, value: zero, type, declared: type, ...loc })
  }
  const guarded = (b: Stmt[]): Stmt[] =>
    guard === true ? b : [{ kind: 'if', pre: guard, post: null, then: b, else: [], ...loc }]
  return [
    ...before,
    ...guarded(compute),
    { ...s, body },
    { kind: 'unchecked', body: [...(ctx.checks ? [] : guarded(uncompute)), ...after], ...loc },
  ]
}

function hoistBlock(body: Stmt[], ctx: Context): Stmt[] {
  return body.flatMap((s): Stmt[] => {
    switch (s.kind) {
      case 'if':
        // (an alias guard's fallback, \`asWritten\`, stays the program as written)
        return [{ ...s, then: hoistBlock(s.then, ctx), else: s.asWritten ? s.else : hoistBlock(s.else, ctx) }]
      case 'while':
      case 'unchecked':
        return [{ ...s, body: hoistBlock(s.body, ctx) } as Stmt]
      case 'for':
        return hoistLoop({ ...s, body: hoistBlock(s.body, ctx) }, ctx)
      default:
        return [s]
    }
  })
}

/**
 * The function with the expensive pure calls of loop-invariant values in its loops' bodies
 * computed once before each loop (see the module comment). `effectful`: the functions with a
 * host effect (a loop that calls one is left alone); `writes`: which parameters each function
 * writes (the program's `writes`); `checks`: the program is compiled with run-time checks (the
 * uncompute is left out, see the module comment).
 */
export function hoistCalls(
  f: FunctionDef,
  registry: Registry,
  effectful: ReadonlySet<string> = new Set(),
  writes?: ReadonlyMap<string, boolean[]>,
  checks = false,
): FunctionDef {
  const taken = new Set<string>(f.params.map((p) => p.name))
  walk(f.body, (s) => {
    if (s.kind === 'alloc') taken.add(s.name)
    if (s.kind === 'for') taken.add(s.variable)
  })
  return { ...f, body: hoistBlock(f.body, { registry, checks, effectful, writes, names: { next: 0, taken } }) }
}
