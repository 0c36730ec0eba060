/**
 * Pass `tabulate` (memoisation of a pure primitive over an array): a loop that applies an
 * expensive pure primitive to elements of an array it never writes, from inside a nested loop,
 * with indices that run through the same values in every iteration, computes the same values
 * again in every iteration. They are computed once instead, into a table, before the loop:
 *
 *     for l in 0..n { k <- 0; for j in 0..m { y[j + m * l] += x[j] * cos(theta[k]); INC(k) }; k -> m }
 * becomes
 *     if (1 < n, ~) {
 *       l$tab0: f64[] <- zeros(len(theta))
 *       for l$tj0 in 0..len(theta) { l$tab0[l$tj0] += cos(theta[l$tj0]) }
 *       for l in 0..n { k <- 0; for j in 0..m { y[j + m * l] += x[j] * l$tab0[k]; INC(k) }; k -> m }
 *       @unchecked { for l$tj0 in 0..len(theta) { l$tab0[l$tj0] -= cos(theta[l$tj0]) }; l$tab0 -> zeros(len(theta)) }
 *     } else {
 *       for l in 0..n { … as it was … }
 *     }
 *
 * The values a bijection's lowering computes count too (ROT(a, b, θ) computes cos θ and sin θ):
 * the call keeps its arguments and is marked with the table elements that hold those values
 * (`CallStmt.tabulated`), which the backends read instead of computing them.
 *
 * Exact: a table element is `0 + f(A[j])`, which is `f(A[j])` to the last bit, and `A` keeps its
 * elements while the loop runs (the loop does not name it as written, see `writtenBy`: a call's
 * dataview arguments count, a bijection's `in` arguments and a function's unwritten parameters do
 * not; distinct names are distinct memory where the tables are built: they are built only where `A`,
 * if a parameter, is apart from every array parameter the loop writes, tested with the cost guard,
 * see \`apart.ts\`), so `T[e]` is `f(A[e])` for every index `e`, in range or not (the
 * table has A's length). The table is built from every element of `A`, each in range, with a
 * primitive that cannot fail. The uncompute sits in `@unchecked` (an infinite or NaN element makes
 * `f − f` NaN), and `dead-ancillas` drops it. The pass runs with run-time checks on too: a table
 * read keeps the bounds check of the element it replaces (`IndexExpr.checkedAs`: the same index
 * against the array's length, the array's name in the message; a marked bijection call keeps its
 * arguments, checked as before), and nothing else it adds can fail (the guard's `if` re-evaluates
 * names the loop does not write: a range the loop writes is not counted, and the loop's own range
 * fails its `loopRange` check first).
 *
 * When it pays: the table costs len(A) evaluations per execution of the loop; the loop without it
 * makes (trip count) × (evaluations per iteration). The pass tabulates only where each iteration
 * reads the same elements — the index reads nothing that carries a value from one iteration to the
 * next (see `iterationVariant`) — and reads them from a nested loop, and the tables are built only
 * when the loop runs at least twice and makes more evaluations than the tables cost (otherwise the
 * loop runs as it was: the `else` branch). The count of evaluations is a lower bound computed
 * before the loop from the ranges of its nested loops (see `tabulate-cost.ts`; the example's
 * guard is shown as `1 < n` above, it is `1 < n && (count) > f64(len(theta))`); a table whose
 * evaluations cannot be counted (in a branch, under a range the loop writes) is not built. A
 * large array of which each iteration reads a few elements is then left alone. Expensive
 * primitives only: arity 1, f64, not lowered to a single native instruction (`worthTabulating`).
 */
import type { Arg, CallExpr, Expr, ForStmt, FunctionDef, IndexExpr, Stmt, TabulatedValue, VarRef } from '../ast.js'
import type { SourceLocation } from '../loc.js'
import { rootName, walk } from '../check.js'
import { valueReads } from '../stmt-exprs.js'
import type { BijectionSpec } from '../plugin.js'
import type { Registry } from '../registry.js'
import { writtenNames } from './hoist-invariants.js'
import { rewriteBlock, rewriteExpr } from './rewrite.js'
import { evaluationCount } from './tabulate-cost.js'
import { key } from '../cse.js'
import { callsRuntime } from './insert-checks.js'
import { apartPairs, type KnownApart, knownApart, withApart, withKnown } from './apart.js'

