/**
 * The Tenet IR. One set of node types serves as the surface tree (what the parser and the
 * builder produce, including the sugar `routine`, `~routine` and `~{ }`) and, after
 * `preprocess`, as the core IR (no sugar left, every expression typed). Nodes are plain
 * JSON-like objects so that transforms (invert, adjoint, tangent) can build them freely.
 */
import type { SourceLocation } from './loc.js'

/** Scalar type names. The number systems registered in a registry may add more. */
export type ScalarTypeName = 'f64' | 'f32' | 'i32' | 'bool' | (string & {})

/** A value type: a scalar, an array of scalars (a typed array at the host boundary), a stack. */
export type Type =
  | { kind: 'scalar'; name: ScalarTypeName }
  | { kind: 'array'; elem: ScalarTypeName }
  | { kind: 'stack'; elem: ScalarTypeName }

export type BinaryOp =
  | '+'
  | '-'
  | '*'
  | '/'
  | '%'
  | '**'
  | '=='
  | '!='
  | '<'
  | '<='
  | '>'
  | '>='
  | '&&'
  | '||'
  | '^'
  | '&'
  | '|'

export type UnaryOp = '-' | '!'

interface NodeBase {
  loc?: SourceLocation
}

/** Pure expressions. After checking, every expression carries its `type`. */
export type Expr = NumberLit | BoolLit | VarRef | IndexExpr | FieldExpr | UnaryExpr | BinaryExpr | CallExpr

/**
 * What an expression that a pass put in place of a name (a callee's parameter, a loop variable)
 * remembers of it.
 */
export interface Substituted {
  /**
   * The text the source wrote where this expression stands: set by inlining on the argument it
   * puts in a callee's parameter's place (the parameter's name), and by `unroll` on the literal it
   * puts in place of the loop variable (the variable) and on an expression it folds around it
   * (`k + c` with c = 0 is `k`, shown as `k + c`). A run-time error prints it (`printAsWritten` of
   * the printer), so that the message reads as the source its location points into, as it does
   * where the call is not inlined or the loop not unrolled. Ignored elsewhere (not printed, not
   * compared).
   */
  shown?: string
}

export interface NumberLit extends NodeBase, Substituted {
  kind: 'num'
  value: number
  /** `true` when written with a decimal point or exponent (then always f64). */
  isFloat: boolean
  type?: ScalarTypeName
}
export interface BoolLit extends NodeBase, Substituted {
  kind: 'bool'
  value: boolean
  type?: ScalarTypeName
}
export interface VarRef extends NodeBase, Substituted {
  kind: 'var'
  name: string
  type?: ScalarTypeName | Type
}
export interface IndexExpr extends NodeBase, Substituted {
  kind: 'index'
  array: VarRef
  index: Expr
  type?: ScalarTypeName
  /**
   * Set by the `insert-checks` and `hoist-bounds` passes: the index is known to be in range where
   * this access is evaluated (an assert just before it checked it, or a loop proves it), so an
   * engine that guards every access for memory safety need not guard this one.
   */
  inBounds?: boolean
  /**
   * Set by pass `tabulate` on a read of a table that holds a pure primitive's values at every
   * element of `checkedAs` (the array the program reads, of the same length): the run-time
   * bounds check of this access is that array's (`$inrange(i, len(checkedAs))`, its name in the
   * message), so that the program fails as it did without the table. Not printed.
   */
  checkedAs?: VarRef
}
export interface FieldExpr extends NodeBase {
  kind: 'field'
  target: Expr
  field: string
  type?: ScalarTypeName
}
export interface UnaryExpr extends NodeBase {
  kind: 'unary'
  op: UnaryOp
  arg: Expr
  type?: ScalarTypeName
}
export interface BinaryExpr extends NodeBase, Substituted {
  kind: 'binary'
  op: BinaryOp
  left: Expr
  right: Expr
  type?: ScalarTypeName
}
/**
 * A call inside an expression: a registered pure primitive (`sin(x)`), a conversion
 * (`f64(i)`), or a host function interpolated into the template (`callee` is `$host<N>`).
 */
