/**
 * Pass `jam-iterations` (unroll-and-jam of a whole loop body: consecutive iterations of a loop
 * whose iterations are independent run interleaved, `JAM_ITERATIONS_LANES` (4) at a time,
 * statement by statement, their inner loops fused). A loop of step ±1 whose body computes
 * something per iteration in ancillas of its own around an inner recurrence, such as Horner's
 * rule at each point,
 *
 *     for j in 0..len(xs) {
 *       acc: f64[] <- zeros(len(c))
 *       for k in 1..len(c) { acc[k] += acc[k - 1] * xs[j] + c[k] }
 *       loss += acc[len(c) - 1]
 *       …
 *     }
 * becomes (shown for two lanes; `first`, `last`: the loop's first and last values; copy m runs
 * iteration j + m, its ancillas renamed `name$b`, `name$c`, …)
 *
 *     if (0 < len(xs) && len(xs) - 1 - 0 >= 1 && len(xs) - 1 - 0 <= 1073741824 && len(c) <= 65536, ~) {
 *       for j in 0..=len(xs) - 1 - 1 by 2 {
 *         acc: f64[] <- zeros(len(c))
 *         acc$b: f64[] <- zeros(len(c))
 *         for k in 1..len(c) {
 *           acc[k] += acc[k - 1] * xs[j] + c[k]
 *           acc$b[k] += acc$b[k - 1] * xs[j + 1] + c[k]
 *         }
 *         loss += acc[len(c) - 1]
 *         loss += acc$b[len(c) - 1]
 *         …
 *       }
 *       if (trips % 2 != 0, ~) {
 *         for j in first + (trips − trips % 2)..=last by 1 { (the body as written) }
 *       }
 *     } else { (the loop as written) }
 *
 * so that the recurrences, each a serial chain of dependent multiply–adds, overlap in the
 * processor (and share the loop's control and the loads of what they all read, `c[k]`). The
 * guard is pair-series' (`rangeFits`): the groups' bounds are computed from the loop's first and
 * last values, right only where the loop runs at least `lanes` iterations and its span does not
 * wrap; elsewhere the loop runs as written. The leftover loop runs only where iterations are left
 * (with none, its start `last ± 1` would wrap at the ends of the i32 range). The guard also tests
 * each array ancilla's length against `JAM_ITERATIONS_MAX_ANCILLA` (2¹⁶ elements: `lanes`
 * iterations' ancillas are live at once, and a program whose ancillas fit once must not run out
 * of memory jammed; the guard evaluates the lengths before the loop, so the length of an
 * allocation that may not run, under an \`if\` or in an inner loop, must read no element), and,
 * where the body writes an array parameter, `$apart` of it and every
 * other array parameter the loop accesses (the unchecked entry may pass one memory twice; see
 * `apart.ts`). The loop's range is evaluated again (guard, groups, leftover loop): it must read
 * nothing the body writes (a variable, an element; lengths do not change) and nothing that may
 * fail.
 *
 * Legality is proved, never assumed, and every result is bit for bit the program's: no operation
 * is reassociated, only statements of different iterations that touch different memory change
 * order. The body holds only updates (of a variable or an element), allocations and
 * deallocations, `if`s, `@unchecked` blocks and `for` loops, and nothing that may fail part-way
 * with checks off (host calls, i32 divisions and remainders, conversions to i32: wasm traps),
 * its arrays allocated at lengths alike in every iteration (so that where one allocation fails,
 * the group's first iteration's fails first, as the loop's first iteration does); names it
 * allocates are the iteration's own (the copies' are renamed). The jammed order runs each
 * statement of iteration j before the same statement of iterations j + 1, j + 2, …, and those
 * before iteration j's later statements (in a fused inner loop: each iteration's work at inner
 * index k in turn, then at the next k). So each variable or array of the function that the body
 * writes must be accessed (read or written) so that this order changes nothing:
 * - at *one statement* of the body: where that is a fused loop, an array at one index `±k + g`
 *   per inner iteration (g free of the loops' variables and of the iteration's names), so the
 *   iterations touch each element in their order and different inner iterations different
 *   elements; a variable not inside a fused loop (`loss += e * e`: the reduction keeps its order);
 * - an array at *one element per iteration*: every access at one index, free of the inner loops'
 *   variables, that each later copy (m steps on) moves by a non-zero constant (`g_xs[j]`);
 * - an array at elements *shared by all iterations* (an index free of the loop variable, a
 *   gradient summed over the points such as `g_c[k]` and `g_c[len(c) − 1]`): where two statements
 *   access it (one writing), the elements of the earlier one are proved apart from the later
 *   one's: two indices at a constant non-zero difference, or an index and a fused loop's column
 *   `±k + g` whose values lie on one side of it (their nearest end at a constant distance d ≥ 1;
 *   the guard then also requires that inner loop to run at most 2³⁰ + 1 iterations, so that the
 *   i32 values `±k + g` cannot wrap around to it).
 * Reads of what the body never writes impose nothing; `len(a)` reads no element (no array of the
 * function is reallocated: the body allocates only its own names).
 *
 * It runs only where it pays: some fused inner loop carries a recurrence through an ancilla of the
 * iteration (an element it writes and reads at another index, a scalar it updates and reads) —
 * the serial chain the jam overlaps — and the body is small (`JAM_ITERATIONS_MAX_STATEMENTS`).
 * With run-time checks on it runs too (\`CHECKED_PASSES\`; before \`hoist-invariants\`, see the
 * pass list): the checks are placed afterwards, on the jammed statements, and keep their
 * conditions, messages and locations. Each statement runs for the same iterations, on the values
 * it saw (the reordered pairs touch different memory, above), so each check decides as it did;
 * copy m's moved loop variable and renamed ancillas print as the source wrote them
 * (\`Substituted.shown\`, \`DeallocStmt.shown\`: \`xs[j]\` for \`xs[j + 1]\`, \`acc\` for \`acc$b\`), and
 * the scalars \`scalar-arrays\` made of an array ancilla are renamed by their array's new name, so
 * that its deallocation check (\`DeallocStmt.element\`) reads the copy's. The guard and the
 * leftover loop's \`if\` read only lengths, the range and \`$apart\`, which nothing writes: their
 * post-condition checks cannot fail. A violating program still fails at one of its failing
 * checks; which one comes first may change, as with \`interchange\` and \`jam\`: iteration j + 1's
 * check at a statement now precedes iteration j's at later statements (the error of another
 * violation than the program's first, where there are two; in the same iteration the first as
 * before; in a fused inner loop, iteration j + 1's check at inner index k precedes iteration j's
 * at a larger k, so two iterations failing at the same statement may report the later one). wasm checks bounds even with checks off: there a
 * violating program's out-of-bounds access may be reported for a later iteration's access before
 * an earlier iteration's, so which access the error names may change (still a
 * \`runtime/out-of-bounds\` error), as with other checks-off passes.
 */
