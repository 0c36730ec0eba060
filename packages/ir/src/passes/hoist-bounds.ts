/**
 * `hoist-bounds`: the bounds checks of a loop whose indices are affine in its variable, checked
 * once before the loop instead of once per iteration. It runs after `insert-checks` (so only with
 * checks on); the cpu and wasm backends run it, the interpreter (the reference) does not.
 *
 * In the body of `for v in a..b` (or `..=`, step 1 or −1, either direction), an assert
 * `outOfBounds($inrange(e, len(x)))` that runs on every iteration (a statement of the body itself,
 * not inside an `if` or an inner loop) moves before the loop when
 * - `e` is c·v + D with c an integer literal (|c| ≤ 2²⁰) or an expression C of the same kind as D
 *   (a column stride: `x[i + m * l]` in a loop over l), and `e` made of `v`, names the body does
 *   not write, literals, `+ - *` and lengths, with no host call in it;
 * - the body neither allocates nor deallocates `x` (its length is fixed while the loop runs);
 * - the range reads no host function (it is evaluated once more, before the loop).
 * An index the loop does not change (c = 0) is checked once, when the loop runs. Otherwise the
 * assert becomes up to three before the loop, each true when the loop does not run: `e` at the
 * end A the loop visits first, in range; `e` at the other end B, in range; and B reached from A
 * without wrapping: |span| < len, span = f64(c)·(f64(B) − f64(A)) the distance the index moves
 * (one comparison where c is a literal and so the sign of span known; a condition of the stride
 * and the range only, so the accesses of one array with one stride share it, and one assert of it
 * stays). It is left out for c = ±1 with D a literal d ≥ −1 (`x[i]`, `x[i - 1]`; not `x[n - i]`).
 * The ends are `e` with `v` replaced, i32 arithmetic, the very values the program computes at
 * those iterations. The accesses keep their `inBounds` mark. Of hoisted asserts with the same
 * condition (one element accessed twice in the body), the first stays: the others would test the
 * same values right after it.
 *
 * Why this is exact (the hoisted asserts pass if and only if every iteration's check would): i32
 * `+ - *` is arithmetic modulo 2³², so the index at v is w(v) = E(v) − 2³²·p(v), with E(v) = c·v +
 * D′ the exact integer (c the stride as the iterations use it, D′ the constant part) and w(v) in
 * [−2³¹, 2³¹); E(B) − E(A) = c·(B − A) = span, and w(B) − w(A) ≡ span modulo 2³². Let w(A) and
 * w(B) be in [0, len) (len ≤ 2³¹ − 1). If |span| < len, both w(B) − w(A) and span lie in (−len,
 * len), congruent, so equal: p(A) = p(B), and every E(v) lies between E(A) and E(B), so w(v) =
 * E(v) − 2³²·p(A) lies between w(A) and w(B): in range. If |span| ≥ len, w(B) − w(A) ≠ span, so
 * p(A) ≠ p(B); but were every iteration in range, two consecutive ones, which differ by |c| ≤ 2³¹
 * in E and by less than len in w, would have the same p: some iteration is out of range. (span
 * is exact in f64 while |span| ≤ 2⁵³; beyond, its rounding, which is monotone, keeps it at least
 * 2⁵³ in magnitude, not below len either.) With c = ±1 and D a literal d ≥ −1, E(v) lies in
 * [−2³¹ − 1, 2³² − 1): where some iteration's index wraps, the end with the lowest or highest E
 * wraps too, to 2³¹ − 1 or to a negative index, out of range, so the end asserts fail. (An
 * iteration's index may wrap back into range: `x[l * 4]` from l = 2³⁰ reads x[0] and x[4]; the
 * exact value 2³² is not what it reads.)
 *
 * The loop then runs in two versions (loop versioning, as \`hoist-invariants\`' \`safetyTest\`):
 *
 *     if (!(0 < n) || $inrange(k, len(x)) && $inrange(k + n - 1, len(x)), ~) {
 *       for i in 0..n { …x[i + k]… }                                 (the asserts hoisted, left out)
 *       assert loopRange(…)                                          (if the loop has one)
 *     } else {
 *       for i in 0..n { assert outOfBounds($inrange(i + k, len(x))) ; …x[i + k]… }   (as written)
 *       assert loopRange(…)
 *     }
 *
 * The test is the hoisted asserts' conditions together, true exactly when every iteration's
 * check would pass (see above): the first version runs only where none of the checks it lacks
 * could fail, and the second, where one would, is the loop as it was given (its inner loops not
 * versioned, so that a nest's copies grow with its depth, not exponentially), every access
 * checked in its iteration. So a program that fails, fails as the reference interpreter does: the
 * same error (code, message, location), in the same iteration, after the iterations before it,
 * and where another check fails in an earlier iteration, that one. The \`loopRange\` assert after
 * the loop (the range the loop saved when it started; a body that changes it fails it) goes into
 * both versions, as it reads the range of the loop just run.
 *
 * Nests: the test of a versioned inner loop that is a statement of the body itself is hoisted
 * over the loop around it too, when each of its parts either has one value at every iteration
 * (it reads neither the loop variable nor a name the body writes nor the length of an array the
 * body (de)allocates; the inner loop's "does not run" test must be such a part) or is an
 * \`$inrange(e, len(x))\` that the rule above hoists (e affine in the loop variable, at both ends,
 * with the span condition). The hoisted test is true exactly when the inner test would be true at
 * every iteration (the argument above, applied to each \`$inrange\`; the inner loop's range and
 * every other part are the same at every iteration), so in the first version the inner loop runs
 * without its test, as its first version (the \`if\` gives way to its \`then\` arm), and the
 * second version is the nest as written, every access checked where it happens. Applied level by
 * level, a nest of loops with invariant bounds and affine indices (a matrix–vector product per
 * time step) gets one test before it and one copy as written, instead of a test and a copy per
 * iteration of each outer loop: the tanh RNN of the bench's kernels, checked, went from 2.69× to
 * 2.30× plain TS on the cpu backend, 9.8 → 8.1 µs a call (the copies as written, never run, made
 * V8 compile the forward nest about 1.2 µs slower per call). Not hoisted: inner tests
 * under an \`if\` or another statement (they may not run), and a part that reads what the body
 * changes or a range that moves with the loop (a triangular nest keeps its test per iteration).
 * With \`versions\` false (or a loop too large to copy) nothing is hoisted this way: the inner
 * tests are not asserts. The wasm backend does not ask for it (\`nests\` false): there the RNN
 * gained as much (2.85× → 2.43×), but the heat stencil of the same probe, whose nest it also
 * changes, ran about 4% slower (10.3 → 10.8 µs, in-process CPU time, medians of alternating
 * processes; cause not found), and the cpu backend's heat stencil did not.
 *
 * A loop of more than \`VERSION_MAX_STATEMENTS\` statements (nested ones included) is not
 * copied: its hoisted asserts stand before it, as with \`versions\` false below, so the error
 * order of such a loop is that form's.
 *
 * With \`versions\` false (the wasm backend's bounds without checks, \`hoisted-bounds.ts\`) the
 * hoisted asserts stand before the one loop instead: the error (\`runtime/out-of-bounds\`, the
 * same code and location) is raised before the loop starts, naming the index at an end of the
 * range, or, where the index wraps between two ends in range, the value f64(e(A)) + span it would
 * have at B without wrapping; another check that would have failed in an earlier iteration does
 * not.
 *
 * Not hoisted: loops with another step (the last value needs a division), `while` loops (no trip
 * count), asserts under an `if` (they may not run) and indices that are not affine.
 */
