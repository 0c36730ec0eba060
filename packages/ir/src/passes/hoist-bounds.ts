/**
 * `hoist-bounds`: the bounds checks of a loop whose indices are affine in its variable, checked
 * once before the loop instead of once per iteration. It runs after `insert-checks` (so only with
 * checks on); the cpu and wasm backends run it, the interpreter (the reference) does not.
 *
 * In the body of `for v in a..b` (or `..=`, step 1 or −1, either direction), an assert
 * `outOfBounds($inrange(e, len(x)))` that runs on every iteration (a statement of the body itself,
 * not inside an `if` or an inner loop) moves before the loop when
 * - `e` is c·v + D with c an integer literal (|c| ≤ 2²⁰) or an expression C of the same kind as D
 *   (a column stride: `x[i + m * l]` in a loop over l), and D made of names the body does not
 *   write (nor v), literals, `+ - *` and lengths, with no host call in it;
 * - the body neither allocates nor deallocates `x` (its length is fixed while the loop runs);
 * - the range reads no host function (it is evaluated once more, before the loop).
 * It becomes two asserts before the loop, one per end of the range (the end the loop visits first
 * is checked first), each true when the loop does not run: c·v + D is evaluated in f64 at the two
 * ends, where it is exact, and both in [0, len(x)) means every value between them is, so no
 * iteration's index (the same value in i32, since it is in range) is out of range. An index the
 * loop does not change (c = 0) is checked once, when the loop runs. The accesses keep their
 * `inBounds` mark. Of hoisted asserts with the same condition (one element accessed twice in the
 * body), the first stays: the others would test the same values right after it.
 *
 * A symbolic stride C is evaluated as the program does (i32, so C and D are the i32 values C′ and
 * D′ the iterations use), and f64(v)·f64(C′) + f64(D′) at the two ends: i32 `+ - *` is arithmetic
 * modulo 2³², so each iteration's index is C′·v + D′ reduced modulo 2³², which is C′·v + D′ itself
 * wherever that lies in [0, 2³¹). The f64 value is exact while |C′·v| ≤ 2⁵³ (and the comparison
 * with the length exact), and beyond that rounding, which is monotone, keeps it at least 2⁵³ − 2³¹
 * in magnitude, out of range like the exact value: so both ends pass only when every iteration's
 * exact C′·v + D′, between them, is in range, and then no access is out of range.
 *
 * What changes for a program that fails: the error (`runtime/out-of-bounds`, the same code and
 * location) is raised before the loop starts, not in the iteration that reaches the bad index, so
 * the iterations before it have not run; when the end the loop visits last is the bad one, the
 * message names that end's index (the per-iteration check named the first index out of range);
 * and when another check would have failed in an earlier iteration, the program now fails with
 * this one instead. An index whose exact value leaves the i32 range is reported with that value
 * (per iteration, its wrapped value was checked). The range itself is the one the loop saves when
 * it starts: a body that changes it fails the `loopRange` check after the loop, as before.
 *
 * Not hoisted: loops with another step (the last value needs a division), `while` loops (no trip
 * count), asserts under an `if` (they may not run) and indices that are not affine.
 */
import type { Arg, AssertStmt, Expr, FunctionDef, Stmt } from '../ast.js'
import { readNames, rootName, walk } from '../check.js'
import type { CompileOptions, Program } from '../plugin.js'
import { rewriteExpr } from './rewrite.js'
import { callsHost } from './insert-checks.js'
import { key } from '../cse.js'

/** The largest |c| hoisted: c·v + D stays exact in f64 (|v|, |D| < 2³¹). */
export const HOIST_MAX_FACTOR = 2 ** 20

const i32 = (value: number): Expr => ({ kind: 'num', value, isFloat: false, type: 'i32' })
const f64Lit = (value: number): Expr => ({ kind: 'num', value, isFloat: true, type: 'f64' })
const toF64 = (e: Expr): Expr =>
  e.kind === 'num' ? f64Lit(e.value) : { kind: 'call', callee: 'f64', args: [e], type: 'f64' }
const bin = (op: '+' | '-' | '*' | '<' | '<=' | '>' | '>=' | '&&' | '||', left: Expr, right: Expr): Expr => ({
  kind: 'binary',
  op,
  left,
  right,
  type: ['+', '-', '*'].includes(op) ? (left.type as string) : 'bool',
})
const not = (arg: Expr): Expr => ({ kind: 'unary', op: '!', arg, type: 'bool' })

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