import type { Arg, Expr, ForStmt, FunctionDef, Stmt } from '../ast.js'
import { readNames, walk } from '../check.js'
import { countStatements } from '../inline.js'
import { apartPairs, arraysAccessed, type KnownApart, knownApart, withApart } from './apart.js'
import { addPoly, constantDifference, hostCall, intLiteral, type Poly, polynomial } from './interchange.js'
import {
  copyExpr,
  firstValue,
  GUARDED_SPAN,
  lastValue,
  leftoverLoop,
  plusI32,
  rangeFits,
  tripCount,
} from './range-guard.js'
import { rewriteBlock, rewriteExpr } from './rewrite.js'
import { shownAsWritten } from '../printer.js'
import { elementName } from './scalar-arrays.js'

/** The largest body (statements, nested ones included) the pass jams: a larger one multiplies too much code. */
export const JAM_ITERATIONS_MAX_STATEMENTS = 48

/**
 * The largest body the pass jams with run-time checks on, where every statement carries its
 * asserts and the code generators' bounds-check hoisting (\`hoist-bounds\`) doubles each loop (a
 * version without checks, one with): the code of a function grows several times faster than
 * without checks, and a cpu function past V8's optimizing compiler's bytecode limit (60 KB) runs
 * interpreted, tens of times slower. Horner least squares with checks on (about 13 statements) compiles
 * to 32 KB of JavaScript jammed; an RNN's forward and uncompute nests, each jammed (in
 * \`rnnjam-wip\`, a dependence rule this pass does not have), to 84 KB, which V8 never optimized
 * (1.4 ms a call against 30 µs).
 */
export const JAM_ITERATIONS_MAX_CHECKED_STATEMENTS = 16

/**
 * The iterations the pass runs interleaved. On Horner least squares (degree 8, 256 points; in
 * one process against main, CPU time, loaded 2-core machine, medians of two runs of five) four
 * beat two on cpu — objective 1.46–1.50 µs against 1.76–1.97, gradient 7.31–7.43 against
 * 7.82–7.98 — and on the wasm gradient (5.44–5.51 against 5.95–6.18), and lost a little on the
 * wasm objective (1.83–1.86 against 1.66–1.69; 2.08 without the pass).
 */
export const JAM_ITERATIONS_LANES = 4

/**
 * The most elements an array ancilla of the body may have where the loop runs jammed (tested at
 * run time in the guard; the loop runs as written elsewhere): the `lanes` iterations' ancillas
 * are live at once, so a program whose ancillas fit in memory once must not fail for want of
 * room for four.
 */
export const JAM_ITERATIONS_MAX_ANCILLA = 2 ** 16

