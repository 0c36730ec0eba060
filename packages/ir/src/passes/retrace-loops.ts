/**
 * `retrace-loops`: with run-time checks on, the loop `while (p, c) { R }` that undoes a loop
 * `while (c, p) { B }` of the same block, statement by statement (the uncompute `~routine`
 * places), runs only over the iterations it would not retrace exactly; the forward loop finds out
 * which, as it goes, at the cost of one inverse operation and one comparison per float update. It
 * runs on the placed asserts (after `insert-checks`, `hoist-bounds`, `implied-checks` and
 * `pair-series`); the cpu backend runs it, the interpreter (the reference) does not. (The wasm
 * backend does not: there the single-z Bessel series ran 83 → 104 ns with it, in one process on a
 * loaded machine, where the cpu backend's ran 84 → 57 ns.)
 *
 * Why the backward loop is there at all with checks on: its checks (the forward condition `c`
 * after each undone iteration, the deallocation checks after the loop) verify that the uncompute
 * restores what the forward loop started from. Float arithmetic is not exactly reversible, so in
 * general only running it tells. But whether one update `x += e` is undone exactly by `x -= e`
 * can be told where it runs: `(x + e) − e`, with the e the update added, is x again, bit for bit,
 * or not. R is B inverted statement by statement: `x -= e` for `x += e` (and `+=` for `-=`, `/=`
 * for `*=`, `*=` for `/=`, `^=` and `SWAP` for themselves), in reverse order. Where every float
 * update of an iteration j of the forward loop passes that test (i32 and bool updates always would),
 * the backward loop's step from the state the iteration left, s_{j+1}, gets back to s_j bit for
 * bit: undoing the last statement first, each inverse update evaluates e on the values the forward
 * update evaluated it on (e never reads its target, and everything else is as it was right after
 * the update, by induction), so it subtracts the same e and reaches the tested value. Its assert
 * `c` then passes on s_j, as the forward loop's own test of c did on the same values. So the
 * backward loop visits s_K, s_{K−1}, … as the forward loop left them, down to the latest state
 * s_m (the resume state) whose step back was not verified — s_0 when every step was, where its
 * condition p is false (the forward loop's entry check said so) and it runs no iteration. The
 * forward loop keeps the resume state in copies (`rs`), set to s_0 before it and to s_{j+1} after
 * each iteration that failed a test; before the backward loop the state is exchanged with them
 * (`SWAP`, bit for bit), and the backward loop runs from there, unchanged, with every check of its
 * own. So every check that can fail still runs, where it was, with the same condition and
 * message; those left out are the backward loop's checks on states that provably pass them, and
 * no value the program computes changes.
 *
 * Shape (a block, checks placed):
 *
 * ```
 * assert postWhileStart(!p)        // s_0: p false
 * while (c, p) { B; assert postWhileIteration(p) }
 * M                                // writes nothing B, R, c or p read or write; no host effect
 * while (p, c) { R; assert postWhileIteration(c) }     // R: B inverted, with B's asserts
 * ```
 *
 * becomes
 *
 * ```
 * assert postWhileStart(!p)
 * rs_v <- v  …                     // for each v of the state (the scalars B writes)
 * while (c, p) {
 *   …                              // B, each float update x += e as
 *   x$o <- x; x$e <- e; x += x$e; ok <- $same(x - x$e, x$o)
 *   …
 *   assert postWhileIteration(p)
 *   if (!(ok_1 && ok_2 && …), ~) { t_v <- v; SWAP(rs_v, t_v) … }
 * }
 * M
 * SWAP(v, rs_v) …
 * while (p, c) { R; assert postWhileIteration(c) }
 * ```
 *
 * R's asserts besides its last must repeat, before an inverse update, an assert that B makes before
 * the update it undoes, on values that update does not change (`$factor(e)` of `x *= e` and of
 * `x /= e`): it tests what B's test did, which passed. `$same(a, b)`: a = b, neither NaN, and of the same sign (+0 and −0 differ); `$sameSum(a, b)` the
 * same where a cannot be −0: after `x += e`, x − e is −0 only if x is −0 and e is +0, but the
 * update gives −0 only from x = −0 and e = −0 (and the same for `-=`), so a zero x − e is +0 and
 * equals the old x exactly where that is not −0. B may hold asserts
 * of its own (they run as they were) and updates of scalars of i32, bool, f64 and f32 allocated
 * before the forward loop, `SWAP`s of two of them, nothing else (no element, no call, no `if`, no
 * nested loop, no allocation), whose values call nothing but the standard primitives and the
 * built-in conversions (evaluated again by R, a host function could give another value); c reads
 * only scalars, with arithmetic and the standard primitives.
 *
 * The Bessel series of paper 001 (the approximate multiplier's term and residue, the sum, the
 * counter): about 90% of z in [0.1, 3] retrace every step exactly; where a step is not exact (the
 * sum's `out_anc += t` then `out_anc -= t` rounds), it is one of the first few, and the backward
 * loop runs only those. The tests run beside the forward loop's chain of divisions: no division
 * of their own.
 */
