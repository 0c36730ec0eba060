/**
 * Lane pairs (superword parallelism): two consecutive f64 updates that do the same arithmetic on
 * different values, such as the directions k and k+1 of a tangent (`t$k$y += c · t$k$x`,
 * `t$y[i·w + k] += c · t$x[i·w + k]`), run as one f64x2 update. Each SIMD lane rounds exactly as
 * the scalar instruction does, so the results are bit for bit those of the two statements.
 *
 * This module only plans: `planPair` zips the two value trees into a tree of vector operations
 * whose leaves are loads of adjacent elements, values equal in both statements (computed once,
 * then splat) or two scalar values (computed separately, then combined); the code generator emits
 * the plan.
 */
import type { Dataview, Expr, Stmt } from '@tenet/ir'
import { callsHost, key, offsetOf, readNames, rootName } from '@tenet/ir/backend'

/** A node of a planned f64x2 computation. */
export type Lanes =
  /** The same value in both lanes (evaluated once, as the first statement's expression). */
  | { kind: 'splat'; expr: Expr }
  /** Two scalar values, one per lane. */
  | { kind: 'scalars'; a: Expr; b: Expr }
  /** `array[index]` and `array[index + 1]`: one 16-byte load. */
  | { kind: 'load'; array: string; index: Expr; a: Expr; b: Expr }
  /** `array[index]` and `array[index + 1]` held by the loop as the lanes of one f64x2 local. */
  | { kind: 'held'; array: string; index: Expr; a: Expr; b: Expr }
  /** Two f64 locals held as lanes 0 and 1 of one f64x2 local (see \`twins.ts\`). */
  | { kind: 'vars'; name: string; a: Expr; b: Expr }
  | { kind: 'binary'; op: '+' | '-' | '*' | '/'; left: Lanes; right: Lanes; a: Expr; b: Expr }
  /** `x ** 2` in both lanes: x·x, as the scalar code computes it. */
  | { kind: 'square'; arg: Lanes; a: Expr; b: Expr }
  /** A native unary or binary instruction (`neg`, `sqrt`, `abs`, `min`, `max`). */
  | { kind: 'native'; op: VectorNative; args: Lanes[]; a: Expr; b: Expr }
  /**
   * A math function of both lanes by an f64x2 routine of the module (\`__exp_f64x2\`, …) whose
   * lanes are the scalar routine's doubles bit for bit (see \`math/\`).
   */
  | { kind: 'math'; routine: string; args: Lanes[]; a: Expr; b: Expr }

export type VectorNative = 'neg' | 'sqrt' | 'abs' | 'min' | 'max'

/** Where the two updates write. */
export type PairTarget =
  /** `array[index]` and `array[index + 1]`: one 16-byte load and store. */
  | { kind: 'elements'; array: string; index: Expr }
  /** `array[index]` and `array[index + 1]` held by the loop as the lanes of one f64x2 local. */
  | { kind: 'held'; array: string; index: Expr }
  /** Two f64 locals held as lanes 0 and 1 of one f64x2 local (\`name\` is lane 0's; see \`twins.ts\`). */
  | { kind: 'vars'; name: string }
  /** Two separate places (scalars, elements held in their own locals, or elements of different arrays). */
  | { kind: 'separate' }

export interface PairPlan {
  op: '+=' | '-='
  target: PairTarget
  value: Lanes
}

/** What the planner needs to know of the code generator's state. */
export interface LaneContext {
  /** The element type of an array (undefined for a name that is not an array). */
  elem(array: string): string | undefined
  /** Whether an element is held in a local by the current loop (it is then not in memory). */
  promoted(array: string, index: Expr): boolean
  /** Whether elements a and b (= a + 1) are held as lanes 0 and 1 of one f64x2 local. */
  heldTogether(array: string, a: Expr, b: Expr): boolean
  /** Whether locals a and b are held as lanes 0 and 1 of one f64x2 local (see \`twins.ts\`). */
  twinVars(a: string, b: string): boolean
  /** The vector instruction of a call whose scalar code uses a native f64 instruction, if any. */
  native(call: Extract<Expr, { kind: 'call' }>): VectorNative | undefined
  /**
   * The f64x2 math routine standing for a call whose scalar code calls an in-module math routine,
   * if there is one.
   */
  vectorMath(call: Extract<Expr, { kind: 'call' }>): string | undefined
}

/** Whether index b is index a + 1 (same base, constant offsets one apart). */
function nextIndex(a: Expr, b: Expr): boolean {
  const [ka, ca] = offsetOf(a),
    [kb, cb] = offsetOf(b)
  return ka === kb && cb === ca + 1
}

const isF64 = (e: Expr) => e.type === 'f64'

/** A plain (not negated, not field) element or variable target. */
function plain(t: Dataview): t is Extract<Dataview, { kind: 'var' | 'index' }> {
  return t.kind === 'var' || t.kind === 'index'
}

/** Counts the vector instructions of a plan that replace two scalar ones (its benefit). */
function gain(l: Lanes): number {
  switch (l.kind) {
    case 'splat':
      return 0
    case 'scalars':
      return -1
    case 'load':
    case 'held':
    case 'vars':
      return 2
    case 'binary':
      return 1 + gain(l.left) + gain(l.right)
    case 'square':
      return 1 + gain(l.arg)
    case 'native':
      return 1 + l.args.reduce((s, x) => s + gain(x), 0)
    case 'math':
      // one routine run for two (and no lane extracted to call one)
      return 2 + l.args.reduce((s, x) => s + gain(x), 0)
  }
}