const num = (value: number): Expr => ({ kind: 'num', value, isFloat: false, type: 'i32' })
const plus = plusI32
const binary = (op: '+' | '-' | '%' | '&&' | '!=' | '<=', left: Expr, right: Expr): Expr => ({
  kind: 'binary',
  op,
  left,
  right,
  type: op === '&&' || op === '!=' || op === '<=' ? 'bool' : 'i32',
})
/** Whether an expression reads only variables, literals and \`len\` of arrays, through operators that cannot fail. */
function readsScalarsOnly(e: Expr): boolean {
  switch (e.kind) {
    case 'num':
    case 'bool':
    case 'var':
      return true
    case 'unary':
      return readsScalarsOnly(e.arg)
    case 'binary':
      return e.op !== '/' && e.op !== '%' && readsScalarsOnly(e.left) && readsScalarsOnly(e.right)
    case 'call':
      return e.callee === 'len' && e.args.length === 1 && e.args[0]!.kind === 'var'
    default:
      return false
  }
}
const copyOf = copyExpr
const copyBlock = (body: Stmt[]): Stmt[] => rewriteBlock(body, (x) => ({ ...x }))

/** `len(a)` as an atom of index polynomials (no array of the function changes length inside the body). */
const lenAtom = (e: Expr): Poly | undefined =>
  e.kind === 'call' && e.callee === 'len' && e.args.length === 1 && e.args[0]!.kind === 'var'
    ? new Map([[`len(${e.args[0]!.name})`, 1]])
    : undefined
const poly = (e: Expr): Poly | undefined => polynomial(e, lenAtom)

/** One access of a name of the function (not of the iteration) by the body. */
interface Access {
  /** The top-level statement of the body it is in. */
  at: number
  write: boolean
  /** The element's index, for an element (undefined: a variable, or the array used whole). */
  index?: Expr
  element: boolean
  /** The loop variables around it inside the body (the fused loop's first where it is in one). */
  loops: string[]
  /** Inside the fused loop of its statement. */
  fused: boolean
}

/**
 * Whether an expression may fail with checks off: a host call, an i32 division or remainder
 * (wasm traps on a zero divisor), a conversion to i32 (wasm traps out of range). A later
 * iteration's failure must not come before an earlier iteration's remaining statements.
 */
function mayFail(e: Expr | Arg): boolean {
  if (hostCall(e)) return true
  let found = false
  rewriteExpr(e, (x) => {
    if (x.kind === 'call' && (x.callee === 'div' || x.callee === 'i32' || x.callee === 'convert')) found = true
    if (x.kind === 'binary' && x.op === '%') found = true
    return x
  })
  return found
}

/**
 * `e` with each `len(a)` replaced by 0: what it reads besides the lengths of arrays (which the
 * body cannot change: it reallocates no array of the function).
 */
const withoutLengths = (e: Expr): Expr =>
  rewriteExpr(e, (x) =>
    x.kind === 'call' && x.callee === 'len' && x.args.length === 1 && x.args[0]!.kind === 'var' ? num(0) : x,
  ) as Expr

/** Whether the statements are of the kinds the pass handles (see the module comment), recursively. */
function handled(body: Stmt[]): boolean {
  return body.every((s) => {
    switch (s.kind) {
      case 'update':
        return (
          (s.target.kind === 'var' || s.target.kind === 'index') &&
          !mayFail(s.value) &&
          !mayFail(s.target) &&
          !(s.distinct ?? []).some(([a, b]) => mayFail(a) || mayFail(b))
        )
      case 'alloc':
      case 'dealloc':
        return s.value.kind !== 'emptystack' && !mayFail(s.value) && s.type?.kind !== 'stack'
      case 'if':
        return !mayFail(s.pre) && !(s.post && mayFail(s.post)) && handled(s.then) && handled(s.else)
      case 'unchecked':
        return handled(s.body)
      case 'for':
        return (
          !s.each &&
          intLiteral(s.step) !== undefined &&
          intLiteral(s.step) !== 0 &&
          ![s.start, s.stop].some(mayFail) &&
          handled(s.body)
        )
      default:
        return false
    }
  })
}

/** The names a block allocates and the variables of its loops. */
function boundNames(body: Stmt[]): { allocated: Set<string>; loopVars: Set<string> } {
  const allocated = new Set<string>()
  const loopVars = new Set<string>()
  walk(body, (s) => {
    if (s.kind === 'alloc') allocated.add(s.name)
    else if (s.kind === 'for') loopVars.add(s.variable)
  })
  return { allocated, loopVars }
}

/** Every name a function binds: parameters, allocations, loop variables. */
function functionNames(f: FunctionDef): Set<string> {
  const out = new Set(f.params.map((p) => p.name))
  walk(f.body, (s) => {
    if (s.kind === 'alloc') out.add(s.name)
    else if (s.kind === 'for') out.add(s.variable)
  })
  return out
}