import type { Arg, AssertStmt, Expr, FunctionDef, ScalarTypeName, Stmt } from '../ast.js'
import type { CompileOptions, Program } from '../plugin.js'
import { standardPrimitives } from '../stdlib/index.js'
import { effectfulFunctions } from './dead-ancillas.js'
import { writtenNames } from './hoist-invariants.js'
import { sameExpr } from './implied-checks.js'
import { rewriteBlock, rewriteExpr } from './rewrite.js'

/** The reserved call `$same(a, b)`: floats a and b are equal, not NaN, and of the same sign. */
export const SAME = '$same'

/**
 * The reserved call `$sameSum(a, b)`: `$same(a, b)` where a is known not to be −0 (the undoing
 * `x − e` of `x += e`, or `x + e` of `x -= e`: a sum or difference is −0 only from two zeros of
 * the signs that the update itself would have turned into +0), so that a zero a is the same as b
 * when b is not −0.
 */
export const SAME_SUM = '$sameSum'

type WhileStmt = Extract<Stmt, { kind: 'while' }>
type UpdateStmt = Extract<Stmt, { kind: 'update' }>

/** The float primitives of the standard library a loop's condition may call. */
const PURE_CALLS = new Set([
  'abs',
  'sqrt',
  'exp',
  'log',
  'sin',
  'cos',
  'tan',
  'tanh',
  'sinh',
  'cosh',
  'atan',
  'atan2',
  'identity',
  'min',
  'max',
])

/** The scalar types of the state. */
const STATE_TYPES = new Set<string>(['f64', 'f32', 'i32', 'bool'])

const isFloat = (t: unknown): t is 'f64' | 'f32' => t === 'f64' || t === 'f32'

/** The inverse of each update operator. */
const INVERSE_OP: Record<string, string> = { '+=': '-=', '-=': '+=', '*=': '/=', '/=': '*=', '^=': '^=' }

/** The operator of `x op e` that undoes `x op= e`. */
const UNDO_BINARY: Record<string, '+' | '-' | '*' | '/'> = { '+=': '-', '-=': '+', '*=': '/', '/=': '*' }

/** Whether `e` reads only scalars, with arithmetic, comparisons and the standard primitives (no element, no host call). */
function scalarOnly(e: Expr | Arg, isStandard: (callee: string) => boolean): boolean {
  switch (e.kind) {
    case 'num':
    case 'bool':
      return true
    case 'var':
      return typeof e.type === 'string'
    case 'unary':
      return scalarOnly(e.arg, isStandard)
    case 'binary':
      return scalarOnly(e.left, isStandard) && scalarOnly(e.right, isStandard)
    case 'call':
      return (
        (e.callee === 'f64' || e.callee === 'f32' || (PURE_CALLS.has(e.callee) && isStandard(e.callee))) &&
        e.args.every((a) => scalarOnly(a, isStandard))
      )
    default:
      return false
  }
}

/**
 * Whether `e` gives the same value whenever it is evaluated on the same values: no host call, no
 * call but the standard primitives and the built-in conversions (a plugin's primitive is JavaScript
 * that could keep a state of its own).
 */
function deterministic(e: Expr | Arg, isStandard: (callee: string) => boolean): boolean {
  let ok = true
  rewriteExpr(e, (x) => {
    if (x.kind === 'call' && !['f64', 'f32', 'i32', 'div', 'len'].includes(x.callee) && !isStandard(x.callee))
      ok = false
    return x
  })
  return ok
}