import type { Arg, AssertStmt, CallExpr, Expr, FunctionDef, Stmt } from '../ast.js'
import { readNames, rootName, walk } from '../check.js'
import type { CompileOptions, Program } from '../plugin.js'
import { rewriteExpr } from './rewrite.js'
import { callsHost } from './insert-checks.js'
import { key } from '../cse.js'

/**
 * The most statements (nested ones included) of a loop run in two versions; a larger one gets its
 * hoisted asserts before it (the form of \`versions\` false). A second copy of a large loop nest
 * (GMM's objective with d = 10 unrolled: 48 → 92 kB of JavaScript) took the function past what V8
 * optimises, and it ran 20–30 times slower.
 */
export const VERSION_MAX_STATEMENTS = 48

/** The number of statements in \`stmts\`, those nested in loops and branches included. */
function statementCount(stmts: readonly Stmt[]): number {
  let n = 0
  for (const s of stmts) {
    n++
    if (s.kind === 'if') n += statementCount(s.then) + statementCount(s.else)
    else if (s.kind === 'for' || s.kind === 'while' || s.kind === 'unchecked') n += statementCount(s.body)
  }
  return n
}

/** The largest literal |c| hoisted (at most 2³¹: see the module comment). */
export const HOIST_MAX_FACTOR = 2 ** 20

