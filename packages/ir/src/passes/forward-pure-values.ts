/**
 * Pass `forward-pure-values` (cross-loop reuse of a pure primitive's values): a loop computes
 * `f(A[i])` at its own index `i`, and a later loop over the same range computes `f(A[i])` again,
 * with `A[i]` unchanged in between. The first loop keeps each value in a table, and the second
 * reads it instead of calling `f` again:
 *
 *     for e in 0..len(d) { for j in 0..k { q[e] += … }; d[e] += sqrt(q[e]) }
 *     …
 *     for e in reverse 0..len(d) { g_q[e] += g_d[e] * (0.5 / sqrt(q[e])) }
 * becomes
 *     e$fwd0: f64[] <- zeros(len(q))
 *     for e in 0..len(d) { for j in 0..k { q[e] += … }; d[e] += sqrt(q[e]); e$fwd0[e] += sqrt(q[e]) }
 *     …
 *     for e in reverse 0..len(d) { g_q[e] += g_d[e] * (0.5 / e$fwd0[e]) }
 *     @unchecked { for e$fj1 in 0..len(d) { e$fwd0[e$fj1] -= sqrt(q[e$fj1]) }; e$fwd0 -> zeros(len(q)) }
 *
 * The table update comes right after the statement that calls `f`, so that the code generators'
 * common subexpressions compute `f(A[i])` once for both. This is the shape of a fused gradient: the forward sweep computes `d[e] += sqrt(q[e])` and the
 * adjoint needs `sqrt(q[e])` again for the partial. The adjoint cannot read `d[e]` instead (it
 * holds its input plus the root, unless that input is known to be zero: see below), but the root
 * itself is unchanged.
 *
 * What the second loop reads: a table element is `0 + f(A[i])`, which is `f(A[i])` to the last bit
 * except for the sign of a zero (a result of −0, such as `sqrt(−0)`, is kept as +0: IEEE addition
 * gives 0 + −0 = +0, so a use that tells them apart, `0.5 / sqrt(q)` at q = −0, sees +∞ for −∞).
 * Keeping −0 would cost a second update per element (the table set to −0 first), which made the
 * graph embedding's gradient slower than with no table. The value is the one the second loop
 * would compute otherwise, because `A[i]` does not change from where the first loop computes it to
 * where the second reads it:
 * - in the first loop, every write to `A` is an update of `A[i]` at the loop's own index (so an
 *   iteration changes no other iteration's element), and none comes at or after the statement
 *   that calls `f` (so the element stays as it was then until the loop ends);
 * - nothing between the two loops writes `A`, and the second loop does not write it;
 * - both loops run through the same indices: the same range (the same start, stop, step, either
 *   direction), of names nothing from the first loop to the second writes.
 * Writes are those `writtenBy` sees (a call's dataview arguments count, distinct names are
 * distinct memory). The table has A's length and is indexed by the loop variable, as A is. The
 * uncompute sits in `@unchecked` (an infinite or NaN value makes `f − f` NaN), and
 * `dead-ancillas` drops it. Every element the program reads was first written by the table update
 * of the first loop (the same indices), so the allocation is marked `overwritten` and that update
 * `init`: a backend may skip zeroing the table and compute the update as `0 + f(A[i])` (the cpu
 * backend does, for its reused arrays). The pass runs without run-time checks only, as `tabulate` does.
 *
 * No table where the first loop's statement is \`D[i] += f(A[i])\` into an array that holds zeros
 * there: a scratch parameter (\`Param.scratch\`, zero at the function's entry) or an ancilla
 * allocated with \`zeros\`, that nothing writes before, that the first loop writes only there and
 * nothing writes from there to the second loop. \`D[i]\` then holds \`0 + f(A[i])\`, the table's value,
 * and the second loop reads it (the graph embedding's lengths \`d\`, passed as zeros, hold the roots
 * the adjoint needs; a table was one more store per edge):
 *
 *     for e in reverse 0..len(d) { g_q[e] += g_d[e] * (0.5 / d[e]) }
 *
 * When it pays: the table costs one store per iteration of the first loop and a load per use in
 * the second, against one evaluation of `f` per use: pure unary f64 primitives only, `sqrt`
 * included (its latency sits on the adjoint's dependency chain).
 */