/** The two scalar names of a `SWAP` (or `~SWAP`) of two plain variables, else undefined. */
function swapped(s: Stmt): [string, string] | undefined {
  if (s.kind !== 'callstmt' || s.callee !== 'SWAP' || s.target !== 'bijection' || s.args.length !== 2) return undefined
  const [a, b] = s.args as [Arg, Arg]
  if (a.kind !== 'var' || b.kind !== 'var' || typeof a.type !== 'string' || typeof b.type !== 'string') return undefined
  return a.name === b.name ? undefined : [a.name, b.name]
}

/** Whether `r` undoes `b`: the inverse update of the same target by the same value, or the same exchange. */
function undoes(r: Stmt, b: Stmt): boolean {
  if (b.kind === 'update' && r.kind === 'update')
    return (
      b.target.kind === 'var' &&
      r.target.kind === 'var' &&
      b.target.name === r.target.name &&
      INVERSE_OP[b.op] === r.op &&
      sameExpr(b.value, r.value)
    )
  const [x, y] = [swapped(b), swapped(r)]
  return x !== undefined && y !== undefined && new Set([...x, ...y]).size === 2
}

/** The names a block reads (expressions and conditions), at any depth. */
function readsOf(body: Stmt[], out: Set<string> = new Set()): Set<string> {
  rewriteBlock(body, (x) => {
    if (x.kind === 'var') out.add(x.name)
    if (x.kind === 'index') out.add(x.array.name)
    return x
  })
  return out
}

/** The names an expression reads. */
function exprReads(e: Expr, out: Set<string>): Set<string> {
  rewriteExpr(e, (x) => {
    if (x.kind === 'var') out.add(x.name)
    if (x.kind === 'index') out.add(x.array.name)
    return x
  })
  return out
}

const variable = (name: string, type: ScalarTypeName): Extract<Expr, { kind: 'var' }> => ({ kind: 'var', name, type })
const alloc = (name: string, value: Expr, type: ScalarTypeName): Stmt => ({
  kind: 'alloc',
  name,
  declared: { kind: 'scalar', name: type },
  value,
  type: { kind: 'scalar', name: type },
})
const swap = (a: string, b: string, type: ScalarTypeName): Stmt => ({
  kind: 'callstmt',
  callee: 'SWAP',
  args: [variable(a, type), variable(b, type)],
  inverse: false,
  target: 'bijection',
})

/** The per-function counter of fresh names. */
interface Names {
  n: number
}