const i32 = (value: number): Expr => ({ kind: 'num', value, isFloat: false, type: 'i32' })
const f64Lit = (value: number): Expr => ({ kind: 'num', value, isFloat: true, type: 'f64' })
const toF64 = (e: Expr): Expr =>
  e.kind === 'num' ? f64Lit(e.value) : { kind: 'call', callee: 'f64', args: [e], type: 'f64' }
const bin = (op: '+' | '-' | '*' | '==' | '<' | '<=' | '>' | '>=' | '&&' | '||', left: Expr, right: Expr): Expr => ({
  kind: 'binary',
  op,
  left,
  right,
  type: ['+', '-', '*'].includes(op) ? (left.type as string) : 'bool',
})
const not = (arg: Expr): Expr => ({ kind: 'unary', op: '!', arg, type: 'bool' })
/** f64 `a - b`, literals folded. */
const fsub = (a: Expr, b: Expr): Expr =>
  a.kind === 'num' && b.kind === 'num' ? f64Lit(a.value - b.value) : isZero(b) ? a : bin('-', a, b)
/** f64 `a + b`, a zero literal folded. */
const fadd = (a: Expr, b: Expr): Expr => (isZero(a) ? b : isZero(b) ? a : bin('+', a, b))
/** f64 `a * b`, literals folded. */
const fmul = (a: Expr, b: Expr): Expr =>
  a.kind === 'num' && b.kind === 'num'
    ? f64Lit(a.value * b.value)
    : a.kind === 'num' && a.value === 1
      ? b
      : b.kind === 'num' && b.value === 1
        ? a
        : bin('*', a, b)

/** The factor c of `v` in `e` when `e` is c·v + D (i32 `+`, `-`, literal `*`); undefined otherwise. */
function factor(e: Expr, v: string): number | undefined {
  if (e.type !== 'i32') return undefined
  switch (e.kind) {
    case 'var':
      return e.name === v ? 1 : 0
    case 'num':
      return 0
    case 'binary': {
      if (e.op === '+' || e.op === '-') {
        const l = factor(e.left, v),
          r = factor(e.right, v)
        if (l === undefined || r === undefined) return undefined
        return e.op === '+' ? l + r : l - r
      }
      if (e.op === '*') {
        const l = factor(e.left, v),
          r = factor(e.right, v)
        if (l === undefined || r === undefined) return mentions(e, v) ? undefined : 0
        if (e.left.kind === 'num' && Number.isInteger(e.left.value)) return e.left.value * r
        if (e.right.kind === 'num' && Number.isInteger(e.right.value)) return l * e.right.value
        return l === 0 && r === 0 ? 0 : undefined
      }
      return mentions(e, v) ? undefined : 0
    }
    default:
      return mentions(e, v) ? undefined : 0
  }
}

const mentions = (e: Expr, v: string): boolean => readNames(e).has(v)

/**
 * The coefficient C of `v` in `e` when `e` is C·v + D with C free of `v` (i32 `+`, `-`, `*`): an
 * i32 expression (the literal 0 where `e` does not read `v`), or undefined (`v` in a product with
 * itself, or under anything else).
 */
