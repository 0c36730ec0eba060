/**
 * Step `hoist-lane-calls` of pass `pair-series` (cpu backend, checks on and off): a map loop of
 * series `for i in a..b { g(out[i], nu, z[i]) }` whose callee `g` computes an exact integer
 * quantity from loop-invariant values — paper 001's Bessel function computes ν! with
 * `ifactorial(fact_nu, nu)` once per element — computes it once per execution of the grouped
 * loop instead, before it, and each lane adds the result:
 *
 *     fact_nu: i32 <- 0; …; ifactorial(fact_nu, nu); …        (g's body, in every lane)
 * becomes
 *     if (first ≤ last − (lanes − 1), ~) {                    (the grouped loop runs)
 *       $pairNinv0$: i32 <- 0; ifactorial($pairNinv0$, nu)
 *       for i in … { …; fact_nu += $pairNinv0$; … }          (each lane)
 *       $pairNinv0$ -= $pairNinv0$; $pairNinv0$ -> 0
 *     }
 *
 * Why it is exact: `f` is an exact function (`exactFunctions`: integer bijections only, no host
 * effect, no `@unchecked`), so it is a deterministic function of what it reads; every argument it
 * writes is a zero integer ancilla of `g` (allocated as 0 at the top level of its body, nothing
 * writing it before the call), and every argument it reads is a literal or a parameter of `g` that
 * `g` never writes, bound by the map loop's call to a literal or a scalar variable that the loop
 * does not write (its body, one call, writes only array elements). So every lane's call starts from
 * the same state and leaves the same values, the hoisted call's: `y = 0 + h` is them bit for bit,
 * and what follows in the lane computes what it computed.
 *
 * Run-time checks (`checked`: the pass runs on the placed asserts): `f`'s checks run once, in the
 * hoisted call, only where the grouped loop runs at least once, and they fail there exactly where
 * the first lane's call would have failed (the same statement of `f`, the same values). What the
 * first lane ran before its call is statements that can neither fail nor loop (scalar updates,
 * allocations and literal-range loops of arithmetic on names and literals, `cannotFailOrLoop`: no
 * assert, array element, `while`, call, `if` or data-dependent loop step, at any depth; else the
 * step does not apply), so no check that fired before the
 * call's is skipped, and the call's failure still comes first. A later lane's checks all ran after
 * the first lane's call. The uncall of `f` that a lane may still make (`~f(y, nu)`, or `y -= y`
 * where `exact-uncompute` rewrote it) is left as it is: it restores `y` to 0 either way.
 */
import type { Arg, CallStmt, Expr, ForStmt, FunctionDef, Stmt, UpdateStmt } from '../ast.js'
import type { Program } from '../plugin.js'
import { exactFunctions } from './exact-uncompute.js'
import { writtenNames } from './hoist-invariants.js'

/** `body` without its asserts, at any depth (what `exactFunctions` decides on: an assert writes nothing). */
function withoutAsserts(body: Stmt[]): Stmt[] {
  return body
    .filter((s) => s.kind !== 'assert')
    .map((s): Stmt => {
      switch (s.kind) {
        case 'if':
          return { ...s, then: withoutAsserts(s.then), else: withoutAsserts(s.else) }
        case 'for':
        case 'while':
        case 'unchecked':
          return { ...s, body: withoutAsserts(s.body) } as Stmt
        default:
          return s
      }
    })
}

/**
 * The exact functions of `program` (see `exactFunctions`), decided on their bodies without the
 * asserts that `insertChecks` placed (each assert only reads).
 */
export function exactLaneFunctions(program: Program): Set<string> {
  return exactFunctions([...program.functions.values()].map((f) => ({ ...f, body: withoutAsserts(f.body) })))
}

const EXACT_TYPES: ReadonlySet<string> = new Set(['i32', 'bool'])
const PLAIN_TYPES: ReadonlySet<string> = new Set(['f64', 'f32', 'i32', 'bool'])