/** The rewrite of the forward loop at `i` and the backward loop at `r` of `block`, or undefined. */
function retrace(
  block: Stmt[],
  i: number,
  r: number,
  scope: ReadonlySet<string>,
  names: Names,
  isStandard: (callee: string) => boolean,
  effectful: ReadonlySet<string>,
): Stmt[] | undefined {
  const L = block[i] as WhileStmt
  const R = block[r] as WhileStmt
  // the forward loop's entry check (p false at s_0) and post-iteration check (p true after each)
  const entry = block[i - 1]
  if (
    entry?.kind !== 'assert' ||
    entry.check !== 'postWhileStart' ||
    entry.cond.kind !== 'unary' ||
    entry.cond.op !== '!' ||
    !sameExpr(entry.cond.arg, L.post)
  )
    return undefined
  const last = L.body[L.body.length - 1]
  if (last?.kind !== 'assert' || last.check !== 'postWhileIteration' || !sameExpr(last.cond, L.post)) return undefined
  const closing = R.body[R.body.length - 1]
  if (closing?.kind !== 'assert' || closing.check !== 'postWhileIteration' || !sameExpr(closing.cond, L.pre))
    return undefined
  if (!scalarOnly(L.pre, isStandard) || !deterministic(L.post, isStandard)) return undefined
  // B: updates of whole scalars and exchanges (and asserts); R: B inverted, no assert but its last
  // and those that repeat, before an inverse update, an assert of B before the update it undoes
  // (`$factor(e)` of `x /= e` and of `x *= e`: the same e, on the same values)
  const b = L.body.filter((s) => s.kind !== 'assert')
  const rr = R.body.slice(0, -1).filter((s) => s.kind !== 'assert')
  const before = (body: Stmt[], k: number): AssertStmt[] => {
    const out: AssertStmt[] = []
    for (let j = k - 1; j >= 0 && body[j]!.kind === 'assert'; j--) out.push(body[j] as AssertStmt)
    return out
  }
  const inR = R.body.slice(0, -1)
  for (let k = 0; k < inR.length; k++) {
    const a = inR[k]!
    if (a.kind !== 'assert') continue
    let u = k
    while (u < inR.length && inR[u]!.kind === 'assert') u++
    const undo = inR[u]
    if (undo?.kind !== 'update' || undo.target.kind !== 'var') return undefined
    // (the update of B it undoes, and B's asserts right before it)
    const undone = L.body.findIndex((t) => t.kind !== 'assert' && undoes(undo, t))
    if (undone < 0 || L.body.filter((t) => t.kind !== 'assert' && undoes(undo, t)).length !== 1) return undefined
    const x = undo.target.name
    const reads = exprReads(a.cond, new Set())
    if (reads.has(x) || !before(L.body, undone).some((t) => t.check === a.check && sameExpr(t.cond, a.cond)))
      return undefined
  }
  if (
    b.some((s) => !(s.kind === 'update' && s.target.kind === 'var' && typeof s.target.type === 'string') && !swapped(s))
  )
    return undefined
  if (rr.length !== b.length || rr.some((s, k) => !undoes(s, b[b.length - 1 - k]!))) return undefined
  if (b.some((s) => s.kind === 'update' && !deterministic(s.value, isStandard))) return undefined
  // the state: the scalars B writes, allocated before the loop, of the types compared
  const types = new Map<string, ScalarTypeName>()
  for (const s of b) {
    const targets = s.kind === 'update' ? [s.target] : (s as Extract<Stmt, { kind: 'callstmt' }>).args
    for (const t of targets) types.set((t as { name: string }).name, (t as { type: ScalarTypeName }).type)
  }
  const state = [...types.keys()]
  if (state.some((n) => !scope.has(n) || !STATE_TYPES.has(types.get(n)!))) return undefined
  // M: nothing it writes is read or written by B, R or the conditions; no host effect
  const middle = block.slice(i + 1, r)
  const wm = writtenNames(middle, effectful)
  if (!wm || middle.some((s) => s.kind === 'safe')) return undefined
  const touched = readsOf([...L.body, ...R.body], new Set(state))
  exprReads(L.pre, touched)
  exprReads(L.post, touched)
  if ([...wm].some((n) => touched.has(n))) return undefined

  const id = names.n++
  const oks: string[] = []
  const body: Stmt[] = []
  for (const s of L.body) {
    const t = s.kind === 'update' && s.target.kind === 'var' ? (s.target.type as ScalarTypeName) : undefined
    if (s.kind !== 'update' || !isFloat(t) || !(s.op in UNDO_BINARY)) {
      body.push(s)
      continue
    }
    const x = (s.target as Extract<Expr, { kind: 'var' }>).name
    const k = names.n++
    const [old, value, ok] = [`${x}$o${k}`, `${x}$e${k}`, `ok$${k}`]
    const vt = (s.value.type as ScalarTypeName | undefined) ?? t
    body.push(alloc(old, variable(x, t), t), alloc(value, s.value, vt))
    body.push({ ...(s as UpdateStmt), value: variable(value, vt) })
    const undone: Expr = {
      kind: 'binary',
      op: UNDO_BINARY[s.op]!,
      left: variable(x, t),
      right: variable(value, vt),
      type: t,
    }
    const callee = s.op === '+=' || s.op === '-=' ? SAME_SUM : SAME
    body.push(alloc(ok, { kind: 'call', callee, args: [undone, variable(old, t)], type: 'bool' }, 'bool'))
    oks.push(ok)
  }
  if (oks.length > 0) {
    const verified = oks
      .map((ok): Expr => variable(ok, 'bool'))
      .reduce((a, c) => ({ kind: 'binary', op: '&&', left: a, right: c, type: 'bool' }))
    const resume: Stmt[] = []
    for (const n of state) {
      const t = `${n}$t${id}`
      resume.push(alloc(t, variable(n, types.get(n)!), types.get(n)!), swap(`${n}$rs${id}`, t, types.get(n)!))
    }
    body.push({
      kind: 'if',
      pre: { kind: 'unary', op: '!', arg: verified, type: 'bool' },
      post: null,
      then: resume,
      else: [],
    })
  }
  return [
    ...state.map((n) => alloc(`${n}$rs${id}`, variable(n, types.get(n)!), types.get(n)!)),
    { ...L, body },
    ...middle,
    ...state.map((n) => swap(n, `${n}$rs${id}`, types.get(n)!)),
    R,
  ]
}
/**
 * The forward loops of `block` and their backward loops, rewritten (see the module comment);
 * nested blocks on their own, except the bodies of loops (`inLoop`: see `retraceLoopsFunction`).
 */