/**
 * Whether a pure primitive is worth a table: one argument, and a lowering that is more than one
 * native float instruction (`sqrt`, `abs` are not worth a load; `cos`, `exp`, a user's JS are).
 */
export function worthTabulating(registry: Registry, name: string): boolean {
  if (name.startsWith('$')) return false
  const p = registry.findPrimitive(name)
  if (p?.kind !== 'pure' || p.arity !== 1 || p.argKinds?.some((k) => k !== 'scalar')) return false
  return typeof p.emit?.wasm !== 'string'
}

/**
 * The pure unary primitives a bijection's lowering applies to its arguments: each `Math.f(arg)`
 * of its cpu lowering that is exactly what the registered primitive `f` emits for it (ROT's
 * `Math.cos(θ)` is `cos(θ)` of its third argument). The backends share these values with the
 * statements around the call (see `LoweredValues`) and read them from a table (`tabulated`).
 */
export function loweredPureCalls(registry: Registry, spec: BijectionSpec): Array<{ callee: string; arg: number }> {
  const emit = spec.emit?.cpu
  if (!emit) return []
  const slots = spec.roles.map((_, i) => `__arg${i}__`)
  const out: Array<{ callee: string; arg: number }> = []
  const seen = new Set<string>()
  for (const m of emit(...slots)
    .join('\n')
    .matchAll(/\bMath\.([a-z][a-z0-9]*)\(__arg(\d+)__\)/g)) {
    const arg = Number(m[2])
    const prim = registry.findPrimitive(m[1]!)
    if (seen.has(m[0]) || prim?.kind !== 'pure' || prim.arity !== 1) continue
    if (prim.emit?.cpu?.(slots[arg]!) !== m[0]) continue
    seen.add(m[0])
    out.push({ callee: prim.name, arg })
  }
  return out
}

/**
 * The table keys of the evaluations in a statement's own expressions (not its nested blocks), one
 * per evaluation, in the order met. `qualifies(callee, arg, type)` is the key of `callee(arg)` when
 * a table could hold it. A bijection call counts the pure calls its lowering makes, but not those
 * another pass already gave it (`tabulated`: read, not evaluated). With `checks` false, the values
 * only run-time checks evaluate (a deallocation's value, an \`if\`'s or \`while\`'s assertion) do
 * not count: the count is then a lower bound with checks off.
 */
export function evaluatedKeys(
  registry: Registry,
  x: Stmt,
  qualifies: (callee: string, arg: Arg | Expr, type: string | undefined) => string | undefined,
  { checks }: { checks: boolean },
): string[] {
  const keys: string[] = []
  const of = (e: Expr | Arg | null | undefined): void => {
    if (!e) return
    rewriteExpr(e, (y) => {
      if (y.kind === 'call' && y.args.length === 1) {
        const k = qualifies(y.callee, y.args[0]!, y.type)
        if (k) keys.push(k)
      }
      return y
    })
  }
  switch (x.kind) {
    case 'update':
      of(x.target)
      of(x.value)
      break
    case 'alloc':
      if (x.value.kind !== 'emptystack') of(x.value)
      break
    case 'dealloc':
      if (checks && x.value.kind !== 'emptystack') of(x.value)
      break
    case 'callstmt':
      for (const a of x.args) of(a)
      if (x.target === 'bijection')
        for (const c of loweredPureCalls(registry, bijectionOf(registry, x))) {
          if (x.tabulated?.some((t) => t.callee === c.callee && t.arg === c.arg)) continue
          const a = x.args[c.arg]
          const k = a && qualifies(c.callee, a, 'f64')
          if (k) keys.push(k)
        }
      break
    case 'for':
      of(x.start)
      of(x.stop)
      of(x.step)
      break
    case 'if':
    case 'while':
      of(x.pre)
      if (checks) of(x.post)
      break
    case 'safe':
      of(x.expr)
      break
    case 'push':
    case 'pop':
      of(x.value)
      break
    default:
      break
  }
  return keys
}