/**
 * The accesses of the names not in `own` by the statement `s` (top-level position `at`):
 * elements with their index, variables, and arrays used whole. `fusedLoop`: the variable of the
 * statement's fused loop, when it is one.
 */
function collect(
  s: Stmt,
  at: number,
  own: ReadonlySet<string>,
  fusedLoop: string | undefined,
  out: Map<string, Access[]>,
) {
  const add = (name: string, a: Access) => {
    if (own.has(name)) return
    let l = out.get(name)
    if (!l) out.set(name, (l = []))
    l.push(a)
  }
  const expr = (e: Expr | Arg, write: boolean, loops: string[], fused: boolean): void => {
    switch (e.kind) {
      case 'var':
        add(e.name, { at, write, element: false, loops, fused })
        return
      case 'index':
        add(e.array.name, { at, write, index: e.index, element: true, loops, fused })
        expr(e.index, false, loops, fused)
        return
      case 'field':
      case 'neg':
        expr(e.target, write, loops, fused)
        return
      case 'unary':
        expr(e.arg, false, loops, fused)
        return
      case 'binary':
        expr(e.left, false, loops, fused)
        expr(e.right, false, loops, fused)
        return
      case 'call':
        // (len(a) reads no element: no array of the function changes length in the body)
        if (e.callee === 'len' && e.args.length === 1 && e.args[0]!.kind === 'var') return
        for (const x of e.args) expr(x, false, loops, fused)
        return
      default:
        return
    }
  }
  const stmt = (s: Stmt, loops: string[], fused: boolean): void => {
    switch (s.kind) {
      case 'update':
        expr(s.target, true, loops, fused)
        expr(s.value, false, loops, fused)
        for (const [a, b] of s.distinct ?? []) {
          expr(a, false, loops, fused)
          expr(b, false, loops, fused)
        }
        return
      case 'alloc':
      case 'dealloc':
        if (s.value.kind !== 'emptystack') expr(s.value, false, loops, fused)
        return
      case 'if':
        expr(s.pre, false, loops, fused)
        if (s.post) expr(s.post, false, loops, fused)
        for (const x of [...s.then, ...s.else]) stmt(x, loops, fused)
        return
      case 'unchecked':
        for (const x of s.body) stmt(x, loops, fused)
        return
      case 'for':
        for (const e of [s.start, s.stop, ...(s.step ? [s.step] : [])]) expr(e, false, loops, fused)
        for (const x of s.body) stmt(x, [...loops, s.variable], fused)
        return
      default:
        return
    }
  }
  if (fusedLoop !== undefined && s.kind === 'for') {
    for (const e of [s.start, s.stop, ...(s.step ? [s.step] : [])]) expr(e, false, [], false)
    for (const x of s.body) stmt(x, [s.variable], true)
  } else stmt(s, [], false)
}

/** Whether a polynomial reads one of `names` (in any monomial). */
const polyReads = (p: Poly, names: ReadonlySet<string>): boolean =>
  [...p.keys()].some((m) => (m ? m.split('*') : []).some((n) => names.has(n)))

/** `p` as `s·v + g` (s = ±1, g free of v), or undefined. */
function column(p: Poly, v: string): { s: 1 | -1; g: Poly } | undefined {
  const s = p.get(v)
  if (s !== 1 && s !== -1) return undefined
  const g = addPoly(p, new Map([[v, s]]), -1)
  if (polyReads(g, new Set([v]))) return undefined
  return { s, g }
}

/** A fused loop's range as index polynomials: its lowest and highest values (step ±1). */
function range(L: ForStmt): { lo: Poly; hi: Poly } | undefined {
  const step = intLiteral(L.step)
  if (step !== 1 && step !== -1) return undefined
  const a = poly(L.start),
    b = poly(L.stop)
  if (!a || !b) return undefined
  const one: Poly = new Map([['', 1]])
  // the last value as written: stop, or stop ∓ 1 for a half-open range
  const end = L.inclusive ? b : addPoly(b, one, -step)
  return step > 0 ? { lo: a, hi: end } : { lo: end, hi: a }
}

/**
 * Whether the elements `P` (one index) and the column `s·k + g` of fused loop `L` (k over its
 * range) are apart: the column's nearest end at a constant distance 1 ≤ d ≤ 2³⁰ from `P` (the
 * guard keeps the loop's span ≤ 2³⁰, so no value of the column wraps around to `P`).
 */
function apartFromColumn(P: Poly, col: { s: 1 | -1; g: Poly }, L: ForStmt): boolean {
  const r = range(L)
  if (!r) return false
  const at = (v: Poly) => addPoly(col.g, v, col.s)
  const top = at(col.s > 0 ? r.hi : r.lo),
    bottom = at(col.s > 0 ? r.lo : r.hi)
  const above = constantDifference(P, top)
  const below = constantDifference(bottom, P)
  const ok = (d: number | undefined) => d !== undefined && d >= 1 && d <= GUARDED_SPAN
  return ok(above) || ok(below)
}