function retraceBlock(
  block: Stmt[],
  outer: ReadonlySet<string>,
  names: Names,
  isStandard: (callee: string) => boolean,
  effectful: ReadonlySet<string>,
): { body: Stmt[]; count: number } {
  let count = 0
  const scope = new Set(outer)
  const out: Stmt[] = []
  for (let i = 0; i < block.length; i++) {
    const s = block[i]!
    if (s.kind === 'alloc') scope.add(s.name)
    if (s.kind === 'while') {
      const r = block.findIndex(
        (t, k) => k > i && t.kind === 'while' && sameExpr(t.pre, s.post) && sameExpr(t.post, s.pre),
      )
      const done = r > i ? retrace(block, i, r, scope, names, isStandard, effectful) : undefined
      if (done) {
        out.push(...done)
        // (the statements between were copied with the loops: go on after the backward loop)
        i = r
        count++
        continue
      }
    }
    if (s.kind === 'if') {
      const a = retraceBlock(s.then, scope, names, isStandard, effectful)
      const b = retraceBlock(s.else, scope, names, isStandard, effectful)
      count += a.count + b.count
      out.push(a.count + b.count ? { ...s, then: a.body, else: b.body } : s)
    } else if (s.kind === 'unchecked') {
      const a = retraceBlock(s.body, scope, names, isStandard, effectful)
      count += a.count
      out.push(a.count ? { ...s, body: a.body } : s)
    } else out.push(s)
  }
  return { body: count ? out : block, count }
}

/**
 * {@link retraceBlock} on a function's body: on the loops that no other loop encloses. The pass
 * trades the backward loop's chain of operations for work beside the forward loop's: that pays
 * where the chain's latency is what a call waits for (the single-z Bessel series, cpu: 84 → 57 ns
 * in one process, loaded machine), and not where the independent iterations of an enclosing loop
 * already keep the machine busy (a batch of series, three run side by side by pass
 * `pair-series`: 8.9 → 12.0 ms with the loops nested in the batch loop rewritten too).
 */
export function retraceLoopsFunction(
  f: FunctionDef,
  program: Program,
  effectful: ReadonlySet<string> = new Set(),
): FunctionDef {
  const standard = new Map(standardPrimitives.map((p) => [p.name, p]))
  const isStandard = (callee: string) => {
    const spec = standard.get(callee)
    return spec !== undefined && program.registry.findPrimitive(callee) === spec
  }
  const out = retraceBlock(f.body, new Set(), { n: 0 }, isStandard, effectful)
  return out.count ? { ...f, body: out.body } : f
}

/**
 * The program and its inverses with the backward loops that retrace a forward loop run only
 * over the steps the forward loop could not verify (only with checks on; see the module comment).
 */
export function retraceLoops(
  program: Program,
  inverses: Map<string, FunctionDef>,
  options: CompileOptions,
): { program: Program; inverses: Map<string, FunctionDef> } {
  if (!options.checks) return { program, inverses }
  const effectful = effectfulFunctions([...program.functions.values(), ...inverses.values()])
  return {
    program: {
      ...program,
      functions: new Map([...program.functions].map(([n, d]) => [n, retraceLoopsFunction(d, program, effectful)])),
    },
    inverses: new Map([...inverses].map(([n, d]) => [n, retraceLoopsFunction(d, program, effectful)])),
  }
}