/** The bijection a call statement runs (its inverse for an uncall). */
export function bijectionOf(registry: Registry, s: Extract<Stmt, { kind: 'callstmt' }>): BijectionSpec {
  let spec = registry.bijection(s.callee)
  if (s.inverse && spec.inverse !== 'self') spec = registry.bijection(spec.inverse)
  return spec
}

const isDataview = (a: Arg): boolean => a.kind === 'var' || a.kind === 'index' || a.kind === 'field' || a.kind === 'neg'

/**
 * The names a block may write (see `writtenNames`), or undefined where it may have host effects;
 * a bijection call writes its `inout` arguments only (ROT(a, b, θ) reads θ).
 */
export function writtenBy(
  body: Stmt[],
  registry: Registry,
  effectful: ReadonlySet<string> = new Set(),
  writes?: ReadonlyMap<string, boolean[]>,
): Set<string> | undefined {
  const strip = (b: Stmt[]): Stmt[] =>
    b.map((s): Stmt => (s.kind === 'callstmt' ? { ...s, args: writtenArgs(s, registry, writes) } : nested(s, strip)))
  return writtenNames(strip(body), effectful)
}

/** `s` with `f` applied to its nested blocks. */
function nested(s: Stmt, f: (b: Stmt[]) => Stmt[]): Stmt {
  switch (s.kind) {
    case 'if':
      return { ...s, then: f(s.then), else: f(s.else) }
    case 'for':
    case 'while':
    case 'unchecked':
    case 'routine':
    case 'invblock':
      return { ...s, body: f(s.body) } as Stmt
    default:
      return s
  }
}

/**
 * The arguments a call may write: a bijection its `inout` ones (ROT(a, b, θ) does not write θ),
 * a function the dataviews at the parameters it writes (`writes`, when known).
 */
function writtenArgs(
  s: Extract<Stmt, { kind: 'callstmt' }>,
  registry: Registry,
  writes?: ReadonlyMap<string, boolean[]>,
): Arg[] {
  const roles = s.target === 'bijection' ? bijectionOf(registry, s).roles : undefined
  const w = s.target === 'function' ? writes?.get(s.callee) : undefined
  return s.args.filter((a, i) => isDataview(a) && roles?.[i] !== 'in' && (!w || w[i]))
}

/**
 * The names whose values may differ from one iteration of `loop` to the next (at the same point
 * of the iteration), given the names the loop writes (see `writtenBy`). The loop variable and
 * every name the loop writes that lives on from one iteration to the next are; a name bound
 * inside the body (an ancilla, an inner loop's variable) is when a write to it reads one that
 * is, or happens under a condition (an `if`, a `while`, an inner loop's range) that reads one.
 */
export function iterationVariant(
  loop: ForStmt,
  written: ReadonlySet<string>,
  registry: Registry,
  writes?: ReadonlyMap<string, boolean[]>,
): Set<string> {
  const bound = new Set<string>()
  walk(loop.body, (s) => {
    if (s.kind === 'alloc') bound.add(s.name)
    if (s.kind === 'for') bound.add(s.variable)
  })
  const variant = new Set<string>([...written].filter((n) => !bound.has(n)))
  variant.add(loop.variable)
  let changed = true
  const taint = (n: string | undefined): void => {
    if (n !== undefined && !variant.has(n)) {
      variant.add(n)
      changed = true
    }
  }
  const reads = (e: Expr | Arg | null | undefined): boolean => {
    if (!e) return false
    for (const n of valueReads(e)) if (variant.has(n)) return true
    return false
  }
  const visit = (body: Stmt[], under: boolean): void => {
    for (const s of body) {
      switch (s.kind) {
        case 'update':
          if (under || reads(s.value) || reads(s.target)) taint(rootName(s.target))
          break
        case 'alloc':
          if (under || (s.value.kind !== 'emptystack' && reads(s.value))) taint(s.name)
          break
        case 'callstmt':
          if (under || s.args.some((a) => reads(a)))
            for (const a of writtenArgs(s, registry, writes)) taint(rootName(a))
          break
        case 'push':
        case 'pop':
          taint(s.stack.name)
          taint(rootName(s.value))
          break
        case 'for': {
          const u = under || reads(s.start) || reads(s.stop) || reads(s.step)
          if (u) taint(s.variable)
          visit(s.body, u)
          break
        }
        case 'if': {
          const u = under || reads(s.pre) || reads(s.post)
          visit(s.then, u)
          visit(s.else, u)
          break
        }
        case 'while':
          visit(s.body, under || reads(s.pre) || reads(s.post))
          break
        case 'unchecked':
        case 'routine':
        case 'invblock':
          visit(s.body, under)
          break
        default:
          break
      }
    }
  }
  while (changed) {
    changed = false
    visit(loop.body, false)
  }
  return variant
}

