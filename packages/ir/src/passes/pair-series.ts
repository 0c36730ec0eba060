/**
 * Pass `pair-series` (cpu backend, checks off): a few consecutive iterations of a map loop whose
 * body runs a `while` loop — a batch of series, one per element — run their `while` loops side by
 * side. With two (`lanes`, 3 by default):
 *
 *     for i in a..b { g(out[i], nu, z[i]) }          g's body: P; while (c, p) { B }; Q
 *
 * becomes (g inlined once per lane, its locals renamed apart: `′` for the copy at i, `″` for the
 * one at i + 1, which reads the loop's variable as `i + 1`)
 *
 *     for i in a..=b - 2 by 2 {
 *       P′; P″
 *       while (c′ && c″, p′ && p″) { B′; B″ }
 *       while (c′, p′) { B′ }
 *       while (c″, p″) { B″ }
 *       Q′; Q″
 *     }
 *     for i in a + (t − t % 2)..=b - 1 by 1 { g(out[i], nu, z[i]) }     (t = b − a: the iterations left)
 *
 * With more lanes, one joint loop of all of them, then each lane's own loop. Where the loops'
 * bodies exchange values with `SWAP` (the approximate multiplier), they are then unrolled by two
 * as pass `unroll-swaps` does (`unrollSwapsBlock`), which leaves the swap loops of a function
 * called once per element alone: here they are in the loop's own function, and nothing moves a
 * value at their back edges (see that pass on V8's scratch register).
 *
 * Why: a series whose next term waits for a division of the previous one (paper 001's
 * approximate multiplier, `anc += out·x; out -= anc/x`) runs at the latency of that chain, one
 * element after the other, while the processor's divider could take another one. The joint loop
 * has independent chains in flight; each copy's own loop then finishes what is left of it. The wasm backend gets the same from its map lanes (f64x2); this
 * is the scalar form of it for generated JavaScript.
 *
 * Legality, proved: the body is one call of a function (or uncall) that no loop iteration can
 * see from another — the callee and what it calls have no host calls, `@safe` or stacks
 * (`effectfulFunctions`); it writes no variable of the enclosing function but array elements;
 * and every element of an array of the enclosing function that the inlined body reads or
 * writes is at exactly the loop's variable (`out[i]`, `z[i]`; `len(z)` reads no element), no
 * such array is passed whole to a call. So the copies touch disjoint elements and their own
 * locals, and any interleaving that keeps each copy's order computes what the loop computed:
 * every copy runs the same operations on the same values in the same order (the same bits).
 * A `while` whose condition calls the host is left alone (it is evaluated once more at the joint
 * loop's exit, which a pure condition allows). The callee's top-level `while` must exist (the
 * pass pays only there), and the body's `if`s marked `exits` (pass `unroll-swaps`) lose the mark
 * inside the joint loop, where leaving after one copy's `else` arm would skip the others.
 *
 * With run-time checks on (`checked`, cpu backend): the pass runs after the checks are placed
 * (`insertChecks`, `hoistBounds`), on asserts like any other statement, so each lane's copy of the
 * callee keeps every check of its element, renamed, with its message and source location: the
 * entry check of its loop among the statements before the loops, the check after each of its
 * iterations in the joint loop's body and in its own loop's (the joint loop gets none of its
 * own: its `post` is never evaluated). The order changes: after the joint loop each lane runs
 * its own loop and everything after it before the next lane goes on (`W′; Q′; W″; Q″` where
 * unchecked runs `W′; W″; Q′; Q″`), so what runs of a later element before an earlier one ends is
 * only the statements before its loop and the joint loop's iterations (no more than the earlier
 * element's own loop runs), all of which must end (no `while` in them, no call that has one or
 * recurses: `mayNotEnd`). A program whose elements pass their checks computes the same bits; one with one
 * failing element raises that element's error. Where two elements of a group fail, the later
 * one's failing check can be reached first (in its statements before the loops, or in the joint
 * loop): the pass then raises that error, a real failure of the program, where the unpaired loop
 * raised the earlier element's — the order of two independent failing checks, the one change
 * `CHECKED_PASSES` allows (tested in the cpu backend's `checked-passes.test.ts`). A loop followed
 * by its range check (`loopRange`, which reads the range of the last loop of its variable) is left
 * alone. The lanes' calls of small leaf functions are inlined too (`inlineLeafCalls`, as
 * `inlineSmallCalls` inlines calls in loops, their checks kept): the grouped function carries the
 * lanes' uncomputes and checks, past V8's inlining budget, where each such call stayed a call (the
 * Bessel batch's factorial, twice per element: 62 → 52 ns per z, in-process CPU time).
 *
 * Step `hoist-lane-calls` (option `hoistCalls`, default on): an exact call of loop-invariant values
 * in the callee's body (the Bessel batch's factorial) runs once, before the grouped loop, each lane
 * adding its result (see `hoist-lane-calls.ts`).
 */
