/**
 * Pass `tabulate-sweeps` (one table for several loop nests of a function): an expensive pure
 * primitive that two or more statements of a function's body apply to elements of an array
 * parameter the function never writes computes the same values in each of them. They are
 * computed once per element instead, into a table, before the body, and every statement reads the
 * table. This is the shape of a gradient program run as one function (f's sweep, then its
 * adjoint's, see `inlineTopLevelCalls`): `ROT(a, b, theta[k])` computes cos θ and sin θ in the
 * forward sweep, and its adjoint computes them again to un-rotate the values and rotate the
 * gradients:
 *
 *     for l in 0..n { k <- 0; for j … { ROT(x[…], x[…], theta[k]); INC(k) }; k -> … }
 *     …
 *     for l in reverse 0..n { … IROT(x[…], x[…], theta[k]); … }
 * becomes
 *     if (count > f64(len(theta)), ~) {
 *       $sw0: f64[] <- zeros(len(theta))
 *       for $sj1 in 0..len(theta) { $sw0[$sj1] += cos(theta[$sj1]) }
 *       … the body, reading cos(theta[e]) as $sw0[e] (a bijection call marked, see `tabulated`) …
 *       @unchecked { for $sj1 in 0..len(theta) { $sw0[$sj1] -= cos(theta[$sj1]) }; $sw0 -> zeros(len(theta)) }
 *     } else {
 *       … the body as it was …
 *     }
 *
 * Exact, for the reasons `tabulate` is: a table element is `0 + f(A[j])`, which is `f(A[j])` to
 * the last bit, and `A` keeps its elements while the body runs (the body does not name it as
 * written, see `writtenBy`, and the guard requires it apart from every array parameter the body
 * writes, see \`apart.ts\`), so `T[e]` is `f(A[e])` for every index `e` (the table has A's length).
 * The table is built from every element of `A`, each in range, with a primitive that cannot fail;
 * A is a parameter, so its length is known before the body. Every element is written by the build
 * before anything reads it: the allocation is marked `overwritten` and the build's update `init`.
 * The uncompute sits in `@unchecked` and `dead-ancillas` drops it. Without run-time checks only.
 *
 * When it pays: the table costs len(A) evaluations; the body evaluates at least the lower bound
 * that `evaluationCount` gives for its loop nests (not counting `@unchecked` uncomputes, which
 * `dead-ancillas` drops, nor evaluations outside loops, which the code generators share with
 * equal calls of the straight-line code around them). A branch whose condition reads only parameters the body never writes,
 * with no element read, call other than `len` and `$apart`, division or remainder (so that it can be evaluated
 * first, and cannot fail), counts as if it runs, and the guard requires its condition. A table is
 * considered only where two or more statements of the body apply the primitive (one loop nest that
 * applies it again and again is `tabulate`'s case); it is built only where the guard holds, and
 * the body then runs as it was otherwise. The pass runs after `hoist-calls` (a loop's invariant
 * calls are hoisted first, so the count is that of the hoisted program) and before `tabulate`.
 */
import type { Arg, Expr, ForStmt, FunctionDef, IndexExpr, Stmt, TabulatedValue } from '../ast.js'
import { walk } from '../check.js'
import { key } from '../cse.js'
import type { Registry } from '../registry.js'
import { valueReads } from '../stmt-exprs.js'
import { rewriteBlock } from './rewrite.js'
import { evaluationCount } from './tabulate-cost.js'
import {
  bijectionOf,
  evaluatedKeys,
  loweredPureCalls,
  tableRead,
  tableStatements,
  type TableSpec,
  worthTabulating,
  writtenBy,
} from './tabulate.js'
import { callsRuntime } from './insert-checks.js'
import { APART, apartPairs, withApart } from './apart.js'

/**
 * Whether a condition can be evaluated before the body, where it cannot fail: variables,
 * literals, `len` of a variable, and arithmetic, comparisons and logic other than `/` and `%`.
 */
function safeCondition(e: Expr): boolean {
  switch (e.kind) {
    case 'num':
    case 'bool':
    case 'var':
      return true
    case 'unary':
      return safeCondition(e.arg)
    case 'binary':
      return e.op !== '/' && e.op !== '%' && safeCondition(e.left) && safeCondition(e.right)
    case 'call':
      // (\`$apart(a, b)\` of two arrays: see \`apart.ts\`)
      return (
        (e.callee === 'len' && e.args.length === 1 && e.args[0]!.kind === 'var') ||
        (e.callee === APART && e.args.length === 2 && e.args.every((a) => a.kind === 'var'))
      )
    default:
      return false
  }
}

/** What the pass knows of a function: the program around it, and the arrays whose tables qualify. */
interface Scope {
  registry: Registry
  /** The f64 array parameters the body never writes. */
  arrays: ReadonlySet<string>
}

