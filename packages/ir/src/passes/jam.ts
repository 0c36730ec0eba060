/**
 * Pass `jam` (unroll-and-jam: two consecutive iterations of a loop share one pass of its inner
 * loop). A loop of step ±1 whose body is counter steps, one inner loop of work, then counter
 * steps — the shape `interchange` leaves, the column loop innermost —
 *
 *     for i in m - 2..=j by -1 {
 *       for l in 0..n { ROT(x[i + m * l], x[i + 1 + m * l], theta[k]) }
 *       INC(k)
 *     }
 * becomes
 *     for i in m - 2..=j + 1 by -2 {
 *       for l in 0..n {
 *         ROT(x[i + m * l], x[i + 1 + m * l], theta[k])
 *         ROT(x[i - 1 + m * l], x[i + m * l], theta[k + 1])
 *       }
 *       INC(k)
 *       INC(k)
 *     }
 *     if ((m - 2 - j + 1) % 2 == 1, ~) {
 *       for i in j..=j { for l in 0..n { ROT(x[i + m * l], x[i + 1 + m * l], theta[k]) }; INC(k) }
 *     }
 *
 * so that the element the two rotations share (row i of column l) stays in a register between
 * them, and each pass over the columns does twice the work. The second copy of the work reads
 * the loop variable one step on and each counter `k` as `k + d`, d what one iteration's steps
 * add to it; the steps of both iterations follow the inner loop (before it, those that preceded
 * it). An odd trip count leaves the last iteration, run as it was after the pairs.
 *
 * Legality is proved, never assumed. The work (the inner loop's body) is straight-line updates
 * of array elements and bijection calls whose `inout` arguments are array elements, as in
 * `interchange`; no host calls; the ranges of both loops read neither the counters nor what the
 * work writes (the inner one not the outer loop's variable either). Jamming runs the second
 * iteration's column-l work before the first iteration's work on the columns after l, so each
 * array the work writes must be accessed (by every work statement) either
 * - *by column* (`interchange`'s test, with the loops around the outer one in the bounds): at
 *   `g + c·l`, one stride `c` free of the outer loop's variable and of the counters, and
 *   `0 ≤ g ≤ c − 1`; then the work on column l touches only column l, and the only reordered
 *   pairs are on different columns; or
 * - *at one element per iteration*: every access at one index, free of the inner loops'
 *   variables, that the second copy moves by a non-zero constant; then each copy touches its own
 *   element, in the order of l as before.
 * Arrays the work only reads, and scalars (it writes none), impose nothing. As in \`interchange\`,
 * the test takes distinct names for distinct memory: where an array parameter the work writes and
 * another array parameter the work or the ranges access are not known apart (an enclosing \`if\`,
 * such as \`interchange\`'s guard, tested them), the jammed loop runs under \`$apart\` tests and the
 * loop as written (a copy) in the \`else\` branch (see \`apart.ts\`). The pass runs only
 * where it pays (the second copy accesses an element the first accesses in the same column).
 * With run-time checks on it runs too (`CHECKED_PASSES`): the checks are placed afterwards, on
 * the jammed statements, and keep their conditions, messages and locations (the second copy's
 * `theta[k + 1]` is the element the next iteration's `theta[k]` was); each work statement runs
 * for the same iterations, in an order whose differences commute (above), so each check sees
 * the values it saw; the leftover iteration's `if` reads only the ranges, which the work does not
 * write. A violating program still fails at one of its failing checks; which one comes first may
 * change: the second iteration's check on column l now precedes the first's on the columns after
 * l (the error of another violation than the program's first, where there are two). The
 * second copy names an element the first also accesses in the first copy's words (above,
 * `x[i + m * l]` for `x[i - 1 + 1 + m * l]`), so that the code generators' store-to-load
 * forwarding sees one element.
 *
 * Code size (cpu backend, not yet a rule of the pass): jamming roughly triples the code of the
 * loop (the pairs and the leftover iteration). On the unitary multiply at M = N = 16, the
 * un-jammed `i_umm` compiles to 369 bytes of V8 bytecode and the jammed one to 1015, over V8's
 * inlining limit (460): a caller that inlined the small function (and specialised it to its
 * arrays) calls the large one, and the objective ran 1.05× plain TS un-jammed, 1.17× jammed
 * (1.27× before the shared element was named alike); at M = N = 64, 1.17× un-jammed and 0.78–0.85×
 * jammed; the gradient, whose functions are too large to inline either way, gains from the pass
 * at both sizes (M = 16: 4.1× un-jammed, 3.45× jammed). Medians of three runs each on a loaded
 * 2-core machine. A rule that keeps small functions small (e.g. the jammed loop outlined into a
 * function of its own, called when the inner loop runs long) would remove the M = 16 cost.
 */