import type { Arg, CallExpr, Expr, ForStmt, FunctionDef, IndexExpr, Stmt, VarRef } from '../ast.js'
import { walk } from '../check.js'
import { key } from '../cse.js'
import type { Registry } from '../registry.js'
import { valueReads } from '../stmt-exprs.js'
import { rewriteBlock, rewriteExpr } from './rewrite.js'
import { writtenBy } from './tabulate.js'

/** What the pass knows of the program around a function. */
interface Context {
  registry: Registry
  effectful: ReadonlySet<string>
  writes?: ReadonlyMap<string, boolean[]>
  names: { next: number; taken: Set<string> }
  /** The scratch parameters of the function (\`Param.scratch\`): zero at its entry (none for an inverse). */
  zeroAtEntry: ReadonlySet<string>
}

function fresh(ctx: Context, base: string): string {
  let n: string
  do n = `${base}${ctx.names.next++}`
  while (ctx.names.taken.has(n))
  ctx.names.taken.add(n)
  return n
}

/** Whether `name` is a pure unary primitive of a scalar (no host call). */
function pureUnary(registry: Registry, name: string): boolean {
  if (name.startsWith('$')) return false
  const p = registry.findPrimitive(name)
  return p?.kind === 'pure' && p.arity === 1 && !p.argKinds?.some((k) => k !== 'scalar')
}

/** `f(A[v])` with f a pure unary f64 primitive, A an f64 array and the index exactly the variable v: A's name. */
function candidate(registry: Registry, x: Expr | Arg, v: string): string | undefined {
  if (x.kind !== 'call' || x.args.length !== 1 || x.type !== 'f64' || !pureUnary(registry, x.callee)) return undefined
  const a = x.args[0]!
  if (a.kind !== 'index' || a.type !== 'f64' || a.index.kind !== 'var' || a.index.name !== v) return undefined
  const t = a.array.type
  if (typeof t !== 'object' || t.kind !== 'array' || t.elem !== 'f64') return undefined
  return a.array.name
}

/** The calls `f(A[v])` in an expression (see `candidate`), by `callee(A)`. */
function callsIn(registry: Registry, e: Expr | null | undefined, v: string, out: Map<string, CallExpr>): void {
  if (!e) return
  rewriteExpr(e, (x) => {
    if (candidate(registry, x, v) !== undefined) {
      const c = x as CallExpr
      out.set(`${c.callee}(${(c.args[0] as IndexExpr).array.name})`, c)
    }
    return x
  })
}

/** Whether two loops run through the same indices (the same range; either direction). */
function sameRange(a: ForStmt, b: ForStmt): boolean {
  if (a.each || b.each || a.inclusive !== b.inclusive) return false
  if (key(a.start) !== key(b.start) || key(a.stop) !== key(b.stop)) return false
  if ((a.step === null) !== (b.step === null)) return false
  return a.step === null || key(a.step) === key(b.step!)
}

/** Whether a name is bound again inside a block (an ancilla or a loop variable of that name). */
function rebinds(body: Stmt[], name: string): boolean {
  let found = false
  walk(body, (s) => {
    if ((s.kind === 'alloc' && s.name === name) || (s.kind === 'for' && s.variable === name)) found = true
  })
  return found
}

/**
 * Whether every write to A in `body` is an update `A[v] op= …` (at any depth), so that an
 * iteration of the loop over v writes only its own element.
 */
function writesOnlyAt(body: Stmt[], array: string, v: string, ctx: Context): boolean {
  // the writes other than such updates: none may name A
  const strip = (b: Stmt[]): Stmt[] =>
    b.flatMap((s): Stmt[] => {
      if (s.kind === 'update' && s.target.kind === 'index' && s.target.array.name === array) {
        return s.target.index.kind === 'var' && s.target.index.name === v ? [] : [s]
      }
      switch (s.kind) {
        case 'if':
          return [{ ...s, then: strip(s.then), else: strip(s.else) }]
        case 'for':
        case 'while':
        case 'unchecked':
        case 'routine':
        case 'invblock':
          return [{ ...s, body: strip(s.body) } as Stmt]
        default:
          return [s]
      }
    })
  const rest = writtenBy(strip(body), ctx.registry, ctx.effectful, ctx.writes)
  return rest !== undefined && !rest.has(array)
}