/** What the proof of one loop found: the fused positions, and the fused loops whose span the guard bounds. */
interface Plan {
  fused: Set<number>
  guarded: Set<number>
  /** The names of the function the body writes. */
  written: Set<string>
}

/** The plan of jamming `lanes` iterations of loop `M` (direction `dir`), or undefined where not proved legal or not paying. */
function prove(M: ForStmt, dir: number, lanes: number, maxStatements: number): Plan | undefined {
  const body = M.body
  if (!handled(body) || countStatements(body) > maxStatements) return undefined
  const { allocated, loopVars } = boundNames(body)
  const v = M.variable
  if (allocated.has(v) || loopVars.has(v) || [...allocated].some((n) => loopVars.has(n))) return undefined
  const own = new Set([...allocated, ...loopVars, v])
  // the names of the function the body writes
  const written = new Set<string>()
  let bad = false
  walk(body, (s) => {
    if (s.kind === 'update') {
      const r = s.target.kind === 'var' ? s.target.name : s.target.kind === 'index' ? s.target.array.name : undefined
      if (r === undefined) bad = true
      else if (!own.has(r)) written.add(r)
      else if (r === v || loopVars.has(r)) bad = true
    } else if (s.kind === 'dealloc' && !allocated.has(s.name)) bad = true
  })
  if (bad || written.size === 0) return undefined
  // the loop's range is evaluated again (the guard, the groups, the leftover loop): it must read
  // nothing the body writes (a variable, an element, a length) and must not fail or call the host
  for (const e of [M.start, M.stop]) {
    if (mayFail(e)) return undefined
    if ([...readNames(withoutLengths(e))].some((n) => written.has(n))) return undefined
  }
  // an array allocation (which fails on a bad length) sized alike in every iteration: where one fails,
  // the first iteration's fails, before the loop did anything, as the loop as written does
  walk(body, (s) => {
    if (s.kind !== 'alloc' || s.value.kind === 'emptystack' || (s.type ?? s.declared)?.kind !== 'array') return
    const reads = readNames(s.value)
    if ([...reads].some((n) => own.has(n) || written.has(n))) bad = true
  })
  if (bad) return undefined
  // the inner loops that fuse: straight-line updates, ranges reading only what the body never writes
  const fused = new Set<number>()
  body.forEach((s, t) => {
    if (s.kind !== 'for' || !s.body.every((x) => x.kind === 'update')) return
    const reads = new Set<string>()
    for (const e of [s.start, s.stop, ...(s.step ? [s.step] : [])]) readNames(e, reads)
    if ([...reads].some((n) => own.has(n) || written.has(n))) return
    fused.add(t)
  })
  // pays: a fused loop carries a recurrence through the iteration's own names
  const pays = [...fused].some((t) => {
    const L = body[t] as ForStmt
    const targets = new Set<string>()
    for (const s of L.body)
      if (s.kind === 'update')
        targets.add(s.target.kind === 'var' ? s.target.name : (s.target as { array: { name: string } }).array.name)
    return L.body.some((s) => {
      if (s.kind !== 'update') return false
      const reads = readNames(s.value)
      return [...reads].some((n) => allocated.has(n) && targets.has(n))
    })
  })
  if (!pays) return undefined
  const uses = new Map<string, Access[]>()
  body.forEach((s, t) => collect(s, t, own, fused.has(t) ? (s as ForStmt).variable : undefined, uses))
  const iteration = new Set([...allocated, ...loopVars, v])
  const guarded = new Set<number>()
  for (const name of written) {
    const all = uses.get(name) ?? []
    if (all.length === 0) continue
    // an array used whole, or an element index that is no polynomial: not proved
    const polys = all.map((a) => (a.element && a.index ? poly(a.index) : undefined))
    const elements = all.every((a) => a.element) && polys.every((p) => p !== undefined)
    // (1) at one statement
    const at = all[0]!.at
    if (all.every((a) => a.at === at)) {
      if (!fused.has(at) && all.every((a) => !a.fused)) continue
      // in a fused loop: an array at one column ±k + g per inner iteration
      const k = (body[at] as ForStmt).variable
      if (elements && all.every((a) => a.fused && a.loops.length === 1)) {
        const keys = new Set(polys.map((p) => key(p!)))
        const col = column(polys[0]!, k)
        if (keys.size === 1 && col && !polyReads(col.g, iteration)) continue
      }
      // (else as below: an element per iteration)
    }
    if (!elements) return undefined
    // (2) one element per iteration, moved by the next one
    const keys = new Set(polys.map((p) => key(p!)))
    if (keys.size === 1 && all.every((a) => a.loops.length === 0 || (a.fused && a.loops.length === 1))) {
      const p = polys[0]!
      const inner = new Set([...allocated, ...loopVars])
      if (!polyReads(p, inner)) {
        // (each later copy m = 1 … lanes − 1 moves it by m steps: P is linear in v, so copies m
        // and m' differ as copies 0 and |m − m'| do)
        const apart = (m: number) => {
          const moved = poly(
            rewriteExpr(all[0]!.index!, (e) =>
              e.kind === 'var' && e.name === v ? plus({ ...e }, m * dir) : e,
            ) as Expr,
          )
          const d = moved && constantDifference(moved, p)
          return d !== undefined && d !== 0
        }
        if (Array.from({ length: lanes - 1 }, (_, m) => m + 1).every(apart)) continue
      }
    }
    // (3) elements shared by all iterations: each statement's apart from every later one's
    if (polys.some((p) => polyReads(p!, new Set([...allocated, v])))) return undefined
    const byAt = new Map<number, Array<{ p: Poly; a: Access }>>()
    all.forEach((a, i) => {
      let l = byAt.get(a.at)
      if (!l) byAt.set(a.at, (l = []))
      l.push({ p: polys[i]!, a })
    })
    // each statement's elements: one index (outside any loop), or a fused loop's column
    type Elements = { kind: 'one'; p: Poly } | { kind: 'column'; col: { s: 1 | -1; g: Poly }; t: number }
    const sets = new Map<number, { el: Elements; write: boolean }>()
    for (const [t, l] of byAt) {
      const write = l.some((x) => x.a.write)
      const ks = new Set(l.map((x) => key(x.p)))
      if (ks.size !== 1) return undefined
      if (l.every((x) => x.a.loops.length === 0)) sets.set(t, { el: { kind: 'one', p: l[0]!.p }, write })
      else if (fused.has(t) && l.every((x) => x.a.fused && x.a.loops.length === 1)) {
        const col = column(l[0]!.p, (body[t] as ForStmt).variable)
        if (!col || polyReads(col.g, iteration)) return undefined
        sets.set(t, { el: { kind: 'column', col, t }, write })
      } else return undefined
    }
    const ts = [...sets.keys()].sort((x, y) => x - y)
    for (const [i, t1] of ts.entries())
      for (const t2 of ts.slice(i + 1)) {
        const x = sets.get(t1)!,
          y = sets.get(t2)!
        if (!x.write && !y.write) continue
        if (x.el.kind === 'one' && y.el.kind === 'one') {
          const d = constantDifference(x.el.p, y.el.p)
          if (d === undefined || d === 0) return undefined
        } else if (x.el.kind === 'column' && y.el.kind === 'column') return undefined
        else {
          const one = (x.el.kind === 'one' ? x.el : y.el) as { p: Poly }
          const col = (x.el.kind === 'column' ? x.el : y.el) as { col: { s: 1 | -1; g: Poly }; t: number }
          const L = body[col.t] as ForStmt
          if (!apartFromColumn(one.p, col.col, L)) return undefined
          guarded.add(col.t)
        }
      }
  }
  return { fused, guarded, written }
}