function coefficient(e: Expr, v: string): Expr | undefined {
  if (e.type !== 'i32') return undefined
  switch (e.kind) {
    case 'var':
      return i32(e.name === v ? 1 : 0)
    case 'num':
      return i32(0)
    case 'binary': {
      if (!mentions(e, v)) return i32(0)
      if (e.op === '+' || e.op === '-') {
        const l = coefficient(e.left, v),
          r = coefficient(e.right, v)
        if (l === undefined || r === undefined) return undefined
        if (isZero(r)) return l
        if (isZero(l) && e.op === '+') return r
        return { ...e, left: l, right: r }
      }
      if (e.op === '*') {
        if (mentions(e.left, v) && mentions(e.right, v)) return undefined
        const [k, other] = mentions(e.left, v) ? [coefficient(e.left, v), e.right] : [coefficient(e.right, v), e.left]
        if (k === undefined) return undefined
        if (k.kind === 'num' && k.value === 1) return other
        return { ...e, left: other, right: k }
      }
      return undefined
    }
    default:
      return mentions(e, v) ? undefined : i32(0)
  }
}

/**
 * Whether `e` is made of names, literals, `+ - *` and `len(x)` only: what the pass takes for the
 * constant part of an affine index (the wasm backend's `hoisted-bounds` asks the same).
 */
export function plain(e: Expr): boolean {
  switch (e.kind) {
    case 'var':
    case 'num':
      return true
    case 'binary':
      return (e.op === '+' || e.op === '-' || e.op === '*') && plain(e.left) && plain(e.right)
    case 'call':
      return e.callee === 'len' && e.args[0]?.kind === 'var'
    default:
      return false
  }
}

const isZero = (e: Expr | Arg): boolean => e.kind === 'num' && e.value === 0

/**
 * `e` with `v` replaced by `value`, literal arithmetic folded as i32 computes it (wrapping: the
 * same value the program computes at that iteration).
 */
function at(e: Expr, v: string, value: Expr): Expr {
  return rewriteExpr(e, (x) => {
    if (x.kind === 'var' && x.name === v) return value
    if (x.kind !== 'binary' || (x.op !== '+' && x.op !== '-' && x.op !== '*')) return x
    const { left: l, right: r } = x
    if (l.kind === 'num' && r.kind === 'num' && Number.isInteger(l.value) && Number.isInteger(r.value))
      return i32(
        x.op === '+' ? (l.value + r.value) | 0 : x.op === '-' ? (l.value - r.value) | 0 : Math.imul(l.value, r.value),
      )
    if (x.op === '*' && (isZero(l) || isZero(r))) return i32(0)
    if (x.op === '*' && l.kind === 'num' && l.value === 1) return r
    if ((x.op === '*' && r.kind === 'num' && r.value === 1) || (x.op !== '*' && isZero(r))) return l
    if (x.op === '+' && isZero(l)) return r
    return x
  }) as Expr
}

/** What a block may change: the names it writes and `len:x` for arrays it (de)allocates. */
function changes(body: Stmt[], program: Program): Set<string> {
  const w = new Set<string>()
  walk(body, (s) => {
    switch (s.kind) {
      case 'update':
        w.add(rootName(s.target) ?? '')
        break
      case 'push':
      case 'pop':
        w.add(rootName(s.value) ?? '')
        w.add(s.stack.name)
        // (a push or pop changes the stack's length: found by review 17e, a nest's test that
        // read \`len(st)\` was taken once for the whole nest)
        w.add(`len:${s.stack.name}`)
        break
      case 'callstmt': {
        const writes = s.target === 'function' ? program.writes.get(s.callee) : undefined
        s.args.forEach((a, i) => {
          const r = rootName(a)
          if (r === undefined || (writes && !writes[i])) return
          w.add(r)
          // (a stack the callee pushes or pops)
          if (typeof a.type === 'object' && a.type.kind === 'stack') w.add(`len:${r}`)
        })
        break
      }
      case 'alloc':
      case 'dealloc':
        w.add(s.name)
        w.add(`len:${s.name}`)
        break
    }
  })
  return w
}