/** One table: the primitive, the array it is applied to, and the table's name. */
interface Table extends TableSpec {
  /** Used from inside a nested loop of the loop (where it pays). */
  nested: boolean
}

/** The state of the pass over one function: fresh names. */
interface Names {
  next: number
  taken: Set<string>
}

function fresh(names: Names, base: string): string {
  let n: string
  do n = `${base}${names.next++}`
  while (names.taken.has(n))
  names.taken.add(n)
  return n
}

const intLiteral = (e: Expr | null): number | undefined =>
  e === null ? 1 : e.kind === 'num' && Number.isInteger(e.value) ? e.value : undefined

/** "The loop runs at least twice", over its range (undefined when the step is not an integer literal). */
function twice(s: ForStmt): Expr | undefined {
  const step = intLiteral(s.step)
  if (step === undefined || step === 0 || s.start.type !== 'i32' || s.stop.type !== 'i32') return undefined
  const loc = s.loc ? { loc: s.loc } : {}
  const start = intLiteral(s.start)
  const second: Expr =
    start !== undefined && Number.isSafeInteger(start + step) && Math.abs(start + step) < 2 ** 31
      ? { kind: 'num', value: start + step, isFloat: false, type: 'i32', ...loc }
      : {
          kind: 'binary',
          op: '+',
          left: s.start,
          right: { kind: 'num', value: step, isFloat: false, type: 'i32' },
          type: 'i32',
          ...loc,
        }
  const op = step > 0 ? (s.inclusive ? '<=' : '<') : s.inclusive ? '>=' : '>'
  return { kind: 'binary', op, left: second, right: s.stop, type: 'bool', ...loc }
}