/** Every expression of a block (of the kinds `handled` accepts), nested ones' included. */
function expressions(body: Stmt[], out: Expr[] = []): Expr[] {
  for (const s of body)
    switch (s.kind) {
      case 'update':
        out.push(s.target as Expr, s.value, ...(s.distinct ?? []).flat())
        break
      case 'alloc':
      case 'dealloc':
        if (s.value.kind !== 'emptystack') out.push(s.value)
        break
      case 'if':
        out.push(s.pre, ...(s.post ? [s.post] : []))
        expressions(s.then, out)
        expressions(s.else, out)
        break
      case 'unchecked':
        expressions(s.body, out)
        break
      case 'for':
        out.push(s.start, s.stop, ...(s.step ? [s.step] : []))
        expressions(s.body, out)
        break
    }
  return out
}

const key = (p: Poly): string => JSON.stringify([...p].sort())

/** The body of the next iteration: the loop variable one step on, the iteration's names renamed (`rename`). */
function nextIteration(body: Stmt[], v: string, dir: number, rename: ReadonlyMap<string, string>): Stmt[] {
  // (a moved or renamed name prints as the source wrote it in run-time errors, \`Substituted.shown\`:
  // with checks on, a check of copy m reads as the same check of the loop as written)
  const renamed = rewriteBlock(body, (e) => {
    if (e.kind === 'var' && e.name === v) return shownAsWritten(plus({ ...e }, dir), e.shown ?? e.name)
    if (e.kind === 'var' && rename.has(e.name)) return { ...e, name: rename.get(e.name)!, shown: e.shown ?? e.name }
    if (e.kind === 'index') {
      const array = rename.has(e.array.name)
        ? { ...e.array, name: rename.get(e.array.name)!, shown: e.array.shown ?? e.array.name }
        : { ...e.array }
      const checkedAs =
        e.checkedAs && rename.has(e.checkedAs.name)
          ? { checkedAs: { ...e.checkedAs, name: rename.get(e.checkedAs.name)! } }
          : {}
      return { ...e, array, ...checkedAs }
    }
    return { ...e }
  })
  const names = (b: Stmt[]): Stmt[] =>
    b.map((s): Stmt => {
      switch (s.kind) {
        case 'alloc':
          return { ...s, name: rename.get(s.name) ?? s.name }
        case 'dealloc': {
          const element =
            s.element && rename.has(s.element.array)
              ? { element: { ...s.element, array: rename.get(s.element.array)! } }
              : {}
          // (the name the check's message gives: the array's, for an element of one)
          const checked = s.element ? s.element.array : s.name
          const shown = rename.has(checked) ? { shown: s.shown ?? checked } : {}
          return { ...s, name: rename.get(s.name) ?? s.name, ...element, ...shown }
        }
        case 'if':
          return { ...s, then: names(s.then), else: names(s.else) }
        case 'unchecked':
        case 'for':
          return { ...s, body: names(s.body) } as Stmt
        default:
          return s
      }
    })
  return names(renamed)
}