/**
 * The hoisted form of a loop's per-iteration bounds asserts (see the module comment): the asserts
 * before the loop and the loop without them, or undefined where none moves.
 */
function hoistLoop(
  s: Extract<Stmt, { kind: 'for' }>,
  program: Program,
  nest: boolean,
): { asserts: AssertStmt[]; conds: Cond[]; idle: Expr; loop: Extract<Stmt, { kind: 'for' }> } | undefined {
  const step = s.step === null ? 1 : s.step.kind === 'num' ? s.step.value : undefined
  if (step !== 1 && step !== -1) return undefined
  if (callsHost(s.start) || callsHost(s.stop)) return undefined
  const changed = changes(s.body, program)
  const hoisted: AssertStmt[] = []
  const body: Stmt[] = []
  // the first and last values of the loop variable, and whether the loop runs at all
  const first = s.start
  const last = s.inclusive ? s.stop : bin(step === 1 ? '-' : '+', s.stop, i32(1))
  const runs = bin(step === 1 ? (s.inclusive ? '<=' : '<') : s.inclusive ? '>=' : '>', s.start, s.stop)
  const [vA, vB] = s.reverse ? [last, first] : [first, last]
  const increasing = (step === 1) !== !!s.reverse
  // the guards of the versioned inner loops of the body, hoisted too (see the module comment)
  const conds: Cond[] = []
  for (const a of s.body) {
    const parts = nest && a.kind === 'if' ? guards.get(a) : undefined
    const nested = parts && hoistGuard(parts, s.variable, changed, { first, vA, vB, increasing })
    if (nested && a.kind === 'if') {
      conds.push(nested)
      body.push(...a.then)
      continue
    }
    const h = a.kind === 'assert' ? hoistAssert(a, s.variable, changed) : undefined
    if (!h || a.kind !== 'assert') {
      body.push(a)
      continue
    }
    if (h.invariant) {
      // an index the loop does not change: checked once (where it names the loop variable, as in
      // \`x[l * 0]\`, at the loop's first value: the variable is not bound before the loop)
      const index = (a.cond as CallExpr).args[0]!
      if (!readNames(index).has(s.variable)) {
        hoisted.push({ ...a, cond: bin('||', not(runs), a.cond) })
        continue
      }
      const w = h.at(first)
      hoisted.push({
        ...a,
        cond: bin('||', not(runs), { ...(a.cond as CallExpr), args: [w, h.length] }),
        args: a.args.map((x, k) => (k === 1 ? w : x)),
      })
      continue
    }
    // the index at the end the loop visits first (A) and at the other (B), as the program computes
    // it (i32), each in range; and B reached from A without wrapping (see the module comment)
    const name = a.args[0]!
    for (const w of [h.at(vA), h.at(vB)])
      hoisted.push({
        ...a,
        cond: bin('||', not(runs), { ...(a.cond as CallExpr), args: [w, h.length] }),
        args: [name, w, h.length],
      })
    const between = betweenEnds(h, vA, vB, increasing)
    if (between)
      hoisted.push({
        ...a,
        cond: bin('||', not(runs), between),
        args: [name, fadd(toF64(h.at(vA)), fmul(h.stride, fsub(toF64(vB), toF64(vA)))), h.length],
      })
  }
  if (!hoisted.length && !conds.length) return undefined
  // one of each condition: a second assert of the same condition, right after the first (nothing
  // runs between the hoisted asserts), cannot fail where the first passed (two accesses of one
  // element, `x[i]` written by one rotation and read by the next)
  const seen = new Set<string>()
  const once = hoisted.filter((a) => {
    const k = key(a.cond)
    if (seen.has(k)) return false
    seen.add(k)
    return true
  })
  const seenConds = new Set<string>()
  const onceConds = conds.filter((c) => {
    const k = key(condExpr(c))
    if (seenConds.has(k)) return false
    seenConds.add(k)
    return true
  })
  return { asserts: once, conds: onceConds, idle: not(runs), loop: { ...s, body } }
}

/** What `hoistAssert` finds of a hoistable bounds assert (or of a bounds condition). */
interface Hoistable {
  at: (value: Expr) => Expr
  stride: Expr
  sign: number | undefined
  unit: boolean
  length: Expr
  invariant: boolean
}