/** The loop with its tables, or undefined when nothing in it is worth one. */
function tabulateLoop(s: ForStmt, ctx: Context, names: Names): Stmt | undefined {
  const { registry, effectful, writes } = ctx
  const guard = twice(s)
  if (!guard) return undefined
  const written = writtenBy(s.body, registry, effectful, writes)
  if (!written) return undefined
  written.add(s.variable)
  const variant = iterationVariant(s, written, registry, writes)
  const tables = new Map<string, Table>()
  /** The table key of `f(A[e])` when it qualifies. */
  const qualifies = (callee: string, arg: Arg | Expr, type: string | undefined): string | undefined => {
    if (type !== 'f64' || arg.kind !== 'index' || arg.type !== 'f64') return undefined
    const a = arg.array
    if (typeof a.type !== 'object' || a.type.kind !== 'array' || a.type.elem !== 'f64') return undefined
    if (written.has(a.name) || !worthTabulating(registry, callee) || callsRuntime(arg.index)) return undefined
    for (const n of valueReads(arg.index)) if (variant.has(n)) return undefined
    return `${callee}(${a.name})`
  }
  const note = (k: string, callee: string, array: VarRef, nested: boolean): void => {
    const t = tables.get(k)
    if (t) t.nested ||= nested
    else tables.set(k, { callee, array, name: '', nested })
  }
  const exprs = (e: Expr | Arg | null | undefined, nested: boolean): void => {
    if (!e) return
    rewriteExpr(e, (x) => {
      if (x.kind === 'call' && x.args.length === 1) {
        const k = qualifies(x.callee, x.args[0]!, x.type)
        if (k) note(k, x.callee, (x.args[0] as IndexExpr).array, nested)
      }
      return x
    })
  }
  /** The table keys of the evaluations in a statement's own expressions (not its nested blocks). */
  const ownKeys = (x: Stmt): string[] => evaluatedKeys(registry, x, qualifies, { checks: false })
  const scan = (body: Stmt[], nested: boolean): void => {
    for (const x of body) {
      switch (x.kind) {
        case 'update':
          exprs(x.target, nested)
          exprs(x.value, nested)
          break
        case 'alloc':
          if (x.value.kind !== 'emptystack') exprs(x.value, nested)
          break
        case 'callstmt':
          for (const a of x.args) exprs(a, nested)
          if (x.target === 'bijection')
            for (const c of loweredPureCalls(registry, bijectionOf(registry, x))) {
              if (x.tabulated?.some((t) => t.callee === c.callee && t.arg === c.arg)) continue
              const a = x.args[c.arg]
              const k = a && qualifies(c.callee, a, 'f64')
              if (k) note(k, c.callee, (a as IndexExpr).array, nested)
            }
          break
        case 'for':
          exprs(x.start, nested)
          exprs(x.stop, nested)
          exprs(x.step, nested)
          scan(x.body, true)
          break
        case 'if':
          exprs(x.pre, nested)
          exprs(x.post, nested)
          scan(x.then, nested)
          scan(x.else, nested)
          break
        case 'while':
          exprs(x.pre, nested)
          exprs(x.post, nested)
          scan(x.body, nested)
          break
        case 'unchecked':
          scan(x.body, nested)
          break
        default:
          break
      }
    }
  }
  scan(s.body, false)
  for (const [k, t] of tables) if (!t.nested) tables.delete(k)
  // the cost guard: how many evaluations of each table's values the loop makes, at least (see
  // `tabulate-cost.ts`); a table whose count cannot be bounded is not built
  const counts = new Map<string, Expr>()
  for (const k of tables.keys()) {
    const count = evaluationCount(s, (x) => ownKeys(x).filter((o) => o === k).length, written)
    if (count.kind === 'num' && count.value === 0) tables.delete(k)
    else counts.set(k, count)
  }
  if (!tables.size) return undefined
  for (const t of tables.values()) t.name = fresh(names, `${s.variable}$tab`)
  const loc = s.loc ? { loc: s.loc } : {}
  const read = (t: Table, index: Expr, at: Expr | Arg): IndexExpr => tableRead(t, index, at, loc)
  // the loop reading its tables: expressions rewritten, bijection calls marked
  const rewritten = rewriteBlock(s.body, (x) => {
    if (x.kind !== 'call' || x.args.length !== 1) return x
    const k = qualifies(x.callee, x.args[0]!, x.type)
    const t = k && tables.get(k)
    return t ? read(t, (x.args[0] as IndexExpr).index, x) : x
  })
  const mark = (body: Stmt[]): Stmt[] =>
    body.map((x): Stmt => {
      switch (x.kind) {
        case 'callstmt': {
          if (x.target !== 'bijection') return x
          // values that another pass already gave the call (an ancilla of `hoist-calls`) stay
          const tabulated: TabulatedValue[] = [...(x.tabulated ?? [])]
          for (const c of loweredPureCalls(registry, bijectionOf(registry, x))) {
            if (tabulated.some((t) => t.callee === c.callee && t.arg === c.arg)) continue
            const a = x.args[c.arg]
            const k = a && qualifies(c.callee, a, 'f64')
            const t = k && tables.get(k)
            if (t) tabulated.push({ callee: c.callee, arg: c.arg, read: read(t, (a as IndexExpr).index, a) })
          }
          return tabulated.length ? { ...x, tabulated } : x
        }
        case 'for':
        case 'while':
        case 'unchecked':
          return { ...x, body: mark(x.body) } as Stmt
        case 'if':
          return { ...x, then: mark(x.then), else: mark(x.else) }
        default:
          return x
      }
    })
  // two array parameters may be one memory: the tables are built where each array tabulated is
  // apart from every array parameter the loop writes (see \`apart.ts\`), the loop as it was elsewhere
  const apart = apartPairs(
    ctx.f,
    written,
    [...tables.values()].map((t) => t.array.name),
    ctx.known,
  )
  // a loop inside may have tables of its own
  const body = tabulateBlock(mark(rewritten), { ...ctx, known: withKnown(ctx.known, apart) }, names)
  // the tables are built when the loop runs at least twice and evaluates more than they cost
  const { build, unbuild, pays } = tableStatements(tables, counts, () => fresh(names, `${s.variable}$tj`), loc, false)
  return {
    kind: 'if',
    pre: withApart({ kind: 'binary', op: '&&', left: guard, right: pays, type: 'bool', ...loc }, apart, ctx.f),
    post: null,
    then: [...build, { ...s, body }, { kind: 'unchecked', body: unbuild, ...loc }],
    else: [s],
    ...loc,
  }
}