/** Reads of a range's expressions. */
function rangeReads(s: ForStmt): Set<string> {
  const out = new Set<string>()
  for (const e of [s.start, s.stop, s.step]) if (e) for (const n of valueReads(e)) out.add(n)
  return out
}

/**
 * One reuse in `body` between the loop at `i` and a later loop: the new block, or undefined when
 * the loop at `i` has none.
 */
function forwardFrom(body: Stmt[], i: number, ctx: Context, top: boolean): Stmt[] | undefined {
  const s1 = body[i] as ForStmt
  const v1 = s1.variable
  if (rebinds(s1.body, v1)) return undefined
  // the calls f(A[v1]) of the top-level updates and ancillas of the first loop, by statement
  const found: Array<{ at: number; calls: Map<string, CallExpr> }> = []
  s1.body.forEach((x, at) => {
    const calls = new Map<string, CallExpr>()
    if (x.kind === 'update') callsIn(ctx.registry, x.value, v1, calls)
    else if (x.kind === 'alloc' && x.value.kind !== 'emptystack') callsIn(ctx.registry, x.value, v1, calls)
    if (calls.size) found.push({ at, calls })
  })
  if (!found.length) return undefined
  const written1 = writtenBy(s1.body, ctx.registry, ctx.effectful, ctx.writes)
  if (!written1 || written1.has(v1)) return undefined
  const range = rangeReads(s1)
  for (let j = i + 1; j < body.length; j++) {
    const s2 = body[j]!
    const between = writtenBy(body.slice(i + 1, j), ctx.registry, ctx.effectful, ctx.writes)
    if (!between) return undefined
    if (s2.kind !== 'for' || !sameRange(s1, s2)) continue
    const written2 = writtenBy(s2.body, ctx.registry, ctx.effectful, ctx.writes)
    if (!written2 || rebinds(s2.body, s2.variable)) continue
    // the range means the same indices in both loops
    if ([...range].some((n) => written1.has(n) || between.has(n) || written2.has(n))) continue
    const uses = new Map<string, CallExpr>()
    walk(s2.body, (x) => {
      if (x.kind === 'update') {
        callsIn(ctx.registry, x.value, s2.variable, uses)
        if (x.target.kind === 'index') callsIn(ctx.registry, x.target.index, s2.variable, uses)
      } else if (x.kind === 'alloc' && x.value.kind !== 'emptystack') callsIn(ctx.registry, x.value, s2.variable, uses)
      else if (x.kind === 'dealloc' && x.value.kind !== 'emptystack') callsIn(ctx.registry, x.value, s2.variable, uses)
    })
    for (const { at, calls } of found) {
      for (const [k, call] of calls) {
        if (!uses.has(k)) continue
        const array = (call.args[0] as IndexExpr).array
        if (between.has(array.name) || written2.has(array.name)) continue
        // unchanged from the statement that calls f to the end of the first loop
        const after = writtenBy(s1.body.slice(at), ctx.registry, ctx.effectful, ctx.writes)
        if (!after || after.has(array.name) || !writesOnlyAt(s1.body, array.name, v1, ctx)) continue
        const held = zeroTarget(body, i, at, call, ctx, top)
        if (held !== undefined && !between.has(held) && !written2.has(held)) return reuse(body, i, j, held, call, ctx)
        return rewrite(body, i, j, at, call, ctx)
      }
    }
  }
  return undefined
}

/**
 * The array \`D\` where statement \`at\` of the first loop (the loop at \`i\` of \`body\`) is
 * \`D[v] += f(A[v])\` (\`call\`, nothing added to it) and \`D\` holds zeros up to there, so that \`D[v]\` then holds
 * \`0 + f(A[v])\`, the table's value: \`D\` a scratch parameter of the function (zero at its entry;
 * \`top\`: \`body\` is its own body) that nothing before the loop writes, or an ancilla allocated with
 * \`zeros\` earlier in \`body\` (not marked \`overwritten\`) and written by nothing from there to the
 * loop; and the loop writes \`D\` only there (each iteration its own element). Undefined otherwise.
 */