/**
 * The condition that the index of `h` reaches the end B from the end A without wrapping (|span| <
 * len, span = c·(B − A); see the module comment), or undefined where none is needed (|c| = 1 and
 * D a literal ≥ −1: any wrap leaves an end out of range).
 */
function betweenEnds(h: Hoistable, vA: Expr, vB: Expr, increasing: boolean): Expr | undefined {
  // the index moves by span = c·(B − A) from A to B: B is reached without wrapping exactly when
  // |span| < len (both ends in range; see the module comment), a condition of the stride and
  // the range alone, the same for every access of the array with that stride
  const d = h.at(i32(0))
  if (h.unit && d.kind === 'num' && d.value >= -1) return undefined
  const span = fmul(h.stride, fsub(toF64(vB), toF64(vA)))
  const len = toF64(h.length)
  // the sign of span, where the stride is a literal: one comparison
  const sign = h.sign === undefined ? 0 : increasing ? h.sign : -h.sign
  const below = bin('<', span, len),
    above = bin('<', bin('-', f64Lit(0), len), span)
  return sign > 0 ? below : sign < 0 ? above : bin('&&', above, below)
}

/**
 * The test of an \`if\` this pass made (a loop in two versions), in parts: the loop's "does not
 * run" test \`idle\` and the conditions \`conds\`, the test being \`idle || conds[0] && …\`.
 * Only the \`if\`s of one \`hoistBoundsFunction\` call are here (the enclosing loops' hoisting
 * reads them).
 */
const guards = new WeakMap<Stmt, Guard>()

/**
 * A condition of a versioning test: an expression, or the test of a versioned inner loop hoisted
 * (its parts kept apart, so that an enclosing loop's hoisting can hoist them again).
 */
type Cond = Expr | Guard
/** A versioning test in parts: \`idle || conds[0] && …\` (\`idle\`: the loop does not run). */
interface Guard {
  idle: Expr
  conds: Cond[]
}
const isGuard = (c: Cond): c is Guard => !('kind' in c)
/** The expression of a condition. */
function condExpr(c: Cond): Expr {
  if (!isGuard(c)) return c
  return c.conds.length ? bin('||', c.idle, c.conds.map(condExpr).reduce(and)) : c.idle
}

/**
 * Whether \`e\` (a versioning test's part) has the same value at every iteration of a loop of
 * variable \`v\` whose body changes \`changed\` (\`changes\`), and before it: it reads neither
 * \`v\` nor a name the body writes nor the length of an array it (de)allocates, and it is made of
 * literals, names, lengths, \`f64\` conversions, \`$inrange\` and operators only.
 */
function invariantIn(e: Expr, v: string, changed: Set<string>): boolean {
  switch (e.kind) {
    case 'num':
      return true
    case 'var':
      return e.name !== v && !changed.has(e.name)
    case 'unary':
      return invariantIn(e.arg, v, changed)
    case 'binary':
      return invariantIn(e.left, v, changed) && invariantIn(e.right, v, changed)
    case 'call':
      if (e.callee === 'len') return e.args[0]?.kind === 'var' && !changed.has(`len:${e.args[0].name}`)
      if (e.callee !== 'f64' && e.callee !== '$inrange') return false
      return e.args.every((x) => invariantIn(x as Expr, v, changed))
    default:
      return false
  }
}

/**
 * The test of a versioned inner loop (\`parts\`, from \`guards\`), hoisted over the enclosing loop of
 * variable \`v\`: one condition, true (where the enclosing loop runs) exactly when the inner test
 * would be true at every iteration; or undefined where a part is neither invariant nor a
 * hoistable \`$inrange\` (see the module comment).
 */