import type { Arg, Expr, ForStmt, FunctionDef, IndexExpr, Stmt } from '../ast.js'
import { readNames } from '../check.js'
import type { Registry } from '../registry.js'
import { apartPairs, arraysAccessed, type KnownApart, knownApart, withApart } from './apart.js'
import { rewriteBlock, rewriteExpr } from './rewrite.js'
import { printAsWritten, shownAsWritten } from '../printer.js'
import {
  accesses,
  addPoly,
  type Bound,
  byColumn,
  hostCall,
  intLiteral,
  loopBound,
  polynomial,
  type Work,
} from './interchange.js'
import { copyExpr, firstValue, lastValue, plusI32, rangeFits } from './range-guard.js'

const num = (value: number): Expr => ({ kind: 'num', value, isFloat: false, type: 'i32' })
/** `e + c`, folded where `e` is a literal (see `range-guard.ts`). */
const plus = plusI32
const binary = (op: '-' | '+' | '%' | '==', left: Expr, right: Expr): Expr => ({
  kind: 'binary',
  op,
  left,
  right,
  type: op === '==' ? 'bool' : 'i32',
})

/** A counter step: `c += d`, `c -= d` (d an integer literal), `INC(c)`, `DEC(c)` and their uncalls; what it adds. */
function stepOf(s: Stmt, loopVar: string): { name: string; by: number } | undefined {
  if (s.kind === 'update' && s.target.kind === 'var' && s.target.type === 'i32' && s.target.name !== loopVar) {
    const d = s.value.kind === 'num' && !s.value.isFloat ? s.value.value : undefined
    if (d === undefined || !Number.isInteger(d) || (s.op !== '+=' && s.op !== '-=')) return undefined
    return { name: s.target.name, by: s.op === '+=' ? d : -d }
  }
  if (s.kind === 'callstmt' && s.target === 'bijection' && (s.callee === 'INC' || s.callee === 'DEC')) {
    const a = s.args[0]
    if (s.args.length !== 1 || a?.kind !== 'var' || a.type !== 'i32' || a.name === loopVar) return undefined
    return { name: a.name, by: (s.callee === 'INC') !== s.inverse ? 1 : -1 }
  }
  return undefined
}

/** The bijection spec a call runs (its inverse's, for an uncall). */
function specOf(s: Extract<Stmt, { kind: 'callstmt' }>, registry: Registry) {
  let spec = registry.bijection(s.callee)
  if (s.inverse && spec.inverse !== 'self') spec = registry.bijection(spec.inverse)
  return spec
}

