/**
 * Pass `unroll`: a `for` loop whose range is made of integer literals and runs a few times
 * (`for c in 0..3 { dx[c] += x[3 * j + c] - x[3 * i + c] }`) becomes that many copies of its
 * body with the loop variable replaced by each value. The copies index small arrays at constant
 * positions, which is what `scalar-arrays` needs to keep such an array in locals, and the loop's
 * counter and range checks go (a literal range cannot change while the loop runs). The order of
 * the copies is the loop's order, so the result is the same to the last bit. Run-time errors in a
 * copy print the variable, not its value (`Substituted.shown`), as the loop's did.
 */
import type { Expr, FunctionDef, Stmt } from '../ast.js'
import { walk } from '../check.js'
import { rewriteBlock } from './rewrite.js'
import { printAsWritten, shownAsWritten } from '../printer.js'

/** Loops of at most this many iterations are unrolled. */
export const UNROLL_MAX_TRIPS = 4
/** … when their body has at most this many statements (nested ones included). */
export const UNROLL_MAX_STATEMENTS = 6

type ForStmt = Extract<Stmt, { kind: 'for' }>

const intLiteral = (e: Expr | null): number | undefined =>
  e && e.kind === 'num' && Number.isInteger(e.value) ? e.value : undefined

/** The values a loop's variable takes, in order, when its range is literal and short; else undefined. */
export function literalTrips(s: ForStmt): number[] | undefined {
  const a = intLiteral(s.start),
    b = intLiteral(s.stop),
    step = s.step ? intLiteral(s.step) : 1
  if (a === undefined || b === undefined || step === undefined || step === 0) return undefined
  const values: number[] = []
  for (let v = a; step > 0 ? (s.inclusive ? v <= b : v < b) : s.inclusive ? v >= b : v > b; v += step) {
    values.push(v)
    if (values.length > UNROLL_MAX_TRIPS) return undefined
  }
  return s.reverse ? values.reverse() : values
}

function size(body: Stmt[]): number {
  let n = 0
  walk(body, () => {
    n++
  })
  return n
}

/** Integer literals above this magnitude are not combined (their sum stays a small i32). */
const FOLD_LIMIT = 2 ** 30

/**
 * An i32 `(a ± k₁) ± k₂` of literals k₁, k₂ as `a ± k` (`rm[pk + c - 1]`, copy c = 2:
 * `rm[pk + 2 - 1]` is `rm[pk + 1]`), or undefined. i32 arithmetic wraps on every backend, so the
 * two are the same value in every case; written alike, the indices of one element are seen to be
 * one (a code generator keeps an element that a run writes and reads again in a local).
 */
function foldOffsets(e: Extract<Expr, { kind: 'binary' }>): Expr | undefined {
  const inner = e.left
  if (
    (e.op !== '+' && e.op !== '-') ||
    inner.kind !== 'binary' ||
    (inner.op !== '+' && inner.op !== '-') ||
    inner.type !== 'i32'
  )
    return undefined
  const k2 = intLiteral(e.right),
    k1 = intLiteral(inner.right)
  if (k1 === undefined || k2 === undefined || Math.abs(k1) > FOLD_LIMIT || Math.abs(k2) > FOLD_LIMIT) return undefined
  const k = (inner.op === '+' ? k1 : -k1) + (e.op === '+' ? k2 : -k2)
  if (k === 0) return inner.left
  const right: Expr = { ...(e.right as Extract<Expr, { kind: 'num' }>), value: Math.abs(k) }
  return { ...e, op: k > 0 ? '+' : '-', left: inner.left, right }
}

/**
 * The body of one iteration with the loop variable replaced by `value`. The literal prints as the
 * variable in run-time errors, and so does an expression folded around it (`Substituted.shown`):
 * a check in the copy words its message as the source does (`t -> x[j] * 2.0`, not `x[0]`).
 */
function instance(s: ForStmt, value: number): Stmt[] {
  const literal: Expr = { kind: 'num', value, isFloat: false, type: 'i32', ...(s.loc ? { loc: s.loc } : {}) }
  const zero = (e: Expr) => e.kind === 'num' && e.value === 0
  return rewriteBlock(
    s.body,
    (e) => {
      if (e.kind === 'var' && e.name === s.variable) return { ...literal, shown: e.shown ?? e.name }
      if (e.kind === 'binary' && (e.op === '+' || e.op === '-') && e.type === 'i32') {
        // an integer `k + 0` (the first copy of `x[3 * j + c]`) is k, and so is `k - 0`
        if (zero(e.right)) return shownAsWritten(e.left, printAsWritten(e))
        if (e.op === '+' && zero(e.left)) return shownAsWritten(e.right, printAsWritten(e))
        const folded = foldOffsets(e)
        return folded ? shownAsWritten(folded, printAsWritten(e)) : e
      }
      return e
    },
    (x) => x.kind === 'for' && x.variable === s.variable,
  )
}

/** `body` with its short literal loops unrolled (innermost first). */
export function unrollBlock(body: Stmt[]): Stmt[] {
  return body.flatMap((s): Stmt[] => {
    switch (s.kind) {
      case 'if':
        return [{ ...s, then: unrollBlock(s.then), else: unrollBlock(s.else) }]
      case 'while':
      case 'unchecked':
        return [{ ...s, body: unrollBlock(s.body) } as Stmt]
      case 'for': {
        const inner = unrollBlock(s.body)
        const trips = literalTrips(s)
        if (!trips || size(inner) > UNROLL_MAX_STATEMENTS) return [{ ...s, body: inner }]
        return trips.flatMap((v) => instance({ ...s, body: inner }, v))
      }
      default:
        return [s]
    }
  })
}

/** The function with its short literal loops unrolled. */
export function unrollLoops(f: FunctionDef): FunctionDef {
  return { ...f, body: unrollBlock(f.body) }
}