/** A table: the values of `callee` at every element of `array`, held in the array `name`. */
export interface TableSpec {
  callee: string
  array: VarRef
  name: string
}

/** Where `at` (a call of a primitive on an element, or the element) reads its element. */
const elementLoc = (at: Expr | Arg): SourceLocation | undefined =>
  at.kind === 'call' && at.args[0]?.kind === 'index' ? (at.args[0].loc ?? at.loc) : at.loc

/** An element of a table, where it replaces `at` (at the location of the element `at` reads). */
export function tableRead(t: TableSpec, index: Expr, at: Expr | Arg, loc: { loc?: SourceLocation }): IndexExpr {
  return {
    kind: 'index',
    array: { kind: 'var', name: t.name, type: { kind: 'array', elem: 'f64' }, ...loc },
    index,
    type: 'f64',
    // (its bounds check is the array's: the table has its length; and where the check fails is
    // where the element was read)
    checkedAs: t.array,
    ...(elementLoc(at) ? { loc: elementLoc(at) } : {}),
  }
}

/**
 * The statements that build `tables` before the code that reads them (`build`) and take them
 * apart after it (`unbuild`, to run `@unchecked`), and `pays`: whether the evaluations they
 * replace (`counts`, by table key) outnumber their elements (tables of one array with the same
 * count — cos and sin of an angle — compare as one). The tables of one array are built by one loop,
 * after their allocations. `index`: a fresh name for a table loop's
 * variable. `hints`: each table is marked overwritten by its first loop, whose updates are
 * marked `init` (see `forward-pure-values`), so that a backend may leave it unzeroed.
 */