function zeroTarget(
  body: Stmt[],
  i: number,
  at: number,
  call: CallExpr,
  ctx: Context,
  top: boolean,
): string | undefined {
  const s1 = body[i] as ForStmt
  const u = s1.body[at]!
  if (u.kind !== 'update' || u.op !== '+=' || key(u.value) !== key(call) || u.target.kind !== 'index') return undefined
  const { array, index } = u.target
  if (index.kind !== 'var' || index.name !== s1.variable || u.target.type !== 'f64') return undefined
  const d = array.name
  if (d === (call.args[0] as IndexExpr).array.name || rebinds(s1.body, d)) return undefined
  const rest = writtenBy([...s1.body.slice(0, at), ...s1.body.slice(at + 1)], ctx.registry, ctx.effectful, ctx.writes)
  if (!rest || rest.has(d)) return undefined
  let from = 0
  if (!(top && ctx.zeroAtEntry.has(d))) {
    from = body.findIndex(
      (s, k) =>
        k < i &&
        s.kind === 'alloc' &&
        s.name === d &&
        !s.overwritten &&
        s.value.kind === 'call' &&
        s.value.callee === 'zeros' &&
        typeof s.type === 'object' &&
        s.type.kind === 'array' &&
        s.type.elem === 'f64',
    )
    if (from < 0) return undefined
    from++
  }
  const before = writtenBy(body.slice(from, i), ctx.registry, ctx.effectful, ctx.writes)
  return before && !before.has(d) && !body.slice(from, i).some((s) => rebinds([s], d)) ? d : undefined
}

/** The block with the second loop reading \`D[v]\` (\`held\`, see \`zeroTarget\`) for \`call\`'s values: no table. */
function reuse(body: Stmt[], i: number, j: number, held: string, call: CallExpr, ctx: Context): Stmt[] {
  const s2 = body[j] as ForStmt
  const u = (body[i] as ForStmt).body.find(
    (x) => x.kind === 'update' && x.target.kind === 'index' && x.target.array.name === held,
  ) as { target: IndexExpr }
  const array = (call.args[0] as IndexExpr).array
  const read = (v: string): IndexExpr => ({
    ...u.target,
    index: { kind: 'var', name: v, type: 'i32', ...(s2.loc ? { loc: s2.loc } : {}) },
  })
  const same = (x: Expr | Arg, v: string): boolean =>
    x.kind === 'call' && x.callee === call.callee && candidate(ctx.registry, x, v) === array.name
  const second: ForStmt = { ...s2, body: rewriteBlock(s2.body, (x) => (same(x, s2.variable) ? read(s2.variable) : x)) }
  return [...body.slice(0, j), second, ...body.slice(j + 1)]
}