/** The statements replacing loop `M` of function `f` (`taken`: the names bound in `f`), or undefined. */
function jamLoop(
  M: ForStmt,
  taken: Set<string>,
  f: FunctionDef,
  known: KnownApart,
  maxStatements: number,
): Stmt[] | undefined {
  const step = intLiteral(M.step)
  if ((step !== 1 && step !== -1) || M.each) return undefined
  const dir = M.reverse ? -step : step
  const lanes = JAM_ITERATIONS_LANES
  const plan = prove(M, dir, lanes, maxStatements)
  if (!plan) return undefined
  const { allocated } = boundNames(M.body)
  // the array ancillas' lengths, capped in the guard (`JAM_ITERATIONS_MAX_ANCILLA`); the guard
  // evaluates them before the loop, so the length of an allocation that may not run (under an
  // \`if\`, in an inner loop) must read no element and call nothing but \`len\` (found by review
  // 17g: \`zeros(ns[0])\` in a branch never taken read \`ns[0]\` of an empty \`ns\`, a false
  // out-of-bounds error on wasm)
  const lengths: Expr[] = []
  let unsized = false
  const visit = (body: Stmt[], always: boolean): void => {
    for (const s of body) {
      if (s.kind === 'alloc' && (s.type ?? s.declared)?.kind === 'array') {
        const n = s.value.kind === 'call' && s.value.callee === 'zeros' && s.value.args.length === 1 && s.value.args[0]
        if (n && (always || readsScalarsOnly(n))) lengths.push(n)
        else unsized = true
      } else if (s.kind === 'routine' || s.kind === 'unchecked' || s.kind === 'invblock') visit(s.body, always)
      else if (s.kind === 'if') {
        visit(s.then, false)
        visit(s.else, false)
      } else if (s.kind === 'for' || s.kind === 'while') visit(s.body, false)
    }
  }
  visit(M.body, true)
  if (unsized) return undefined
  // copy m (1 … lanes − 1) runs iteration j + m·dir, its ancillas renamed `name$b`, `name$c`, …
  const copies = [copyBlock(M.body)]
  // (the scalars that \`scalar-arrays\` made of a small array ancilla keep their names' pattern,
  // \`elementName(array$b, k)\`: the array's deallocation check, \`DeallocStmt.element\`, names them so)
  const elementArrays = new Map<string, number>()
  walk(M.body, (s) => {
    if (s.kind === 'dealloc' && s.element) elementArrays.set(s.element.array, s.element.length)
  })
  for (let m = 1; m < lanes; m++) {
    const rename = new Map<string, string>()
    const suffix = `$${String.fromCharCode(97 + m)}`
    for (const [a, length] of elementArrays) {
      const names = (b: string) => Array.from({ length }, (_, k) => elementName(b, k))
      let r = `${a}${suffix}`
      while (taken.has(r) || names(r).some((n) => taken.has(n))) r += suffix
      taken.add(r)
      rename.set(a, r)
      names(a).forEach((n, k) => {
        const to = elementName(r, k)
        taken.add(to)
        rename.set(n, to)
      })
    }
    for (const n of allocated) {
      if (rename.has(n)) continue
      let r = `${n}${suffix}`
      while (taken.has(r)) r += suffix
      taken.add(r)
      rename.set(n, r)
    }
    copies.push(nextIteration(M.body, M.variable, m * dir, rename))
  }
  const jammed: Stmt[] = copies[0]!.flatMap((a, t): Stmt[] => {
    const all = copies.map((c) => c[t]!)
    if (plan.fused.has(t) && a.kind === 'for') return [{ ...a, body: all.flatMap((x) => (x as ForStmt).body) }]
    return all
  })
  const pairs: ForStmt = {
    ...M,
    reverse: false,
    inclusive: true,
    start: copyOf(firstValue(M, step)),
    stop: plus(copyOf(lastValue(M, step)), -(lanes - 1) * dir),
    step: num(lanes * dir),
    body: jammed,
  }
  // the iterations left (fewer than `lanes`), in order (see `leftoverLoop`)
  const rest: ForStmt = { ...leftoverLoop(M, step as 1 | -1, lanes), body: copyBlock(M.body) }
  // the pairs run where the loop runs at least two iterations, its first and last values do not
  // wrap, and each inner loop a proof needs runs at most 2³⁰ + 1 iterations (see the module comment)
  let fits = rangeFits(M, step, copyOf(firstValue(M, step)), copyOf(lastValue(M, step)), lanes, copyOf)
  for (const t of [...plan.guarded].sort((x, y) => x - y)) {
    const L = M.body[t] as ForStmt
    const s = intLiteral(L.step) as 1 | -1
    fits = binary('&&', fits, rangeFits(L, s, copyOf(firstValue(L, s)), copyOf(lastValue(L, s)), 1, copyOf))
  }
  for (const n of lengths) fits = binary('&&', fits, binary('<=', copyOf(n), num(JAM_ITERATIONS_MAX_ANCILLA)))
  // two array parameters may be one memory (through the unchecked entry): the jammed loop runs
  // where each array of the function the body writes is apart from every other array the loop
  // accesses (unless an enclosing \`if\` tested that), the loop as written elsewhere
  const accessed = new Set<string>()
  for (const e of [M.start, M.stop, ...expressions(M.body)]) arraysAccessed(e, accessed)
  const apart = apartPairs(f, plan.written, accessed, known)
  if (apart.length) fits = withApart(fits, apart, f)
  const [original] = copyBlock([M])
  // the leftover loop runs only where iterations are left: where none is (trips a multiple of
  // `lanes`), its start `last + dir` would wrap at the end of the i32 range (2³¹ − 1 + 1 = −2³¹)
  // and the loop would run over the whole range
  const left: Stmt = {
    kind: 'if',
    pre: binary('!=', binary('%', tripCount(M, step as 1 | -1), num(lanes)), num(0)),
    post: null,
    then: [rest],
    else: [],
    ...(M.loc ? { loc: M.loc } : {}),
  }
  return [
    {
      kind: 'if',
      pre: fits,
      post: null,
      then: [pairs, left],
      else: [original!],
      asWritten: true,
      ...(M.loc ? { loc: M.loc } : {}),
    },
  ]
}