const scalarTypeName = (t: unknown): string | undefined =>
  typeof t === 'string'
    ? t
    : (t as { kind?: string; name?: string } | undefined)?.kind === 'scalar'
      ? (t as { name: string }).name
      : undefined

/**
 * Whether an expression's evaluation has no failure site in the emitted code: literals, names of
 * plain scalars (f64, f32, i32, bool: no number system's checked arithmetic) and arithmetic on
 * them (no array element, whose bounds are checked; no call, which may convert or check; no `%`).
 */
function cannotFailExpr(e: Expr): boolean {
  switch (e.kind) {
    case 'num':
    case 'bool':
      return true
    case 'var':
      return PLAIN_TYPES.has(scalarTypeName(e.type) ?? '')
    case 'unary':
      return cannotFailExpr(e.arg)
    case 'binary':
      return e.op !== '%' && cannotFailExpr(e.left) && cannotFailExpr(e.right)
    default:
      return false
  }
}

/**
 * Whether running `stmts` can neither fail nor loop forever: only scalar updates, allocations and
 * deallocations of values that cannot fail (`cannotFailExpr`), `for` loops with literal bounds
 * and a literal nonzero step over such statements, and `@unchecked` blocks of them. Anything else may fail where the emitted code
 * checks it (an assert, an array element's bounds, a loop's zero step, an `if`'s post-condition, a
 * call) or not end (`while`), so the step does not hoist past it.
 */
function cannotFailOrLoop(stmts: Stmt[]): boolean {
  return stmts.every((s) => {
    switch (s.kind) {
      case 'update':
        // (`*=` and `/=` check for a zero factor)
        return (
          (s.op === '+=' || s.op === '-=' || s.op === '^=') &&
          s.target.kind === 'var' &&
          cannotFailExpr(s.target) &&
          cannotFailExpr(s.value)
        )
      case 'alloc':
      case 'dealloc':
        return (
          s.value.kind !== 'emptystack' &&
          cannotFailExpr({ kind: 'var', name: s.name, type: s.type }) &&
          cannotFailExpr(s.value)
        )
      case 'for': {
        const literal = (e: Expr | null): boolean => e === null || e.kind === 'num'
        const step = s.step === null || (s.step.kind === 'num' && s.step.value !== 0)
        return !s.each && literal(s.start) && literal(s.stop) && step && cannotFailOrLoop(s.body)
      }
      case 'unchecked':
        return cannotFailOrLoop(s.body)
      default:
        return false
    }
  })
}

/** What the step produces for one map loop: `g`'s body to inline per lane, and the hoisted statements. */
export interface HoistedLaneCalls {
  /** `g`'s body with each hoisted call replaced by its written ancillas' `y += h` */
  body: Stmt[]
  /** before the grouped loop: the ancillas `h` and the calls */
  before: Stmt[]
  /** after the grouped loop: the ancillas taken back to 0 and deallocated */
  after: Stmt[]
}

/**
 * The calls of `g`'s body (top level) that the map loop `M` (whose body is `call`, a call of `g`)
 * may run once before its grouped loop (see the module comment), or undefined where there is none.
 * `prefix` names the hoisted ancillas; `exact`: the exact functions (`exactLaneFunctions`).
 */