import type { Arg, Expr, ForStmt, FunctionDef, Stmt, WhileStmt } from '../ast.js'
import { rootName, walk } from '../check.js'
import { countStatements, inlineCall, inlineLeafCalls } from '../inline.js'
import type { Program } from '../plugin.js'
import { stmtExprs } from '../stmt-exprs.js'
import { effectfulFunctions } from './dead-ancillas.js'
import { callsHost } from './insert-checks.js'
import { intLiteral } from './interchange.js'
import { rewriteBlock } from './rewrite.js'
import { unrollSwapsBlock } from './unroll-swaps.js'
import { exactLaneFunctions, hoistLaneCalls } from './hoist-lane-calls.js'
import { copyExpr, firstValue, lastValue, leftoverLoop, plusI32, rangeFits } from './range-guard.js'

const num = (value: number): Expr => ({ kind: 'num', value, isFloat: false, type: 'i32' })
const plus = plusI32
const binary = (op: '+' | '-' | '%' | '==' | '&&', left: Expr, right: Expr): Expr => ({
  kind: 'binary',
  op,
  left,
  right,
  type: op === '==' || op === '&&' ? 'bool' : 'i32',
})

/**
 * How many iterations of a map loop of series run together by default: on the Bessel batch (cpu,
 * in one process, CPU time per run, loaded 2-core AMD EPYC machine) the objective ran 1.54–1.56×
 * the plain-TS objective with 2, 1.45–1.54× with 3 and 1.51–1.54× with 4 (the joint loop stops
 * with the shortest series of a group; what is left of the others runs one chain at a time).
 */
export const PAIR_SERIES_LANES = 3

/**
 * The largest callee (statements, nested ones included) whose loop the pass groups: the loop's code
 * grows to about 4·lanes copies of the callee's `while` body (unrolled by two), and a function too
 * large is one that V8 no longer optimises.
 */
export const PAIR_SERIES_MAX_STATEMENTS = 400

/** What the pass needs of the program: the callees, their written parameters, the bijections' roles. */
interface Context {
  program: Program
  inverses: ReadonlyMap<string, FunctionDef>
  effectful: ReadonlySet<string>
  /** numbering of the inlined copies' names */
  counter: { n: number }
  /** whether the loops of a group are unrolled by two where they swap (pass `unroll-swaps`) */
  unroll: boolean
  /** how many iterations run together */
  lanes: number
  /** the program's run-time checks are placed (asserts): see the module comment */
  checked: boolean
  /** numbering of the leaf calls inlined into the lanes (checks on) */
  leaves: { n: number }
  /** the exact functions whose loop-invariant calls the lanes share (step `hoist-lane-calls`), or undefined where it is off */
  exact: ReadonlySet<string> | undefined
}

/** The names an inlined body binds (ancillas, loop variables): its own, invisible to the other copy. */
function boundNames(body: Stmt[]): Set<string> {
  const out = new Set<string>()
  walk(body, (s) => {
    if (s.kind === 'alloc') out.add(s.name)
    else if (s.kind === 'for') out.add(s.variable)
  })
  return out
}