/** The statements replacing loop `M` (bounds: those of the loops around it), or undefined where jamming is not proved legal. */
function jamLoop(
  M: ForStmt,
  outer: ReadonlyMap<string, Bound>,
  registry: Registry,
  f: FunctionDef,
  known: KnownApart,
): Stmt[] | undefined {
  const step = intLiteral(M.step)
  if ((step !== 1 && step !== -1) || M.each) return undefined
  const dir = M.reverse ? -step : step
  // body: steps, one loop, steps
  const at = M.body.findIndex((s) => s.kind === 'for')
  if (at < 0) return undefined
  const L = M.body[at] as ForStmt
  const pre = M.body.slice(0, at),
    post = M.body.slice(at + 1)
  const shift = new Map<string, number>()
  for (const s of [...pre, ...post]) {
    const st = stepOf(s, M.variable)
    if (!st) return undefined
    shift.set(st.name, (shift.get(st.name) ?? 0) + st.by)
  }
  const counters = new Set(shift.keys())
  const lStep = intLiteral(L.step)
  if (lStep === undefined || lStep === 0 || L.each || counters.has(L.variable) || L.variable === M.variable)
    return undefined
  // the work: straight-line updates of elements and bijection calls on elements
  const written = new Set<string>()
  const exprs: Array<Expr | Arg> = []
  for (const s of L.body) {
    if (s.kind === 'update') {
      if (s.target.kind !== 'index') return undefined
      written.add(s.target.array.name)
      exprs.push(s.target, s.value)
    } else if (s.kind === 'callstmt') {
      if (s.target !== 'bijection') return undefined
      const spec = specOf(s, registry)
      for (const [i, a] of s.args.entries())
        if (spec.roles[i] === 'inout') {
          if (a.kind !== 'index') return undefined
          written.add(a.array.name)
        }
      exprs.push(...s.args)
    } else return undefined
  }
  if (written.size === 0) return undefined
  const ranges = (x: ForStmt): Expr[] => [x.start, x.stop, ...(x.step ? [x.step] : [])]
  if ([...exprs, ...ranges(M), ...ranges(L)].some(hostCall)) return undefined
  const mReads = new Set<string>()
  for (const e of ranges(M)) readNames(e, mReads)
  const lReads = new Set<string>()
  for (const e of ranges(L)) readNames(e, lReads)
  if ([...counters, ...written].some((n) => mReads.has(n) || lReads.has(n)) || lReads.has(M.variable)) return undefined
  if ([...written].some((n) => counters.has(n) || n === M.variable || n === L.variable)) return undefined
  // the second copy: the loop variable one step on, each counter moved by its shift
  const second: Map<string, number> = new Map([[M.variable, dir], ...shift])
  // (the moved name prints as the source wrote it in run-time errors: `Substituted.shown`)
  const moveVar = (e: Expr | Arg): Expr | Arg =>
    e.kind === 'var' && second.has(e.name) ? shownAsWritten(plus(e, second.get(e.name)!), e.shown ?? e.name) : e
  const bounds = new Map(outer)
  bounds.set(M.variable, loopBound(M, depthIn(outer)))
  bounds.set(L.variable, loopBound(L, depthIn(outer) + 1))
  const block = L.body
  const work: Work = { stmt: L.body[0]!, block, bounds }
  let pays = false
  for (const array of written) {
    const uses = exprs.flatMap((e) => accesses(e)).filter((a) => a.array.name === array)
    const column =
      byColumn(
        uses.map((a) => ({ a, w: work })),
        L.variable,
      ) &&
      uses.every(
        (a) => ![...readNames(a.index)].some((n) => n !== L.variable && second.has(n) && strideReads(a, n, L.variable)),
      )
    if (column) {
      // pays: the second copy touches an element the first touches
      const keys = new Set(uses.map((a) => key(polynomial(a.index)!)))
      if (uses.some((a) => keys.has(key(polynomial(rewriteExpr(a.index, moveVar) as Expr)!)))) pays = true
      continue
    }
    if (!oneElement(uses, second, L.variable)) return undefined
  }
  if (!pays) return undefined
  // the second copy names an element the first also accesses in the first copy's words (`x[i]`
  // for `x[i - 1 + 1]`: equal polynomials are equal i32 values, wrapping included), so that the
  // code generators see one element and keep its value in a register from one copy to the next
  const firstIndex = new Map<string, Expr>()
  for (const a of exprs.flatMap((e) => accesses(e))) {
    const p = polynomial(a.index)
    const k = p && `${a.array.name}:${key(p)}`
    if (k && !firstIndex.has(k)) firstIndex.set(k, a.index)
  }
  const sameElement = (e: Expr | Arg): Expr | Arg => {
    if (e.kind !== 'index') return e
    const p = polynomial(e.index)
    const same = p && firstIndex.get(`${e.array.name}:${key(p)}`)
    // (a copy of it: no node of the IR is shared between two statements)
    return same ? { ...e, index: shownAsWritten(rewriteExpr(same, (x) => x) as Expr, printAsWritten(e.index)) } : e
  }
  const copy2 = rewriteBlock(L.body, (e) => sameElement(moveVar(e)))
  const pairs: ForStmt = {
    ...M,
    reverse: false,
    inclusive: true,
    start: first(M, step),
    stop: plus(last(M, step), -dir),
    step: num(2 * dir),
    body: [...pre, { ...L, body: [...L.body, ...copy2] }, ...post, ...pre, ...post],
  }
  const x = dir > 0 ? binary('-', last(M, step), first(M, step)) : binary('-', first(M, step), last(M, step))
  const odd = binary('==', binary('%', plus(x, 1), num(2)), num(1))
  const loc = M.loc ? { loc: M.loc } : {}
  const rest: ForStmt = { ...M, reverse: false, inclusive: true, start: last(M, step), stop: last(M, step), step: null }
  // (the pairs run where the loop runs at least two iterations and its first and last values do
  // not wrap: \`rangeFits\`; elsewhere the loop as it was)
  const jammed: Stmt[] = [
    {
      kind: 'if',
      pre: rangeFits(M, step as 1 | -1, copy(first(M, step)), copy(last(M, step)), 2, copy),
      post: null,
      then: [pairs, { kind: 'if', pre: odd, post: null, then: [rest], else: [], ...loc }],
      else: rewriteBlock([M], (e) => e),
      sameWork: true,
      ...loc,
    },
  ]
  // two array parameters may be one memory: the jammed loop runs where each array the work writes
  // is apart from every other array it or the ranges access (unless an enclosing \`if\` tested
  // that), the loop as it was elsewhere (a copy: no node of the IR is shared between two statements)
  const accessed = new Set<string>()
  for (const e of [...exprs, ...ranges(M), ...ranges(L)]) arraysAccessed(e, accessed)
  const apart = apartPairs(f, written, accessed, known)
  if (!apart.length) return jammed
  return [
    {
      kind: 'if',
      pre: withApart(undefined, apart, f),
      post: null,
      then: jammed,
      asWritten: true,
      else: rewriteBlock([M], (e) => e),
      ...loc,
    },
  ]
}