export function tableStatements(
  tables: ReadonlyMap<string, TableSpec>,
  counts: ReadonlyMap<string, Expr>,
  index: () => string,
  loc: { loc?: SourceLocation },
  hints: boolean,
): { build: Stmt[]; unbuild: Stmt[]; pays: Expr } {
  const build: Stmt[] = [],
    unbuild: Stmt[] = []
  // the tables of one array are built by one loop (cos θ and sin θ side by side, which a code
  // generator may compute together, see \`sincos-pairs\` of the wasm backend), after their allocations
  const byArray = new Map<string, TableSpec[]>()
  for (const t of tables.values()) {
    const group = byArray.get(t.array.name)
    if (group) group.push(t)
    else byArray.set(t.array.name, [t])
  }
  const arrayType = { kind: 'array' as const, elem: 'f64' }
  for (const group of byArray.values()) {
    const array = group[0]!.array
    const len: CallExpr = { kind: 'call', callee: 'len', args: [array], type: 'i32', ...loc }
    const zeros: CallExpr = { kind: 'call', callee: 'zeros', args: [len], ...loc }
    const j = index()
    const jv: VarRef = { kind: 'var', name: j, type: 'i32', ...loc }
    const init = hints ? { init: true } : {}
    const update = (t: TableSpec, op: '+=' | '-='): Stmt => ({
      kind: 'update',
      op,
      target: tableRead(t, jv, jv, loc),
      value: {
        kind: 'call',
        callee: t.callee,
        args: [{ kind: 'index', array: t.array, index: jv, type: 'f64', ...loc }],
        type: 'f64',
        ...loc,
      },
      ...(op === '+=' ? init : {}),
      ...loc,
    })
    const fill = (op: '+=' | '-='): Stmt => ({
      kind: 'for',
      variable: j,
      start: { kind: 'num', value: 0, isFloat: false, type: 'i32', ...loc },
      stop: len,
      step: null,
      inclusive: false,
      body: (op === '+=' ? group : [...group].reverse()).map((t) => update(t, op)),
      ...(op === '-=' ? { tableUncompute: true } : {}),
      ...loc,
    })
    const memory = (kind: 'alloc' | 'dealloc', t: TableSpec): Stmt => ({
      kind,
      name: t.name,
      value: zeros,
      type: arrayType,
      declared: arrayType,
      ...(kind === 'alloc' && hints ? { overwritten: true } : {}),
      ...loc,
    })
    build.push(...group.map((t) => memory('alloc', t)), fill('+='))
    unbuild.unshift(fill('-='), ...[...group].reverse().map((t) => memory('dealloc', t)))
  }
  let evaluations: Expr | undefined, cost: Expr | undefined
  const compared = new Set<string>()
  for (const [k, t] of tables) {
    const c = counts.get(k)!
    const same = `${t.array.name}:${key(c)}`
    if (compared.has(same)) continue
    compared.add(same)
    const len: Expr = {
      kind: 'call',
      callee: 'f64',
      args: [{ kind: 'call', callee: 'len', args: [t.array], type: 'i32' }],
      type: 'f64',
    }
    evaluations = evaluations ? { kind: 'binary', op: '+', left: evaluations, right: c, type: 'f64' } : c
    cost = cost ? { kind: 'binary', op: '+', left: cost, right: len, type: 'f64' } : len
  }
  const pays: Expr = { kind: 'binary', op: '>', left: evaluations!, right: cost!, type: 'bool', ...loc }
  return { build, unbuild, pays }
}

/** What the pass knows of the program around a function. */
interface Context {
  registry: Registry
  /** The functions with a host effect (see `effectfulFunctions`). */
  effectful: ReadonlySet<string>
  /** For each function, which parameters it writes (the program's `writes`), when known. */
  writes?: ReadonlyMap<string, boolean[]>
  /** The function (its array parameters may be one memory, see `apart.ts`). */
  f: FunctionDef
  /** The pairs of array parameters the enclosing \`if\`s proved apart. */
  known: KnownApart
}

/** `body` with tables for its loops (outermost loops first; a loop's tabulated body is visited again). */
function tabulateBlock(body: Stmt[], ctx: Context, names: Names): Stmt[] {
  return body.map((s): Stmt => {
    if (s.kind === 'for') return tabulateLoop(s, ctx, names) ?? { ...s, body: tabulateBlock(s.body, ctx, names) }
    if (s.kind === 'if') {
      const inThen = { ...ctx, known: knownApart(s.pre, ctx.known) }
      return {
        ...s,
        then: tabulateBlock(s.then, inThen, names),
        else: s.asWritten ? s.else : tabulateBlock(s.else, ctx, names),
      }
    }
    return nested(s, (b) => tabulateBlock(b, ctx, names))
  })
}

/**
 * The function with tables for the expensive pure primitives its loops apply, again and again,
 * to elements of arrays they never write (see the module comment). `effectful`: the functions
 * with a host effect (see `effectfulFunctions`), a loop that calls one is left as it is;
 * `writes`: which parameters each function writes (the program's `writes`; without it a call
 * may write every dataview argument).
 */
export function tabulate(
  f: FunctionDef,
  registry: Registry,
  effectful: ReadonlySet<string> = new Set(),
  writes?: ReadonlyMap<string, boolean[]>,
): FunctionDef {
  const taken = new Set<string>(f.params.map((p) => p.name))
  walk(f.body, (s) => {
    if (s.kind === 'alloc') taken.add(s.name)
    if (s.kind === 'for') taken.add(s.variable)
  })
  return { ...f, body: tabulateBlock(f.body, { registry, effectful, writes, f, known: new Set() }, { next: 0, taken }) }
}