/**
 * `block` (of function `f`) with its loops jammed where proved legal and paying (`taken`: the
 * names bound in the function; `known`: the pairs of array parameters the enclosing \`if\`s proved
 * apart, see `apart.ts`; `maxStatements`: the largest body it jams).
 */
export function jamIterationsBlock(
  block: Stmt[],
  taken: Set<string>,
  f: FunctionDef,
  known: KnownApart = new Set(),
  maxStatements: number = JAM_ITERATIONS_MAX_STATEMENTS,
  budget: { left: number } = { left: Number.POSITIVE_INFINITY },
): Stmt[] {
  return block.flatMap((s): Stmt[] => {
    switch (s.kind) {
      case 'for': {
        const done = jamLoop(s, taken, f, known, Math.min(maxStatements, budget.left))
        if (done) {
          budget.left -= countStatements(s.body)
          return done
        }
        return [{ ...s, body: jamIterationsBlock(s.body, taken, f, known, maxStatements, budget) }]
      }
      case 'if':
        return [
          {
            ...s,
            then: jamIterationsBlock(s.then, taken, f, knownApart(s.pre, known), maxStatements, budget),
            else: s.asWritten ? s.else : jamIterationsBlock(s.else, taken, f, known, maxStatements, budget),
          },
        ]
      case 'while':
      case 'unchecked':
        return [{ ...s, body: jamIterationsBlock(s.body, taken, f, known, maxStatements, budget) } as Stmt]
      default:
        return [s]
    }
  })
}

/**
 * The function with its loops of independent iterations jammed where legal and paying (see the
 * module comment), bodies of at most \`maxStatements\` statements, and at most \`perFunction\`
 * statements of jammed bodies in all (with run-time checks on both are
 * \`JAM_ITERATIONS_MAX_CHECKED_STATEMENTS\`: three jammed Horner loops in one function compiled to
 * 97 KB of JavaScript, which V8 did not optimize, 15–38× slower: review 18c).
 */
export function jamIterations(
  f: FunctionDef,
  maxStatements: number = JAM_ITERATIONS_MAX_STATEMENTS,
  perFunction: number = Number.POSITIVE_INFINITY,
): FunctionDef {
  return {
    ...f,
    body: jamIterationsBlock(f.body, functionNames(f), f, new Set(), maxStatements, { left: perFunction }),
  }
}