/**
 * Whether the iterations of the loop over `v` whose (inlined) body is `body` are independent in
 * the sense of the module comment: no effects, no write of an outer variable but elements, every
 * outer array touched only at `[v]`.
 */
function independent(body: Stmt[], v: string, ctx: Context): boolean {
  const local = boundNames(body)
  let ok = true
  const registry = ctx.program.registry
  const writes = (a: Arg): void => {
    const r = rootName(a)
    if (r === undefined || local.has(r)) return
    // an outer variable written: only an element (checked at [v] below)
    if (a.kind !== 'index') ok = false
  }
  // every use of an outer array: an element at exactly [v], or len(a)
  const uses = (e: Expr | Arg, arrays: boolean): void => {
    switch (e.kind) {
      case 'var':
        // an outer array passed whole (to a call) or read otherwise
        // (an outer name that is not known to be a scalar: an array passed whole or read otherwise)
        if (arrays && !local.has(e.name) && typeof e.type !== 'string' && e.type?.kind !== 'scalar') ok = false
        return
      case 'index':
        if (!local.has(e.array.name) && !(e.index.kind === 'var' && e.index.name === v)) ok = false
        uses(e.index, true)
        return
      case 'field':
      case 'neg':
        uses(e.target as Arg, true)
        return
      case 'unary':
        uses(e.arg, true)
        return
      case 'binary':
        uses(e.left, true)
        uses(e.right, true)
        return
      case 'call':
        if (e.callee.startsWith('$host')) ok = false
        if (e.callee === 'len') return
        for (const x of e.args) uses(x, true)
        return
      default:
        return
    }
  }
  walk(body, (s) => {
    switch (s.kind) {
      case 'update':
        writes(s.target)
        break
      case 'callstmt':
        // a call reading tabulated values (`hoist-calls`, `tabulate`) names tables the copies'
        // renaming does not follow (found by review: an unbound hoisted name): not paired
        if (s.tabulated?.length) ok = false
        if (s.target === 'function') {
          if (ctx.effectful.has(s.callee)) ok = false
          const w = ctx.program.writes.get(s.callee)
          if (!w) ok = false
          else s.args.forEach((a, i) => w[i] && writes(a))
        } else {
          const b = registry.findPrimitive(s.callee)
          if (b?.kind !== 'bijection') ok = false
          else s.args.forEach((a, i) => b.roles[i] === 'inout' && writes(a))
        }
        break
      case 'alloc':
      case 'dealloc':
        if (s.value.kind === 'emptystack') ok = false
        break
      case 'if':
      case 'while':
      case 'for':
      case 'unchecked':
        break
      case 'assert':
        // (checks on: a pure condition and the values of its message)
        uses(s.cond, true)
        for (const a of s.args) if (typeof a !== 'string') uses(a, true)
        break
      default:
        // stacks, @safe, sugar: not paired
        ok = false
    }
    for (const e of stmtExprs(s)) uses(e, true)
  })
  return ok
}

/**
 * Whether running `body` may not end: a `while` loop in it, or a call of a function (or uncall)
 * that has one or is recursive, at any depth (a `for` loop's range is fixed when it starts).
 */
function mayNotEnd(body: Stmt[], ctx: Context, seen: Set<string> = new Set()): boolean {
  let found = false
  walk(body, (s) => {
    if (found) return
    if (s.kind === 'while') found = true
    else if (s.kind === 'callstmt' && s.target === 'function') {
      const key = `${s.inverse ? '~' : ''}${s.callee}`
      const g = s.inverse ? ctx.inverses.get(s.callee) : ctx.program.functions.get(s.callee)
      if (!g || seen.has(key)) found = true
      else found = mayNotEnd(g.body, ctx, new Set([...seen, key]))
    }
  })
  return found
}

/** `body` with the `exits` mark of its `if`s dropped (see the module comment). */
function withoutExits(body: Stmt[]): Stmt[] {
  return body.map((s): Stmt => {
    switch (s.kind) {
      case 'if': {
        const { exits: _, ...rest } = s
        return { ...rest, then: withoutExits(s.then), else: withoutExits(s.else) }
      }
      case 'while':
      case 'for':
      case 'unchecked':
        return { ...s, body: withoutExits(s.body) } as Stmt
      default:
        return s
    }
  })
}

