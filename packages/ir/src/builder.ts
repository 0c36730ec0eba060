/**
 * The builder API: the same IR as the text syntax, built from TypeScript. Every function
 * returns a plain node; pass the result of `fn(...)` to `rev.fromIR` (or `compileModule`).
 *
 * ```ts
 * import { build as b } from '@tenet/ir'
 * const f = b.fn('f', [b.param('y'), b.param('x')], [b.plusEq(b.v('y'), b.mul(b.v('x'), b.v('x')))])
 * ```
 */
import type {
  Arg,
  BinaryOp,
  Dataview,
  Expr,
  FieldExpr,
  FunctionDef,
  IndexExpr,
  Module,
  Param,
  ScalarTypeName,
  Stmt,
  Type,
  UpdateOp,
  VarRef,
} from './ast.js'

type ExprLike = Expr | number | boolean
const lift = (e: ExprLike): Expr =>
  typeof e === 'number'
    ? { kind: 'num', value: e, isFloat: !Number.isInteger(e) }
    : typeof e === 'boolean'
      ? { kind: 'bool', value: e }
      : e

/** A type from its written form: `'f64'`, `'i32[]'`, `'stack<f64>'`. */
export function type(t: string): Type {
  const s = /^stack<(\w+)>$/.exec(t)
  if (s) return { kind: 'stack', elem: s[1]! }
  if (t.endsWith('[]')) return { kind: 'array', elem: t.slice(0, -2) }
  return { kind: 'scalar', name: t as ScalarTypeName }
}
/** A parameter (type defaults to f64). */
export const param = (name: string, t = 'f64'): Param => ({ name, type: type(t) })
/** A function definition. */
export const fn = (name: string, params: Param[], body: Stmt[]): FunctionDef => ({ kind: 'fn', name, params, body })
/** A module of functions (with optional interpolated host values). */
export const module = (functions: FunctionDef[], hosts: unknown[] = []): Module => ({
  kind: 'module',
  functions,
  hosts,
})

// expressions
/** A variable reference. */
export const v = (name: string): VarRef => ({ kind: 'var', name })
/** A float literal (always f64). */
export const f = (value: number): Expr => ({ kind: 'num', value, isFloat: true })
/** An integer literal (i32 where expected, f64 otherwise). */
export const int = (value: number): Expr => ({ kind: 'num', value, isFloat: false })
/** An array element `a[i]`. */
export const at = (array: string | VarRef, index: ExprLike): IndexExpr => ({
  kind: 'index',
  array: typeof array === 'string' ? v(array) : array,
  index: lift(index),
})
/** A field `x.name`. */
export const field = (target: Expr, name: string): FieldExpr => ({ kind: 'field', target, field: name })
/** The negated dataview `-x`. */
export const neg = (target: Dataview): Dataview => ({ kind: 'neg', target })
const bin =
  (op: BinaryOp) =>
  (a: ExprLike, b: ExprLike): Expr => ({ kind: 'binary', op, left: lift(a), right: lift(b) })
export const add = bin('+'),
  sub = bin('-'),
  mul = bin('*'),
  div = bin('/'),
  mod = bin('%'),
  pow = bin('**')
export const eq = bin('=='),
  ne = bin('!='),
  lt = bin('<'),
  le = bin('<='),
  gt = bin('>'),
  ge = bin('>=')
export const and = bin('&&'),
  or = bin('||'),
  xor = bin('^')
/** Unary minus of an expression. */
export const negate = (a: ExprLike): Expr => ({ kind: 'unary', op: '-', arg: lift(a) })
/** Logical not. */
export const not = (a: ExprLike): Expr => ({ kind: 'unary', op: '!', arg: lift(a) })
/** A call of a pure primitive or conversion in an expression: `call('sin', x)`. */
export const call = (callee: string, ...args: ExprLike[]): Expr => ({ kind: 'call', callee, args: args.map(lift) })

// statements
const upd =
  (op: UpdateOp) =>
  (target: Dataview, value: ExprLike): Stmt => ({ kind: 'update', op, target, value: lift(value) })
/** `target += value` */
export const plusEq = upd('+=')
/** `target -= value` */
export const minusEq = upd('-=')
/** `target ^= value` */
export const xorEq = upd('^=')
/** `target *= value` (number systems where it is bijective) */
export const timesEq = upd('*=')
/** `target /= value` */
export const divEq = upd('/=')
/** A call of a reversible function or bijection: `callStmt('f', [a, b])`. */
export const callStmt = (callee: string, args: Array<Arg | number>): Stmt => ({
  kind: 'callstmt',
  callee,
  args: args.map((a) => (typeof a === 'number' ? lift(a) : a)),
  inverse: false,
})
/** An uncall `~f(args)`. */
export const uncall = (callee: string, args: Array<Arg | number>): Stmt => ({
  kind: 'callstmt',
  callee,
  args: args.map((a) => (typeof a === 'number' ? lift(a) : a)),
  inverse: true,
})
/** `SWAP(a, b)` */
export const swap = (a: Dataview, b: Dataview): Stmt => callStmt('SWAP', [a, b])
/** `name <- value` (optionally typed). */
export const alloc = (name: string, value: ExprLike, t?: string): Stmt => ({
  kind: 'alloc',
  name,
  value: lift(value),
  ...(t ? { declared: type(t) } : {}),
})
/** `name -> value` */
export const dealloc = (name: string, value: ExprLike): Stmt => ({ kind: 'dealloc', name, value: lift(value) })
/** `if (pre, post) { then } else { else }`; `post` undefined means `~`. */
export const if_ = (pre: ExprLike, post: ExprLike | undefined, then: Stmt[], otherwise: Stmt[] = []): Stmt => ({
  kind: 'if',
  pre: lift(pre),
  post: post === undefined ? null : lift(post),
  then,
  else: otherwise,
})
/** `while (pre, post) { body }` */
export const while_ = (pre: ExprLike, post: ExprLike, body: Stmt[]): Stmt => ({
  kind: 'while',
  pre: lift(pre),
  post: lift(post),
  body,
})
/** `for variable in start..stop by step` (`inclusive` for `..=`). */
export const for_ = (
  variable: string,
  start: ExprLike,
  stop: ExprLike,
  body: Stmt[],
  opts: { step?: ExprLike; inclusive?: boolean } = {},
): Stmt => ({
  kind: 'for',
  variable,
  start: lift(start),
  stop: lift(stop),
  step: opts.step === undefined ? null : lift(opts.step),
  inclusive: !!opts.inclusive,
  body,
})
/** `routine { body }` */
export const routine = (body: Stmt[]): Stmt => ({ kind: 'routine', body })
/** `~routine` */
export const unroutine = (): Stmt => ({ kind: 'unroutine' })
/** `~{ body }` */
export const inverse = (body: Stmt[]): Stmt => ({ kind: 'invblock', body })
/** `push(stack, x)` */
export const push = (stack: string, value: Dataview): Stmt => ({ kind: 'push', stack: v(stack), value })
/** `pop(stack, x)` */
export const pop = (stack: string, value: Dataview): Stmt => ({ kind: 'pop', stack: v(stack), value })
/** `@unchecked { body }` */
export const unchecked = (body: Stmt[]): Stmt => ({ kind: 'unchecked', body })
/** `@safe expr` */
export const safe = (expr: Expr): Stmt => ({ kind: 'safe', expr })