/** `e` with `v` replaced by 0 (D of c·v + D), the zeros folded away. */
const atZero = (e: Expr, v: string): Expr =>
  rewriteExpr(e, (x) => {
    if (x.kind === 'var' && x.name === v) return i32(0)
    if (x.kind !== 'binary') return x
    if (x.op === '*' && (isZero(x.left) || isZero(x.right))) return i32(0)
    if ((x.op === '+' || x.op === '-') && isZero(x.right)) return x.left
    if (x.op === '+' && isZero(x.left)) return x.right
    return x
  }) as Expr

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
        break
      case 'callstmt': {
        const writes = s.target === 'function' ? program.writes.get(s.callee) : undefined
        s.args.forEach((a, i) => {
          const r = rootName(a)
          if (r !== undefined && (!writes || writes[i])) w.add(r)
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

/** The hoisted form of a loop's per-iteration bounds asserts, or undefined (see the module comment). */
function hoistLoop(s: Extract<Stmt, { kind: 'for' }>, program: Program): Stmt[] | undefined {
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
  for (const a of s.body) {
    const h = a.kind === 'assert' ? hoistAssert(a, s.variable, changed) : undefined
    if (!h || a.kind !== 'assert') {
      body.push(a)
      continue
    }
    if (h.invariant) {
      // an index the loop does not change: checked once
      hoisted.push({ ...a, cond: bin('||', not(runs), a.cond) })
      continue
    }
    const ends = s.reverse ? [last, first] : [first, last]
    for (const end of ends) {
      const e = h.at(end)
      hoisted.push({
        ...a,
        cond: bin('||', not(runs), bin('&&', bin('<=', f64Lit(0), e), bin('<', e, toF64(h.length)))),
        args: [a.args[0]!, e, h.length],
      })
    }
  }
  if (!hoisted.length) return undefined
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
  return [...once, { ...s, body }]
}

/** For a hoistable bounds assert: its index at a value of the loop variable (in f64) and the length. */
function hoistAssert(
  a: AssertStmt,
  v: string,
  changed: Set<string>,
): { at: (value: Expr) => Expr; length: Expr; invariant: boolean } | undefined {
  if (a.check !== 'outOfBounds' || a.cond.kind !== 'call' || a.cond.callee !== '$inrange') return undefined
  const [index, length] = a.cond.args as [Expr, Expr]
  if (length.kind !== 'call' || length.callee !== 'len' || length.args[0]?.kind !== 'var') return undefined
  if (changed.has(`len:${length.args[0].name}`)) return undefined
  if (callsHost(index)) return undefined
  const literal = factor(index, v)
  // a stride that is not a literal: C of C·v + D, read before the loop as D is (see the module comment)
  const C = literal === undefined ? coefficient(index, v) : undefined
  if (literal === undefined && (C === undefined || !plain(C) || [...readNames(C)].some((n) => changed.has(n))))
    return undefined
  if (literal !== undefined && Math.abs(literal) > HOIST_MAX_FACTOR) return undefined
  const d = atZero(index, v)
  // D is evaluated before the loop: names, literals, arithmetic and lengths only (an element it
  // read would not have been checked yet there)
  if (!plain(d)) return undefined
  for (const n of readNames(d)) if (changed.has(n)) return undefined
  const dF = toF64(d)
  return {
    at: (value) => {
      const c = literal
      const cv =
        c === undefined
          ? value.kind === 'num' && value.value === 0
            ? f64Lit(0)
            : bin('*', toF64(value), toF64(C!))
          : value.kind === 'num'
            ? f64Lit(c * value.value)
            : c === 1
              ? toF64(value)
              : bin('*', toF64(value), f64Lit(c))
      // (a symbolic stride at v = 0: D alone)
      if (c === undefined && cv.kind === 'num') return dF
      return d.kind === 'num' && d.value === 0 ? cv : bin('+', cv, dF)
    },
    length,
    invariant: literal === 0,
  }
}

function hoistBlock(body: Stmt[], program: Program): Stmt[] {
  return body.flatMap((s): Stmt[] => {
    switch (s.kind) {
      case 'if':
        return [{ ...s, then: hoistBlock(s.then, program), else: hoistBlock(s.else, program) }]
      case 'while':
        return [{ ...s, body: hoistBlock(s.body, program) }]
      case 'for': {
        const inner = { ...s, body: hoistBlock(s.body, program) }
        return hoistLoop(inner, program) ?? [inner]
      }
      default:
        return [s]
    }
  })
}

/** One function with the bounds checks of its loops hoisted where it can (see the module comment). */
export function hoistBoundsFunction(f: FunctionDef, program: Program): FunctionDef {
  return { ...f, body: hoistBlock(f.body, program) }
}

/** Hoists the loops' bounds checks of a program and its inverses (only with checks on: there are none otherwise). */
export function hoistBounds(
  program: Program,
  inverses: Map<string, FunctionDef>,
  options: CompileOptions,
): { program: Program; inverses: Map<string, FunctionDef> } {
  if (!options.checks) return { program, inverses }
  const functions = new Map([...program.functions].map(([n, d]) => [n, hoistBoundsFunction(d, program)]))
  return {
    program: { ...program, functions },
    inverses: new Map([...inverses].map(([n, d]) => [n, hoistBoundsFunction(d, program)])),
  }
}