/** The table key of `callee(A[e])` when it qualifies (A an array of the scope, an expensive primitive), else undefined. */
function qualifies(scope: Scope, callee: string, arg: Arg | Expr, type: string | undefined): string | undefined {
  if (type !== 'f64' || arg.kind !== 'index' || arg.type !== 'f64') return undefined
  if (!scope.arrays.has(arg.array.name) || !worthTabulating(scope.registry, callee) || callsRuntime(arg.index))
    return undefined
  return `${callee}(${arg.array.name})`
}

/** The keys of the evaluations in a statement's own expressions, checks' values included (see `evaluatedKeys`). */
function ownKeys(scope: Scope, x: Stmt): string[] {
  return evaluatedKeys(scope.registry, x, (callee, arg, type) => qualifies(scope, callee, arg, type), { checks: true })
}

/**
 * The statements of a body that sit in a loop (a \`for\` or \`while\` body, at any depth): only
 * their evaluations count, since the code generators share the equal pure calls of straight-line
 * code already (see \`sharedSubexpressions\`).
 */
function inLoops(body: Stmt[]): Set<Stmt> {
  const out = new Set<Stmt>()
  const visit = (b: Stmt[], looped: boolean): void => {
    for (const x of b) {
      if (looped) out.add(x)
      switch (x.kind) {
        case 'for':
        case 'while':
          visit(x.body, true)
          break
        case 'if':
          visit(x.then, looped)
          visit(x.else, looped)
          break
        case 'unchecked':
        case 'routine':
        case 'invblock':
          visit(x.body, looped)
          break
        default:
          break
      }
    }
  }
  visit(body, false)
  return out
}

/** The keys that the statements in loops of a statement (itself included) evaluate. */
function keysIn(scope: Scope, s: Stmt): Set<string> {
  const looped = inLoops([s])
  const out = new Set<string>()
  walk([s], (x) => {
    if (looped.has(x)) for (const k of ownKeys(scope, x)) out.add(k)
  })
  return out
}

/** The scope of a function: its f64 array parameters that the body never writes (undefined: host effects). */
function scopeOf(
  f: FunctionDef,
  registry: Registry,
  effectful: ReadonlySet<string>,
  writes?: ReadonlyMap<string, boolean[]>,
): { scope: Scope; written: Set<string> } | undefined {
  const written = writtenBy(f.body, registry, effectful, writes)
  if (!written) return undefined
  const arrays = new Set(
    f.params.filter((p) => p.type.kind === 'array' && p.type.elem === 'f64' && !written.has(p.name)).map((p) => p.name),
  )
  return { scope: { registry, arrays }, written }
}

/**
 * Per statement of `f`'s body, the keys \`primitive(array)\` of the expensive pure primitives it
 * applies in a loop (nested statements and a bijection's lowered values included) to elements of
 * an f64 array parameter that the body never writes: what pass `tabulate-sweeps` could keep in tables.
 * A program builder asks this before it builds a program whose gain is the pass's (see
 * `compileTwoSweep` in @tenet/ad).
 */
export function pureValueKeys(
  f: FunctionDef,
  registry: Registry,
  effectful: ReadonlySet<string> = new Set(),
  writes?: ReadonlyMap<string, boolean[]>,
): Array<Set<string>> {
  const s = scopeOf(f, registry, effectful, writes)
  if (!s?.scope.arrays.size) return f.body.map(() => new Set())
  return f.body.map((x) => keysIn(s.scope, x))
}

/**
 * The tables pass `tabulate-sweeps` considers in `f` (before its cost guard): the keys that two
 * or more statements of its body evaluate (see `pureValueKeys`).
 */
export function sweepTableCandidates(
  f: FunctionDef,
  registry: Registry,
  effectful: ReadonlySet<string> = new Set(),
  writes?: ReadonlyMap<string, boolean[]>,
): string[] {
  const statements = new Map<string, number>()
  for (const keys of pureValueKeys(f, registry, effectful, writes))
    for (const k of keys) statements.set(k, (statements.get(k) ?? 0) + 1)
  return [...statements].filter(([, n]) => n >= 2).map(([k]) => k)
}

/** One table: the primitive, the array, the table's name. */
/** A table of the function (see `TableSpec`). */
type Table = TableSpec

/**
 * The function with one table per expensive pure primitive that two or more statements of its
 * body apply to an array parameter it never writes, when the body evaluates more than the tables
 * cost (see the module comment). `effectful`: the functions with a host effect (a body that calls
 * one is left as it is); `writes`: which parameters each function writes (the program's `writes`).
 */