function hoistGuard(
  parts: Guard,
  v: string,
  changed: Set<string>,
  ends: { first: Expr; vA: Expr; vB: Expr; increasing: boolean },
): Guard | undefined {
  if (!invariantIn(parts.idle, v, changed)) return undefined
  const out: Cond[] = []
  for (const c of parts.conds) {
    if (isGuard(c)) {
      // (a test hoisted from a loop further in: where its idle test is invariant too, true at every
      // iteration exactly when its conditions hoisted are)
      const g = hoistGuard(c, v, changed, ends)
      if (!g) return undefined
      out.push(g)
      continue
    }
    if (invariantIn(c, v, changed)) {
      out.push(c)
      continue
    }
    if (c.kind !== 'call' || c.callee !== '$inrange') return undefined
    const h = hoistAssert({ kind: 'assert', check: 'outOfBounds', cond: c, args: [] } as AssertStmt, v, changed)
    if (!h) return undefined
    if (h.invariant) {
      // (an index that names v without changing with it: its value at the first iteration)
      out.push({ ...c, args: [h.at(ends.first), h.length] })
      continue
    }
    for (const w of [h.at(ends.vA), h.at(ends.vB)]) out.push({ ...c, args: [w, h.length] })
    const between = betweenEnds(h, ends.vA, ends.vB, ends.increasing)
    if (between) out.push(between)
  }
  // (one of each condition: the two ends of one array's accesses share their span condition)
  const seen = new Set<string>()
  const once = out.filter((c) => {
    const k = key(condExpr(c))
    if (seen.has(k)) return false
    seen.add(k)
    return true
  })
  return { idle: parts.idle, conds: once }
}

/**
 * For a hoistable bounds assert: its index at a value of the loop variable (the index expression
 * with the variable replaced, i32 as the program computes it), the stride c in f64, the length.
 */
function hoistAssert(a: AssertStmt, v: string, changed: Set<string>): Hoistable | undefined {
  if (a.check !== 'outOfBounds' || a.cond.kind !== 'call' || a.cond.callee !== '$inrange') return undefined
  const [index, length] = a.cond.args as [Expr, Expr]
  if (length.kind !== 'call' || length.callee !== 'len' || length.args[0]?.kind !== 'var') return undefined
  if (changed.has(`len:${length.args[0].name}`)) return undefined
  // the index is evaluated before the loop: names, literals, arithmetic and lengths only (an
  // element it read would not have been checked yet there), none the body writes
  if (!plain(index) || callsHost(index)) return undefined
  for (const n of readNames(index)) if (n !== v && changed.has(n)) return undefined
  const literal = factor(index, v)
  // a stride that is not a literal: C of C·v + D (see the module comment)
  const C = literal === undefined ? coefficient(index, v) : undefined
  if (literal === undefined && (C === undefined || !plain(C))) return undefined
  if (literal !== undefined && Math.abs(literal) > HOIST_MAX_FACTOR) return undefined
  return {
    at: (value) => at(index, v, value),
    stride: literal === undefined ? toF64(C!) : f64Lit(literal),
    sign: literal === undefined ? undefined : Math.sign(literal),
    unit: literal === 1 || literal === -1,
    length,
    invariant: literal === 0,
  }
}

/**
 * The statements right after a loop that read the range it saved (\`$start(v)\`, \`$stop(v)\`,
 * \`$step(v)\`): the \`loopRange\` assert that \`insert-checks\` places after a loop whose body
 * writes what its range reads, with the bounds asserts of the range's elements before it. Their
 * number, from \`rest[0]\` on (0 where the loop has none).
 */
function rangeAsserts(v: string, rest: readonly Stmt[]): number {
  for (let k = 0; k < rest.length; k++) {
    const a = rest[k]!
    if (a.kind !== 'assert') return 0
    if (a.check === 'loopRange') return saves(a.cond, v) ? k + 1 : 0
    if (a.check !== 'outOfBounds') return 0
  }
  return 0
}

/** Whether \`e\` reads the range that the loop of variable \`v\` saved. */
function saves(e: Expr, v: string): boolean {
  let found = false
  rewriteExpr(e, (x) => {
    if (x.kind === 'call' && ['$start', '$stop', '$step'].includes(x.callee)) {
      const a = x.args[0]
      if (a?.kind === 'var' && a.name === v) found = true
    }
    return x
  })
  return found
}