function zip(a: Expr, b: Expr, cx: LaneContext): Lanes {
  if (key(a) === key(b)) return { kind: 'splat', expr: a }
  const pair = { a, b }
  if (!isF64(a) || !isF64(b)) return { kind: 'scalars', ...pair }
  if (a.kind === 'var' && b.kind === 'var' && cx.twinVars(a.name, b.name))
    return { kind: 'vars', name: a.name, ...pair }
  if (a.kind === 'binary' && b.kind === 'binary' && a.op === b.op) {
    if (
      (a.op === '+' || a.op === '-' || a.op === '*' || a.op === '/') &&
      isF64(a.left) &&
      isF64(a.right) &&
      isF64(b.left) &&
      isF64(b.right)
    ) {
      return { kind: 'binary', op: a.op, left: zip(a.left, b.left, cx), right: zip(a.right, b.right, cx), ...pair }
    }
    if (
      a.op === '**' &&
      a.right.kind === 'num' &&
      a.right.value === 2 &&
      key(a.right) === key(b.right) &&
      isF64(a.left) &&
      isF64(b.left)
    ) {
      return { kind: 'square', arg: zip(a.left, b.left, cx), ...pair }
    }
  }
  if (a.kind === 'unary' && b.kind === 'unary' && a.op === '-' && b.op === '-' && isF64(a.arg) && isF64(b.arg)) {
    return { kind: 'native', op: 'neg', args: [zip(a.arg, b.arg, cx)], ...pair }
  }
  if (a.kind === 'call' && b.kind === 'call' && a.callee === b.callee && a.args.length === b.args.length) {
    const op = cx.native(a)
    if (op && a.args.every((x) => isF64(x as Expr)) && b.args.every((x) => isF64(x as Expr))) {
      return { kind: 'native', op, args: a.args.map((x, i) => zip(x as Expr, b.args[i] as Expr, cx)), ...pair }
    }
    const routine = cx.vectorMath(a)
    if (routine && a.args.every((x) => isF64(x as Expr)) && b.args.every((x) => isF64(x as Expr))) {
      return { kind: 'math', routine, args: a.args.map((x, i) => zip(x as Expr, b.args[i] as Expr, cx)), ...pair }
    }
  }
  if (
    a.kind === 'index' &&
    b.kind === 'index' &&
    a.array.name === b.array.name &&
    nextIndex(a.index, b.index) &&
    cx.heldTogether(a.array.name, a.index, b.index)
  ) {
    return { kind: 'held', array: a.array.name, index: a.index, ...pair }
  }
  if (
    a.kind === 'index' &&
    b.kind === 'index' &&
    a.array.name === b.array.name &&
    cx.elem(a.array.name) === 'f64' &&
    !cx.promoted(a.array.name, a.index) &&
    !cx.promoted(b.array.name, b.index) &&
    nextIndex(a.index, b.index)
  ) {
    return { kind: 'load', array: a.array.name, index: a.index, ...pair }
  }
  return { kind: 'scalars', ...pair }
}

/**
 * Plans statements `s` and `t` (consecutive, in this order) as one f64x2 update, or returns null
 * when that would change the results or gain nothing. Running them together reads t's operands
 * before s has written, so t must not read what s writes; the two must write different places.
 */
export function planPair(s: Stmt, t: Stmt, cx: LaneContext): PairPlan | null {
  if (s.kind !== 'update' || t.kind !== 'update' || s.op !== t.op || (s.op !== '+=' && s.op !== '-=')) return null
  if (s.distinct?.length || t.distinct?.length) return null
  const sa = s.target,
    ta = t.target
  if (!plain(sa) || !plain(ta) || sa.type !== 'f64' || ta.type !== 'f64' || !isF64(s.value) || !isF64(t.value))
    return null
  // host functions run as often and in the order the scalar code calls them
  if (
    [s.value, t.value, ...(sa.kind === 'index' ? [sa.index] : []), ...(ta.kind === 'index' ? [ta.index] : [])].some(
      callsHost,
    )
  )
    return null
  const written = rootName(sa)!
  const reads = readNames(t.value)
  if (reads.has(written) || (ta.kind === 'index' && readNames(ta.index).has(written))) return null
  let target: PairTarget
  if (sa.kind === 'var' && ta.kind === 'var' && cx.twinVars(sa.name, ta.name)) {
    target = { kind: 'vars', name: sa.name }
  } else if (sa.kind === ta.kind && key(sa) === key(ta)) {
    // one place added into twice (an accumulator of paired iterations): both values computed,
    // then lane 0 and lane 1 added in turn, as the two statements add them
    target = { kind: 'separate' }
  } else if (sa.kind === 'index' && ta.kind === 'index' && sa.array.name === ta.array.name) {
    // the same array: only two adjacent elements (one 16-byte store unless held in locals)
    if (cx.elem(sa.array.name) !== 'f64' || !nextIndex(sa.index, ta.index)) return null
    const inLocals = cx.promoted(sa.array.name, sa.index) || cx.promoted(ta.array.name, ta.index)
    target = cx.heldTogether(sa.array.name, sa.index, ta.index)
      ? { kind: 'held', array: sa.array.name, index: sa.index }
      : inLocals
        ? { kind: 'separate' }
        : { kind: 'elements', array: sa.array.name, index: sa.index }
  } else {
    if (rootName(ta) === written) return null
    target = { kind: 'separate' }
  }
  const value = zip(s.value, t.value, cx)
  if (value.kind === 'splat' || gain(value) + (target.kind === 'separate' ? 0 : 2) < 2) return null
  return { op: s.op, target, value }
}