export function hoistLaneCalls(
  g: FunctionDef,
  call: CallStmt,
  M: ForStmt,
  program: Program,
  exact: ReadonlySet<string>,
  effectful: ReadonlySet<string>,
  prefix: string,
): HoistedLaneCalls | undefined {
  const gWrites = program.writes.get(g.name)
  if (!gWrites || call.inverse || g.params.length !== call.args.length) return undefined
  // g's read-only parameters that the loop's call binds to a literal or a scalar variable other than its own
  const invariant = new Map<string, Arg>()
  g.params.forEach((p, i) => {
    const a = call.args[i]!
    if (gWrites[i] || p.type.kind !== 'scalar') return
    if (a.kind === 'num' || a.kind === 'bool') invariant.set(p.name, a)
    else if (a.kind === 'var' && a.name !== M.variable && scalarTypeName(a.type) !== undefined) invariant.set(p.name, a)
  })
  const body = [...g.body]
  const before: Stmt[] = []
  const after: Stmt[] = []
  let n = 0
  for (let k = 0; k < body.length; k++) {
    const s = body[k]!
    if (s.kind !== 'callstmt' || s.target !== 'function' || s.inverse || !exact.has(s.callee)) continue
    const w = program.writes.get(s.callee)
    if (!w || w.length !== s.args.length) continue
    // what the first lane runs before the call can neither fail nor loop
    if (!cannotFailOrLoop(body.slice(0, k))) break
    const targets: Array<Extract<Arg, { kind: 'var' }>> = []
    const args: Arg[] = []
    let ok = true
    s.args.forEach((a, i) => {
      if (!ok) return
      if (w[i]) {
        // a zero integer ancilla of g's top level, nothing writing it before the call
        if (a.kind !== 'var' || !EXACT_TYPES.has(scalarTypeName(a.type) ?? '')) return void (ok = false)
        let j = k - 1
        while (j >= 0) {
          const written = writtenNames([body[j]!], effectful, program.writes)
          if (written === undefined || written.has(a.name)) break
          j--
        }
        const alloc = body[j]
        const v = alloc?.kind === 'alloc' ? alloc.value : undefined
        const zero = (v?.kind === 'num' && v.value === 0) || (v?.kind === 'bool' && v.value === false)
        if (alloc?.kind !== 'alloc' || alloc.name !== a.name || !zero) return void (ok = false)
        targets.push(a)
        args.push({ kind: 'var', name: `${prefix}${n + targets.length - 1}$`, type: scalarTypeName(a.type)! })
      } else if (a.kind === 'num' || a.kind === 'bool') args.push({ ...a })
      else if (a.kind === 'var' && invariant.has(a.name)) args.push({ ...(invariant.get(a.name) as Expr) })
      else ok = false
    })
    if (!ok || !targets.length || new Set(targets.map((t) => t.name)).size !== targets.length) continue
    const loc = s.loc ? { loc: s.loc } : {}
    const hs = targets.map((t, j) => ({ name: `${prefix}${n + j}$`, type: scalarTypeName(t.type)! }))
    n += targets.length
    for (const h of hs) {
      const type = { kind: 'scalar' as const, name: h.type as 'i32' }
      const zero: Expr =
        h.type === 'bool' ? { kind: 'bool', value: false } : { kind: 'num', value: 0, isFloat: false, type: 'i32' }
      before.push({ kind: 'alloc', name: h.name, value: zero, type, declared: type, ...loc })
    }
    before.push({ ...s, args })
    for (const h of hs) {
      const type = { kind: 'scalar' as const, name: h.type as 'i32' }
      const v = { kind: 'var' as const, name: h.name, type: h.type as 'i32' }
      const zero: Expr =
        h.type === 'bool' ? { kind: 'bool', value: false } : { kind: 'num', value: 0, isFloat: false, type: 'i32' }
      after.push({ kind: 'update', op: h.type === 'bool' ? '^=' : '-=', target: v, value: { ...v }, ...loc })
      after.push({ kind: 'dealloc', name: h.name, value: zero, type, declared: type, ...loc })
    }
    const adds: UpdateStmt[] = targets.map((t, j) => ({
      kind: 'update',
      op: hs[j]!.type === 'bool' ? '^=' : '+=',
      target: { ...t },
      value: { kind: 'var', name: hs[j]!.name, type: hs[j]!.type as 'i32' },
      ...loc,
    }))
    body.splice(k, 1, ...adds)
    k += adds.length - 1
  }
  return n ? { body, before, after } : undefined
}