/** The block with the table: built in the first loop at statement `at`, read by the second. */
function rewrite(body: Stmt[], i: number, j: number, at: number, call: CallExpr, ctx: Context): Stmt[] {
  const s1 = body[i] as ForStmt,
    s2 = body[j] as ForStmt
  const loc = s1.loc ? { loc: s1.loc } : {}
  const array = (call.args[0] as IndexExpr).array
  const name = fresh(ctx, `${s1.variable}$fwd`)
  const arrayType = { kind: 'array' as const, elem: 'f64' }
  const tableVar: VarRef = { kind: 'var', name, type: arrayType, ...loc }
  const at$ = (v: string): IndexExpr => ({
    kind: 'index',
    array: tableVar,
    index: { kind: 'var', name: v, type: 'i32', ...loc },
    type: 'f64',
    ...loc,
  })
  const same = (x: Expr | Arg, v: string): boolean =>
    x.kind === 'call' &&
    x.callee === call.callee &&
    candidate(ctx.registry, x, v) === array.name &&
    (x.args[0] as IndexExpr).array.name === array.name
  const replace = (b: Stmt[], v: string): Stmt[] => rewriteBlock(b, (x) => (same(x, v) ? at$(v) : x))
  const valueAt = (v: string): CallExpr => ({
    ...call,
    args: [{ kind: 'index', array, index: { kind: 'var', name: v, type: 'i32', ...loc }, type: 'f64', ...loc }],
  })
  const first: ForStmt = {
    ...s1,
    body: [
      ...s1.body.slice(0, at + 1),
      { kind: 'update', op: '+=', target: at$(s1.variable), value: valueAt(s1.variable), init: true, ...loc },
      ...s1.body.slice(at + 1),
    ],
  }
  const second: ForStmt = { ...s2, body: replace(s2.body, s2.variable) }
  const len: CallExpr = { kind: 'call', callee: 'len', args: [array], type: 'i32', ...loc }
  const zeros: CallExpr = { kind: 'call', callee: 'zeros', args: [len], ...loc }
  const u = fresh(ctx, `${s1.variable}$fj`)
  const unbuild: Stmt = {
    kind: 'unchecked',
    body: [
      {
        kind: 'for',
        variable: u,
        start: s1.start,
        stop: s1.stop,
        step: s1.step,
        inclusive: s1.inclusive,
        body: [{ kind: 'update', op: '-=', target: at$(u), value: valueAt(u), ...loc }],
        ...loc,
      },
      { kind: 'dealloc', name, value: zeros, type: arrayType, declared: arrayType, ...loc },
    ],
    ...loc,
  }
  return [
    ...body.slice(0, i),
    { kind: 'alloc', name, value: zeros, type: arrayType, declared: arrayType, overwritten: true, ...loc },
    first,
    ...body.slice(i + 1, j),
    second,
    unbuild,
    ...body.slice(j + 1),
  ]
}

/** `body` with every reuse found (nested blocks first), each loop tried as a first loop in turn. */
function forwardBlock(body: Stmt[], ctx: Context, top = false): Stmt[] {
  let out = body.map((s): Stmt => {
    switch (s.kind) {
      case 'if':
        return { ...s, then: forwardBlock(s.then, ctx), else: forwardBlock(s.else, ctx) }
      case 'for':
      case 'while':
      case 'unchecked':
      case 'routine':
      case 'invblock':
        return { ...s, body: forwardBlock(s.body, ctx) } as Stmt
      default:
        return s
    }
  })
  // each rewrite adds one statement before the first loop; a bound keeps a malformed case finite
  for (let i = 0, budget = 64; i < out.length && budget > 0; i++) {
    if (out[i]!.kind !== 'for') continue
    const next = forwardFrom(out, i, ctx, top)
    if (next) {
      // the first loop is now at i + 1 (a table was allocated before it), or still at i (a zero
      // target reused, see \`reuse\`): try it again for another primitive or array
      if (next.length === out.length) i--
      out = next
      budget--
    }
  }
  return out
}

/**
 * The function with the values of pure unary primitives that one loop computes at its index and
 * a later loop over the same range computes again kept in a table (see the module comment).
 * `effectful`: the functions with a host effect; `writes`: which parameters each function
 * writes (the program's `writes`; without it a call may write every dataview argument).
 * `scratch`: the function's scratch parameters (\`Param.scratch\`) hold zeros at its entry (true
 * for a program's functions, false for inverses, whose entry is the function's exit), so that
 * one the first loop accumulates the primitive into can stand for the table (see the module comment).
 */
export function forwardPureValues(
  f: FunctionDef,
  registry: Registry,
  effectful: ReadonlySet<string> = new Set(),
  writes?: ReadonlyMap<string, boolean[]>,
  scratch = false,
): FunctionDef {
  const taken = new Set<string>(f.params.map((p) => p.name))
  walk(f.body, (s) => {
    if (s.kind === 'alloc') taken.add(s.name)
    if (s.kind === 'for') taken.add(s.variable)
  })
  const zeroAtEntry = new Set(
    scratch ? f.params.filter((p) => p.scratch && p.type.kind === 'array').map((p) => p.name) : [],
  )
  const ctx: Context = { registry, effectful, writes, names: { next: 0, taken }, zeroAtEntry }
  return { ...f, body: forwardBlock(f.body, ctx, true) }
}