/** A deep copy of a tree of plain objects and arrays (the AST of a statement). */
function copyTree<T>(x: T): T {
  if (Array.isArray(x)) return x.map(copyTree) as T
  if (x === null || typeof x !== 'object' || Object.getPrototypeOf(x) !== Object.prototype) return x
  const out: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(x)) out[k] = copyTree(v)
  return out as T
}

const and = (l: Expr, r: Expr): Expr => bin('&&', l, r)

function hoistBlock(body: Stmt[], program: Program, versions: boolean, nests: boolean): Stmt[] {
  const out: Stmt[] = []
  for (let k = 0; k < body.length; k++) {
    const s = body[k]!
    switch (s.kind) {
      case 'if':
        out.push({
          ...s,
          then: hoistBlock(s.then, program, versions, nests),
          else: hoistBlock(s.else, program, versions, nests),
        })
        break
      case 'while':
        out.push({ ...s, body: hoistBlock(s.body, program, versions, nests) })
        break
      case 'for': {
        const inner = { ...s, body: hoistBlock(s.body, program, versions, nests) }
        const versioned = versions && statementCount([s]) <= VERSION_MAX_STATEMENTS
        const h = hoistLoop(inner, program, versioned && nests)
        if (!h) out.push(inner)
        else if (!versioned) out.push(...h.asserts, h.loop)
        else {
          // the loop in two versions: without the hoisted asserts where they hold, as written
          // (every access checked in its iteration) where one does not, so that a loop that fails
          // fails as the reference does (see the module comment); the asserts after the loop of
          // the range it saved go with each (they read that loop's range)
          const n = rangeAsserts(s.variable, body.slice(k + 1))
          const after = body.slice(k + 1, k + 1 + n)
          k += n
          // (each hoisted condition is \`!runs || c\`: one \`!runs\` for all; the inner loops' tests
          // hoisted are conditions already)
          const conds = [
            ...h.asserts.map((a) => (a.cond.kind === 'binary' && a.cond.op === '||' ? a.cond.right : a.cond)),
            ...h.conds,
          ]
          const test = bin('||', h.idle, conds.map(condExpr).reduce(and))
          const version: Stmt = {
            kind: 'if',
            pre: test,
            post: null,
            then: [h.loop, ...after],
            else: copyTree([s, ...after]),
            failing: true,
            ...(s.loc ? { loc: s.loc } : {}),
          }
          guards.set(version, { idle: h.idle, conds })
          out.push(version)
        }
        break
      }
      default:
        out.push(s)
    }
  }
  return out
}

/**
 * One function with the bounds checks of its loops hoisted where it can (see the module comment):
 * in two versions of each loop (\`versions\`, the default), or as asserts before it; with
 * \`nests\` (the default), versioned inner loops' tests hoisted over the loops around them.
 */
export function hoistBoundsFunction(f: FunctionDef, program: Program, versions = true, nests = true): FunctionDef {
  return { ...f, body: hoistBlock(f.body, program, versions, nests) }
}

/**
 * Hoists the loops' bounds checks of a program and its inverses (only with checks on: there are
 * none otherwise). \`versions\` (default true): each loop whose checks move runs in two versions,
 * the errors the reference's (see the module comment); false: the hoisted asserts before the loop
 * (an error out of range raised before the loop starts: the wasm backend's bounds without checks).
 * \`nests\` (default true): the tests of versioned inner loops hoisted over the loops around them
 * (the wasm backend passes false: see the module comment).
 */
export function hoistBounds(
  program: Program,
  inverses: Map<string, FunctionDef>,
  options: CompileOptions,
  versions = true,
  nests = true,
): { program: Program; inverses: Map<string, FunctionDef> } {
  if (!options.checks) return { program, inverses }
  const each = (d: FunctionDef) => hoistBoundsFunction(d, program, versions, nests)
  const functions = new Map([...program.functions].map(([n, d]) => [n, each(d)]))
  return {
    program: { ...program, functions },
    inverses: new Map([...inverses].map(([n, d]) => [n, each(d)])),
  }
}