export interface CallExpr extends NodeBase {
  kind: 'call'
  callee: string
  args: Expr[]
  type?: ScalarTypeName
}

/** A writable view of memory: `x`, `a[i]`, `x.re`, `-x`, and compositions. */
export type Dataview = VarRef | IndexExpr | FieldExpr | NegView
export interface NegView extends NodeBase {
  kind: 'neg'
  target: Dataview
  type?: ScalarTypeName
}

export type UpdateOp = '+=' | '-=' | '^=' | '*=' | '/='

export type Stmt =
  | UpdateStmt
  | CallStmt
  | AllocStmt
  | DeallocStmt
  | IfStmt
  | WhileStmt
  | ForStmt
  | PushStmt
  | PopStmt
  | SafeStmt
  | UncheckedStmt
  | RoutineStmt
  | UnroutineStmt
  | InverseBlockStmt
  | AssertStmt

/** `target op= value`: the value is a pure expression that does not read the target. */
export interface UpdateStmt extends NodeBase {
  kind: 'update'
  op: UpdateOp
  target: Dataview
  value: Expr
  /**
   * Set by a pass on the update that first writes an element of a fresh table (an ancilla whose
   * allocation is marked \`overwritten\`), known to hold zero there: a backend that skipped the
   * table's zeroing computes it as \`0 + value\` without reading the element. Also on the first
   * write of an element of a scratch parameter (see \`Param.scratch\`; pass \`contract-arrays\`),
   * zero at entry. A hint only (ignoring it is always right); not printed.
   */
  init?: boolean
}

/** An argument of a call: a dataview (written back after the call) or a pure expression. */
export type Arg = Expr | NegView

/**
 * A call of a reversible function or a registered bijection (`SWAP`, `ROT`, ...).
 * `inverse` is true for an uncall (`~f(...)`). `a <-> b` is `SWAP(a, b)`.
 */
export interface CallStmt extends NodeBase {
  kind: 'callstmt'
  callee: string
  args: Arg[]
  inverse: boolean
  /** Filled by the checker: what the callee resolved to. */
  target?: 'function' | 'bijection'
  /**
   * Set by the `tabulate` pass on a bijection call: values its lowering computes with a pure
   * primitive (ROT's cos θ and sin θ) that a table already holds, so a backend reads them there
   * instead of computing them (see `TabulatedValue`). Only an optimisation: ignoring it is correct.
   */
  tabulated?: TabulatedValue[]
}

/**
 * The pure unary primitive `callee` applied to argument `arg` of a bijection call has the value
 * of the element `read` of a table (set by the `tabulate` pass), or of the ancilla `read` (set by
 * the `hoist-calls` pass).
 */
export interface TabulatedValue {
  callee: string
  arg: number
  read: IndexExpr | VarRef
}

/** `name <- value` (or `name: type <- value`): allocate an ancilla. */
export interface AllocStmt extends NodeBase {
  kind: 'alloc'
  name: string
  declared?: Type
  value: Expr | EmptyStack
  type?: Type
  /**
   * Set by a pass on a \`zeros(n)\` table whose every element the program reads only after an
   * \`init\` update wrote it (see \`UpdateStmt.init\`) and whose deallocation is unchecked: a
   * backend that emits those updates as \`0 + value\` may skip zeroing the array (a reused one
   * keeps stale values only in elements nothing reads). A hint only; not printed.
   */
  overwritten?: boolean
}
/** `name -> value`: deallocate, checking that the ancilla holds `value`. */
export interface DeallocStmt extends NodeBase {
  kind: 'dealloc'
  name: string
  /** The declared type of the matching allocation (kept so that the inverse allocation is typed). */
  declared?: Type
  value: Expr | EmptyStack
  type?: Type
  /**
   * Set by pass `scalar-arrays` on the deallocation of element `index` of an array ancilla it
   * replaced by `length` scalars (`elementName(array, k)`, deallocated one after the other):
   * the run-time check stays the array's (`deallocArray`, naming `array` and `shown`, its
   * `zeros(n)` as written), placed once before element 0 over every element (see
   * `insert-checks.ts`). Not printed.
   */
  element?: { array: string; index: number; length: number; shown: string }
  /**
   * The name the source wrote, where a pass renamed the ancilla (pass \`jam-iterations\`' copies of
   * an iteration's ancillas, \`acc$b\` for \`acc\`): the deallocation check's message names it, as
   * the loop as written does. Not printed.
   */
  shown?: string
}
/** The empty stack `[]`, only as the value of a stack allocation or deallocation. */
export interface EmptyStack extends NodeBase {
  kind: 'emptystack'
}