/** The statements replacing loop `M`, or undefined where the pass does not apply. */
function pairLoop(M: ForStmt, ctx: Context): Stmt[] | undefined {
  const step = M.step === null ? 1 : intLiteral(M.step)
  if ((step !== 1 && step !== -1) || M.each || M.body.length !== 1) return undefined
  const call = M.body[0]!
  if (call.kind !== 'callstmt' || call.target !== 'function' || call.distinct) return undefined
  const g = call.inverse ? ctx.inverses.get(call.callee) : ctx.program.functions.get(call.callee)
  const written = ctx.program.writes.get(call.callee)
  if (!g || !written || ctx.effectful.has(call.callee)) return undefined
  // the while loop is at the top level of the callee's body, which is not too large to copy
  if (countStatements(g.body) > PAIR_SERIES_MAX_STATEMENTS) return undefined
  const at = g.body.findIndex((s) => s.kind === 'while')
  if (at < 0 || callsHost((g.body[at] as WhileStmt).pre)) return undefined
  const n = ctx.counter.n
  const lanes = ctx.lanes
  const copies: Stmt[][] = []
  // (step \`hoist-lane-calls\`: an exact call of loop-invariant values runs once, before the groups)
  const hoisted = ctx.exact
    ? hoistLaneCalls(g, call, M, ctx.program, ctx.exact, ctx.effectful, `$pair${n}inv`)
    : undefined
  const gBody = hoisted?.body ?? g.body
  // (checks on: the lanes' small leaf calls inlined too, see the module comment)
  const body = ctx.checked ? inlineLeafCalls(gBody, ctx.program, ctx.inverses, ctx.leaves) : gBody
  for (let j = 0; j < lanes; j++) {
    const c = inlineCall(call, { ...g, body }, written, `$pair${n}${String.fromCharCode(97 + j)}$`)
    if (!c) return undefined
    copies.push(c)
  }
  if (!independent(copies[0]!, M.variable, ctx)) return undefined
  // with checks on, each lane ends (its loop, then what follows it) before the next one goes on,
  // and what the lanes run before their loops must end (see the module comment)
  // (and each iteration of the joint loop: a later element's iteration runs before an earlier
  // element's next one, which may be the one that fails)
  const w = copies[0]!.findIndex((x) => x.kind === 'while')
  if (ctx.checked && (mayNotEnd(copies[0]!.slice(0, w), ctx) || mayNotEnd((copies[0]![w] as WhileStmt).body, ctx)))
    return undefined
  ctx.counter.n++
  const dir = M.reverse ? -step : step
  // (inlining may put a computed argument before the body: the while is where g's is, shifted)
  const split = (body: Stmt[]) => {
    const w = body.findIndex((s) => s.kind === 'while')
    return { pre: body.slice(0, w), loop: body[w] as WhileStmt, post: body.slice(w + 1) }
  }
  // copy j runs iteration i + j·dir (every node copied: inlining substitutes the call's own
  // argument nodes, which the loop of the iterations left keeps)
  const parts = copies.map((c, j) =>
    split(rewriteBlock(c, (e) => (e.kind === 'var' && e.name === M.variable ? plus({ ...e }, j * dir) : { ...e }))),
  )
  const all = (f: (x: (typeof parts)[number]) => Expr): Expr => parts.map(f).reduce((x, y) => binary('&&', x, y))
  const joint: WhileStmt = {
    ...parts[0]!.loop,
    pre: all((x) => copyOf(x.loop.pre)),
    post: all((x) => copyOf(x.loop.post)),
    body: parts.flatMap((x) => withoutExits(copyBlock(x.loop.body))),
  }
  const loops: Stmt[] = [joint, ...parts.map((x) => x.loop)]
  const unroll = (b: Stmt[]) => (ctx.unroll ? unrollSwapsBlock(b) : b)
  const groups: ForStmt = {
    ...M,
    reverse: false,
    inclusive: true,
    start: copyOf(firstValue(M, step)),
    stop: plus(copyOf(lastValue(M, step)), -(lanes - 1) * dir),
    step: num(lanes * dir),
    body: ctx.checked
      ? [...parts.flatMap((x) => x.pre), ...unroll([joint]), ...parts.flatMap((x) => [...unroll([x.loop]), ...x.post])]
      : [...parts.flatMap((x) => x.pre), ...unroll(loops), ...parts.flatMap((x) => x.post)],
  }
  // the iterations left (fewer than `lanes`), in order (see `leftoverLoop`)
  const rest: ForStmt = leftoverLoop(M, step, lanes)
  // the groups (and the hoisted calls) run where the loop runs at least \`lanes\` iterations and
  // its first and last values do not wrap (\`rangeFits\`); elsewhere the loop as it was
  const fits = rangeFits(M, step, copyOf(firstValue(M, step)), copyOf(lastValue(M, step)), lanes, copyOf)
  const [original] = copyBlock([M])
  return [
    {
      kind: 'if',
      pre: fits,
      post: null,
      then: [...(hoisted?.before ?? []), groups, ...(hoisted?.after ?? []), rest],
      else: [original!],
      ...(M.loc ? { loc: M.loc } : {}),
    },
  ]
}