export function tabulateSweeps(
  f: FunctionDef,
  registry: Registry,
  effectful: ReadonlySet<string> = new Set(),
  writes?: ReadonlyMap<string, boolean[]>,
): FunctionDef {
  const candidates = sweepTableCandidates(f, registry, effectful, writes)
  if (!candidates.length) return f
  const { scope, written } = scopeOf(f, registry, effectful, writes)!
  const taken = new Set<string>(f.params.map((p) => p.name))
  walk(f.body, (s) => {
    if (s.kind === 'alloc') taken.add(s.name)
    if (s.kind === 'for') taken.add(s.variable)
  })
  let next = 0
  const fresh = (base: string): string => {
    let n: string
    do n = `${base}${next++}`
    while (taken.has(n))
    taken.add(n)
    return n
  }
  const loc = f.loc ? { loc: f.loc } : {}
  // the body as the body of a loop that runs once, for `evaluationCount`; the names it writes and
  // binds are the loop's, the conditions it assumes are collected
  const once: ForStmt = {
    kind: 'for',
    variable: fresh('$once'),
    start: { kind: 'num', value: 0, isFloat: false, type: 'i32' },
    stop: { kind: 'num', value: 1, isFloat: false, type: 'i32' },
    step: null,
    inclusive: false,
    body: f.body,
  }
  const bound = new Set(written)
  walk(f.body, (s) => {
    if (s.kind === 'alloc') bound.add(s.name)
    if (s.kind === 'for') bound.add(s.variable)
  })
  const params = new Set(f.params.map((p) => p.name))
  const assumed = new Map<string, Expr>()
  const looped = inLoops(f.body)
  const tables = new Map<string, Table>()
  const counts = new Map<string, Expr>()
  for (const k of candidates) {
    // a branch that evaluates the key counts, its condition then required by the guard
    const conditions = new Map<string, Expr>()
    const assume = (c: Expr, then: Stmt[]): boolean => {
      if (!safeCondition(c) || [...valueReads(c)].some((n) => !params.has(n) || bound.has(n))) return false
      let evaluates = false
      walk(then, (x) => {
        if (looped.has(x) && ownKeys(scope, x).includes(k)) evaluates = true
      })
      if (!evaluates) return false
      conditions.set(key(c), c)
      return true
    }
    const count = evaluationCount(
      once,
      (x) => (looped.has(x) ? ownKeys(scope, x).filter((o) => o === k).length : 0),
      bound,
      {
        assume,
        skipUnchecked: true,
      },
    )
    if (count.kind === 'num' && count.value === 0) continue
    for (const [ck, c] of conditions) assumed.set(ck, c)
    const [callee, array] = [k.slice(0, k.indexOf('(')), k.slice(k.indexOf('(') + 1, -1)]
    const p = f.params.find((q) => q.name === array)!
    tables.set(k, {
      callee,
      array: { kind: 'var', name: array, type: p.type, ...loc },
      name: fresh('$sw'),
    })
    counts.set(k, count)
  }
  if (!tables.size) return f
  const read = (t: Table, index: Expr, at: Expr | Arg): IndexExpr => tableRead(t, index, at, loc)
  const tableOf = (callee: string, arg: Arg | Expr, type: string | undefined): Table | undefined => {
    const k = qualifies(scope, callee, arg, type)
    return k === undefined ? undefined : tables.get(k)
  }
  // the body reading the tables: expressions rewritten, bijection calls marked
  const rewritten = rewriteBlock(f.body, (x) => {
    if (x.kind !== 'call' || x.args.length !== 1) return x
    const t = tableOf(x.callee, x.args[0]!, x.type)
    return t ? read(t, (x.args[0] as IndexExpr).index, x) : x
  })
  const mark = (body: Stmt[]): Stmt[] =>
    body.map((x): Stmt => {
      switch (x.kind) {
        case 'callstmt': {
          if (x.target !== 'bijection') return x
          const tabulated: TabulatedValue[] = [...(x.tabulated ?? [])]
          for (const c of loweredPureCalls(registry, bijectionOf(registry, x))) {
            if (tabulated.some((t) => t.callee === c.callee && t.arg === c.arg)) continue
            const a = x.args[c.arg]
            const t = a && tableOf(c.callee, a, 'f64')
            if (t) tabulated.push({ callee: c.callee, arg: c.arg, read: read(t, (a as IndexExpr).index, a) })
          }
          return tabulated.length ? { ...x, tabulated } : x
        }
        case 'for':
        case 'while':
        case 'unchecked':
        case 'routine':
        case 'invblock':
          return { ...x, body: mark(x.body) } as Stmt
        case 'if':
          return { ...x, then: mark(x.then), else: mark(x.else) }
        default:
          return x
      }
    })
  // built when the body evaluates more than the tables cost and the conditions counted as true hold
  const { build, unbuild, pays } = tableStatements(tables, counts, () => fresh('$sj'), loc, true)
  let guard: Expr = pays
  for (const c of assumed.values()) guard = { kind: 'binary', op: '&&', left: c, right: guard, type: 'bool', ...loc }
  // two array parameters may be one memory: the tables are built where each array tabulated is
  // apart from every array parameter the body writes (see \`apart.ts\`)
  guard = withApart(
    guard,
    apartPairs(
      f,
      written,
      [...tables.values()].map((t) => t.array.name),
    ),
    f,
  )
  const body: Stmt[] = [
    {
      kind: 'if',
      pre: guard,
      post: null,
      then: [...build, ...mark(rewritten), { kind: 'unchecked', body: unbuild, ...loc }],
      else: f.body,
      ...loc,
    },
  ]
  return { ...f, body }
}