/** `if (pre, post) { then } else { else }`; `post` null means `~` (same as pre). */
export interface IfStmt extends NodeBase {
  kind: 'if'
  pre: Expr
  post: Expr | null
  then: Stmt[]
  else: Stmt[]
  /**
   * Set by pass \`unroll-swaps\` on the \`if\` that ends a \`while\` body it unrolled: after the
   * \`else\` arm the loop's condition is false, so a backend may leave the loop there instead of
   * testing it again; and the statements before the \`if\` followed by its \`else\` arm are one
   * iteration of the loop, which a backend may run as the loop's body instead (the loop as it was,
   * where unrolling does not pay). A hint only (ignoring it is always right); not printed.
   */
  exits?: boolean
  /**
   * Set by the passes that guard their result with \`$apart\` tests (see \`passes/apart.ts\`): the
   * \`else\` arm is the code as written, which runs only where two array parameters share memory
   * (a rare path): the passes leave it as it is (it stays small). A hint only; not printed.
   */
  asWritten?: boolean
  /**
   * Set by the passes that run a rewritten loop only where its range fits (see
   * \`passes/range-guard.ts\`): the \`then\` arm is the \`else\` arm's work reordered, so both
   * evaluate the same calls the same number of times, and a pass that counts evaluations (see
   * \`evaluationCount\`) may count the \`else\` arm's whichever runs. A hint only; not printed.
   */
  sameWork?: boolean
  /**
   * Set by pass \`hoist-bounds\` on the \`if\` that runs a loop in two versions: the \`else\` arm
   * (the loop as written, every access checked) runs only where one of its bounds checks fails,
   * and so ends in an error: a backend need not make it fast (the wasm backend does not version its
   * loops again). A hint only; not printed.
   */
  failing?: boolean
}
/** `while (pre, post) { body }`: post is false on entry and true after every iteration. */
export interface WhileStmt extends NodeBase {
  kind: 'while'
  pre: Expr
  post: Expr
  body: Stmt[]
}
/** `for v in start..stop by step` (half-open) or `..=` (closed). */
export interface ForStmt extends NodeBase {
  kind: 'for'
  variable: string
  start: Expr
  stop: Expr
  step: Expr | null
  inclusive: boolean
  /** Iterate the same values in reverse order (the inverse of a loop; printed `in reverse`). */
  reverse?: boolean
  /**
   * Sugar `for x in arr { }`: `variable` is the element and `each` the array (`start` is 0 and
   * `stop` is `len(arr)`); preprocess turns it into an index loop that reads `arr[i]`.
   */
  each?: VarRef
  /**
   * Set by preprocess on the index loop of `for x in arr`: the body must not write the array
   * (checked statically).
   */
  readOnly?: { array: string; element: string }
  /**
   * Set by pass `tabulate` on the loop that takes a table back to zeros, in the `@unchecked`
   * block that then deallocates it (unchecked) and after which nothing reads it: the loop only
   * keeps the program reversible, and can neither fail nor change what the program computes, so
   * `optimize` drops it with run-time checks on (with checks off, `dead-ancillas` does). Not
   * printed.
   */
  tableUncompute?: boolean
  body: Stmt[]
}
/** `push(stack, x)`: moves x onto the stack and zeroes x. */
export interface PushStmt extends NodeBase {
  kind: 'push'
  stack: VarRef
  value: Dataview
}
/** `pop(stack, x)`: x must be zero; moves the top of the stack into x. */
export interface PopStmt extends NodeBase {
  kind: 'pop'
  stack: VarRef
  value: Dataview
}
/** `@safe expr`: a host side effect, run as is in both directions. */
export interface SafeStmt extends NodeBase {
  kind: 'safe'
  expr: Expr
}
/** `@unchecked { }`: no run-time reversibility checks inside. */
export interface UncheckedStmt extends NodeBase {
  kind: 'unchecked'
  body: Stmt[]
}
/** Sugar: `routine { body }`; replaced by its body in preprocessing. */
export interface RoutineStmt extends NodeBase {
  kind: 'routine'
  body: Stmt[]
}
/** Sugar: `~routine`; replaced by the inverse of the matching routine's body. */
export interface UnroutineStmt extends NodeBase {
  kind: 'unroutine'
}
/** Sugar: `~{ body }`; replaced by the inverse of the body. */
export interface InverseBlockStmt extends NodeBase {
  kind: 'invblock'
  body: Stmt[]
}