const copyOf = copyExpr
const copyBlock = (body: Stmt[]): Stmt[] => rewriteBlock(body, (x) => ({ ...x }))

/** `block` with its map loops of series paired (see the module comment). */
function pairBlock(block: Stmt[], ctx: Context): Stmt[] {
  return block.flatMap((s, k): Stmt[] => {
    switch (s.kind) {
      case 'for': {
        // (checks on: a loop whose range check follows it is left alone, the check reading the
        // range of the last loop of its variable)
        const next = block[k + 1]
        const ranged = next?.kind === 'assert' && next.check === 'loopRange'
        return (ranged ? undefined : pairLoop(s, ctx)) ?? [{ ...s, body: pairBlock(s.body, ctx) }]
      }
      case 'if':
        return [{ ...s, then: pairBlock(s.then, ctx), else: pairBlock(s.else, ctx) }]
      case 'while':
      case 'unchecked':
        return [{ ...s, body: pairBlock(s.body, ctx) } as Stmt]
      default:
        return [s]
    }
  })
}

/**
 * The program and inverses with the map loops of series paired in every function (see the
 * module comment); the callees are read as they are given (run this after `optimize`, and with
 * run-time checks on after the checks are placed, with `checked`: see the module comment).
 * `unrollSwaps` (default true): the joint loop
 * and the lanes' own loops after it are unrolled by two where their bodies swap (`unrollSwapsBlock`);
 * `lanes` (default `PAIR_SERIES_LANES`, at least 2): how many iterations run together; `checked`
 * (default false): the program's asserts are placed.
 */
export function pairSeries(
  program: Program,
  inverses: Map<string, FunctionDef>,
  {
    unrollSwaps = true,
    lanes = PAIR_SERIES_LANES,
    checked = false,
    hoistCalls = true,
  }: { unrollSwaps?: boolean; lanes?: number; checked?: boolean; hoistCalls?: boolean } = {},
): { program: Program; inverses: Map<string, FunctionDef> } {
  const ctx: Context = {
    checked,
    leaves: { n: 0 },
    program,
    inverses,
    effectful: effectfulFunctions([...program.functions.values(), ...inverses.values()]),
    counter: { n: 0 },
    unroll: unrollSwaps,
    lanes: Math.max(2, Math.floor(lanes)),
    exact: hoistCalls ? exactLaneFunctions(program) : undefined,
  }
  const each = (f: FunctionDef): FunctionDef => {
    const before = ctx.counter.n
    const body = pairBlock(f.body, ctx)
    return ctx.counter.n === before ? f : { ...f, body }
  }
  return {
    program: { ...program, functions: new Map([...program.functions].map(([n, d]) => [n, each(d)])) },
    inverses: new Map([...inverses].map(([n, d]) => [n, each(d)])),
  }
}