/** A copy of an expression (no node of the IR is shared between two statements). */
const copy = copyExpr
/** The first and last values the loop's variable takes (step ±1; see `range-guard.ts`). */
const first = firstValue
const last = lastValue

/** The depth of a loop inside those of `bounds`. */
const depthIn = (bounds: ReadonlyMap<string, Bound>): number =>
  Math.max(0, ...[...bounds.values()].map((b) => b.depth)) + 1

const key = (p: Map<string, number>): string => JSON.stringify([...p].sort())

/** Whether a (by-column) access's stride reads `n`: the part of its index with `l` in it. */
function strideReads(a: IndexExpr, n: string, l: string): boolean {
  const p = polynomial(a.index)
  if (!p) return true
  return [...p.keys()].some((m) => {
    const names = m ? m.split('*') : []
    return names.includes(l) && names.includes(n)
  })
}

/**
 * Every access at one index, free of the inner loop's variable, that the second copy (`second`:
 * variable → shift) moves by a non-zero constant.
 */
function oneElement(uses: IndexExpr[], second: ReadonlyMap<string, number>, l: string): boolean {
  let at: string | undefined
  let p: Map<string, number> | undefined
  for (const a of uses) {
    const q = polynomial(a.index)
    if (!q || readNames(a.index).has(l)) return false
    const k = key(q)
    if (at !== undefined && at !== k) return false
    at = k
    p = q
  }
  if (!p) return false
  // the shift of the index: linear in each shifted variable (no products of them)
  let moved: Map<string, number> = new Map()
  for (const [m, c] of p) {
    const names = m ? m.split('*') : []
    const shifted = names.filter((n) => second.has(n))
    if (shifted.length > 1) return false
    if (shifted.length === 1) {
      if (names.length !== 1) return false
      moved = addPoly(moved, new Map([['', c * second.get(shifted[0]!)!]]))
    }
  }
  return moved.size === 1 && moved.has('') && moved.get('') !== 0
}

/**
 * `block` (of function `f`) with its loops jammed where the pass proves it legal (`bounds`: the
 * loops around it; `known`: the pairs of array parameters the enclosing \`if\`s proved apart, see
 * `apart.ts`).
 */
export function jamBlock(
  block: Stmt[],
  registry: Registry,
  f: FunctionDef,
  bounds: ReadonlyMap<string, Bound> = new Map(),
  known: KnownApart = new Set(),
): Stmt[] {
  return block.flatMap((s): Stmt[] => {
    switch (s.kind) {
      case 'for': {
        const done = jamLoop(s, bounds, registry, f, known)
        if (done) return done
        const inner = new Map(bounds)
        inner.set(s.variable, loopBound(s, depthIn(bounds)))
        return [{ ...s, body: jamBlock(s.body, registry, f, inner, known) }]
      }
      case 'if':
        return [
          {
            ...s,
            then: jamBlock(s.then, registry, f, bounds, knownApart(s.pre, known)),
            else: s.asWritten ? s.else : jamBlock(s.else, registry, f, bounds, known),
          },
        ]
      case 'while':
      case 'unchecked':
        return [{ ...s, body: jamBlock(s.body, registry, f, bounds, known) } as Stmt]
      default:
        return [s]
    }
  })
}

/** The function with its loops jammed where legal and paying (see the module comment). */
export function jamLoops(f: FunctionDef, registry: Registry): FunctionDef {
  return { ...f, body: jamBlock(f.body, registry, f) }
}