/**
 * `assert check(cond)`: a run-time check of the catalog (`RUNTIME_CHECKS`), inserted by the
 * `insert-checks` pass when checks are on (never written by a user, never parsed). `cond` is true
 * when all is well; when it is false the engine raises the catalog entry `check` at `loc`, with
 * the message's arguments: a string is known when compiling (a name, a printed expression), an
 * expression is evaluated only then (a value). An assert changes nothing, so transforms that
 * restructure a body (invert, the AD transforms) drop it and the pass places the checks again on
 * the result (see `passes/insert-checks.ts`).
 */
export interface AssertStmt extends NodeBase {
  kind: 'assert'
  /** The catalog entry (a key of `RUNTIME_CHECKS`). */
  check: string
  cond: Expr
  args: Array<string | Expr>
}

export interface Param extends NodeBase {
  name: string
  type: Type
  /**
   * Set by the AD layer on an array parameter of a gradient program that every caller passes as
   * an array of zeros and reads nothing back from (a scratch argument of \`grad\` and its
   * gradient): with run-time checks off, pass \`contract-arrays\` treats it as a zero ancilla
   * whose final value nobody reads. A hint for the function itself, not for its inverse; ignoring
   * it is always right. Not printed.
   */
  scratch?: boolean
}

/** A reversible function. */
export interface FunctionDef extends NodeBase {
  kind: 'fn'
  name: string
  params: Param[]
  body: Stmt[]
}

/** A set of functions parsed together, plus the host values interpolated into them. */
export interface Module {
  kind: 'module'
  functions: FunctionDef[]
  /** Interpolated host values, by index (`${...}` number N is `hosts[N]`). */
  hosts: unknown[]
}

/** Convenience constructors for types. */
export const scalar = (name: ScalarTypeName): Type => ({ kind: 'scalar', name })
export const arrayOf = (elem: ScalarTypeName): Type => ({ kind: 'array', elem })
export const stackOf = (elem: ScalarTypeName): Type => ({ kind: 'stack', elem })

/** Prints a type as written in the syntax: `f64`, `i32[]`, `stack<f64>`. */
export function typeToString(t: Type | ScalarTypeName | undefined): string {
  if (t === undefined) return '?'
  if (typeof t === 'string') return t
  if (t.kind === 'scalar') return t.name
  if (t.kind === 'array') return `${t.elem}[]`
  return `stack<${t.elem}>`
}

export function typesEqual(a: Type, b: Type): boolean {
  if (a.kind !== b.kind) return false
  if (a.kind === 'scalar') return a.name === (b as { name: string }).name
  return a.elem === (b as { elem: string }).elem
}
