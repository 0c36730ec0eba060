/**
 * Static validation of the core IR: name resolution, type inference and the reversibility
 * rules of DESIGN §4. Annotates every expression with its type, resolves call targets and
 * records the index pairs that must differ at run time (`x[i] += x[j]`). Throws a
 * `TenetStaticError` with the source location of the first problem.
 */
import {
  typeToString,
  type AllocStmt,
  type Arg,
  type CallStmt,
  type Dataview,
  type Expr,
  type FunctionDef,
  type ScalarTypeName,
  type Stmt,
  type Type,
} from './ast.js'
import { TenetStaticError, suggest } from './errors.js'
import type { SourceLocation } from './loc.js'
import type { PrimitiveSpec, Program } from './plugin.js'
import { printExpr } from './printer.js'
import type { Registry } from './registry.js'

/** Names the checker knows in expressions besides registered primitives. */
export const BUILTIN_FUNCTIONS = ['f64', 'f32', 'i32', 'div', 'len', 'convert', 'zeros'] as const

const ARITHMETIC = new Set(['+', '-', '*', '%'])

/** A pair of index expressions that must differ at run time (same array, written and read). */
export type DistinctPair = [Expr, Expr]

declare module './ast.js' {
  interface UpdateStmt {
    distinct?: DistinctPair[]
  }
  interface CallStmt {
    distinct?: DistinctPair[]
  }
}

interface Binding {
  type: Type
  role: 'param' | 'local' | 'loop'
  live: boolean
  /**
   * An ancilla allocated with an integer literal and no declared type (`k <- 0`) whose type is
   * not decided yet: it is f64 for now, becomes i32 at the first use that needs an i32, and stays
   * f64 when nothing decides (see `FunctionChecker.decide`).
   */
  pending?: AllocStmt
  /** Uses typed with the provisional f64 before the type was decided. */
  provisional?: number
  loc?: SourceLocation
  deadAt?: SourceLocation
  scope: number
}

const fail = (code: string, msg: string, loc?: SourceLocation): never => {
  throw new TenetStaticError(code, msg, loc)
}

/**
 * The parameters each function writes (a fixed point over calls, so recursion works). One walk of
 * every body finds the direct writes and the call sites; a worklist then carries writes from each
 * callee to its callers, so the time is linear in the program, whatever order the functions are in.
 */
export function writtenParams(functions: Map<string, FunctionDef>, registry: Registry): Map<string, boolean[]> {
  const writes = new Map<string, boolean[]>()
  for (const f of functions.values())
    writes.set(
      f.name,
      f.params.map(() => false),
    )
  const index = new Map<FunctionDef, Map<string, number>>()
  for (const f of functions.values()) index.set(f, new Map(f.params.map((p, k) => [p.name, k] as const).reverse()))
  /** Marks the parameter a dataview of `f` is rooted in as written; true when that is new. */
  const mark = (f: FunctionDef, dv: Dataview | Arg): boolean => {
    const root = rootName(dv)
    const k = root === undefined ? undefined : index.get(f)!.get(root)
    const w = writes.get(f.name)!
    if (k === undefined || w[k]) return false
    w[k] = true
    return true
  }
  const sites = new Map<string, Array<{ caller: FunctionDef; args: Arg[] }>>()
  const work: string[] = []
  for (const f of functions.values()) {
    let changed = false
    walk(f.body, (s) => {
      if (s.kind === 'update') changed = mark(f, s.target) || changed
      else if (s.kind === 'push' || s.kind === 'pop') {
        changed = mark(f, s.stack) || changed
        changed = mark(f, s.value) || changed
      } else if (s.kind === 'callstmt') {
        if (functions.has(s.callee)) {
          let list = sites.get(s.callee)
          if (!list) sites.set(s.callee, (list = []))
          list.push({ caller: f, args: s.args })
        } else {
          const b = registry.findPrimitive(s.callee)
          if (b?.kind === 'bijection')
            s.args.forEach((a, i) => {
              if (b.roles[i] === 'inout') changed = mark(f, a) || changed
            })
        }
      }
    })
    if (changed) work.push(f.name)
  }
  while (work.length) {
    const callee = work.pop()!
    const cw = writes.get(callee)!
    for (const { caller, args } of sites.get(callee) ?? []) {
      let changed = false
      args.forEach((a, i) => {
        if (cw[i]) changed = mark(caller, a) || changed
      })
      if (changed) work.push(caller.name)
    }
  }
  return writes
}

/** Calls `visit` on every statement, depth first. */
export function walk(body: Stmt[], visit: (s: Stmt) => void): void {
  for (const s of body) {
    visit(s)
    switch (s.kind) {
      case 'if':
        walk(s.then, visit)
        walk(s.else, visit)
        break
      case 'while':
      case 'for':
      case 'unchecked':
      case 'routine':
      case 'invblock':
        walk(s.body, visit)
        break
    }
  }
}

/** Adds to `out` the variables and arrays an expression (or argument) reads; returns `out`. */
export function readNames(e: Expr | Arg, out: Set<string> = new Set()): Set<string> {
  // an explicit stack: a chain of thousands of terms does not recurse per term
  const todo: Array<Expr | Arg> = [e]
  while (todo.length) {
    const x = todo.pop()!
    switch (x.kind) {
      case 'var':
        out.add(x.name)
        break
      case 'index':
        out.add(x.array.name)
        todo.push(x.index)
        break
      case 'field':
        todo.push(x.target)
        break
      case 'neg':
        todo.push(x.target)
        break
      case 'unary':
        todo.push(x.arg)
        break
      case 'binary':
        todo.push(x.right, x.left)
        break
      case 'call':
        for (let k = x.args.length - 1; k >= 0; k--) todo.push(x.args[k]!)
        break
    }
  }
  return out
}

/** The variable a dataview (or argument) is rooted in, if it is a dataview. */
export function rootName(e: Expr | Arg): string | undefined {
  switch (e.kind) {
    case 'var':
      return e.name
    case 'index':
      return e.array.name
    case 'field':
      return rootName(e.target)
    case 'neg':
      return rootName(e.target)
    case 'unary':
      return e.op === '-' ? rootName(e.arg) : undefined
    default:
      return undefined
  }
}

interface MemPath {
  root: string
  index?: Expr
  field?: string
  loc?: SourceLocation
}

function pathOf(e: Expr | Arg): MemPath | undefined {
  switch (e.kind) {
    case 'var':
      return { root: e.name, loc: e.loc }
    case 'index':
      return { root: e.array.name, index: e.index, loc: e.loc }
    case 'field': {
      const p = pathOf(e.target)
      return p && !p.field ? { ...p, field: e.field } : p
    }
    case 'neg':
      return pathOf(e.target)
    default:
      return undefined
  }
}

/** Memory read by an expression (array lengths in `len(a)` are not content reads), in source order. */
function readsOf(e: Expr, out: MemPath[] = []): MemPath[] {
  // an explicit stack: a chain of thousands of terms does not recurse per term
  const todo: Expr[] = [e]
  while (todo.length) {
    const x = todo.pop()!
    switch (x.kind) {
      case 'var':
        out.push({ root: x.name, loc: x.loc })
        break
      case 'index':
        out.push({ root: x.array.name, index: x.index, loc: x.loc })
        todo.push(x.index)
        break
      case 'field': {
        const p = pathOf(x)
        if (p) {
          out.push(p)
          if (p.index) todo.push(p.index)
        } else todo.push(x.target)
        break
      }
      case 'unary':
        todo.push(x.arg)
        break
      case 'binary':
        todo.push(x.right, x.left)
        break
      case 'call':
        if (x.callee !== 'len') for (let k = x.args.length - 1; k >= 0; k--) todo.push(x.args[k]!)
        break
    }
  }
  return out
}

/**
 * An index as an integer sum of terms plus a constant: the terms (each printed, with its
 * coefficient, sorted) and the constant. `i + 1 + m * l` and `i + m * l` have the same terms and
 * constants 1 and 0, so they are different elements wherever the terms sit in the sum.
 */
function splitOffset(e: Expr): [string, number] {
  const terms = new Map<string, number>()
  let constant = 0
  // an explicit stack of (expression, sign): a long chain does not recurse per term
  const todo: Array<[Expr, number]> = [[e, 1]]
  while (todo.length) {
    const [x, sign] = todo.pop()!
    if (x.kind === 'num') {
      constant += sign * x.value
      continue
    }
    if (x.kind === 'binary' && (x.op === '+' || x.op === '-')) {
      todo.push([x.left, sign], [x.right, x.op === '+' ? sign : -sign])
      continue
    }
    if (x.kind === 'unary' && x.op === '-') {
      todo.push([x.arg, -sign])
      continue
    }
    const t = printExpr(x)
    terms.set(t, (terms.get(t) ?? 0) + sign)
  }
  const base = [...terms]
    .filter(([, c]) => c !== 0)
    .map(([t, c]) => `${c}*(${t})`)
    .sort()
    .join(' + ')
  return [base, constant | 0]
}

/** 'same' | 'disjoint' | 'maybe' (needs a run-time check of the two indices). */
function overlap(a: MemPath, b: MemPath): 'same' | 'disjoint' | 'maybe' {
  if (a.root !== b.root) return 'disjoint'
  if (a.field && b.field && a.field !== b.field) return 'disjoint'
  if (!a.index || !b.index) return 'same'
  const [ba, ca] = splitOffset(a.index)
  const [bb, cb] = splitOffset(b.index)
  if (ba === bb) return ca === cb ? 'same' : 'disjoint'
  return 'maybe'
}

/** Integer-literal ancillas whose type a use decided (see `FunctionChecker.decide`). */
type Decisions = Map<AllocStmt, ScalarTypeName>

class FunctionChecker {
  private scopes: Map<string, Binding>[] = []
  private depth = 0
  /** Set when a type was decided after uses typed with the provisional f64: check again. */
  redo = false

  constructor(
    private readonly fn: FunctionDef,
    private readonly functions: Map<string, FunctionDef>,
    private readonly writes: Map<string, boolean[]>,
    private readonly registry: Registry,
    private readonly hosts: unknown[],
    private readonly decisions: Decisions = new Map(),
  ) {}

  /**
   * Fixes the type of an integer-literal ancilla (`k <- 0`) at a use that needs it (an index, a
   * loop bound, an i32 operand or argument, `^=`). The allocation is retyped at once; if earlier
   * uses were typed with the provisional f64, the function is checked again with the decision.
   */
  private decide(b: Binding, t: ScalarTypeName): void {
    const s = b.pending
    if (!s) return
    delete b.pending
    this.decisions.set(s, t)
    if (t === 'f64') return
    b.type = { kind: 'scalar', name: t }
    s.type = b.type
    if (s.value.kind !== 'emptystack') this.infer(s.value, t)
    if (b.provisional) this.redo = true
  }

  /** The binding of a plain name that is an undecided integer-literal ancilla. */
  private pendingVar(e: Expr | Arg): Binding | undefined {
    if (e.kind !== 'var') return undefined
    const b = this.lookup(e.name)
    return b?.live && b.pending ? b : undefined
  }

  /** An expression of integer literals and undecided integer-literal ancillas: its type comes from context. */
  private isIntLike(e: Expr): boolean {
    switch (e.kind) {
      case 'num':
        return !e.isFloat
      case 'var':
        return this.pendingVar(e) !== undefined
      case 'unary':
        return e.op === '-' && this.isIntLike(e.arg)
      case 'binary':
        if (e.op === '**')
          return this.isIntLike(e.left) && e.right.kind === 'num' && !e.right.isFloat && e.right.value >= 0
        return ['+', '-', '*', '%', '^', '&', '|'].includes(e.op) && this.isIntLike(e.right) && this.isIntLike(e.left)
      default:
        return false
    }
  }

  /** Whether a type is a number system other than the native f64, f32, i32 and bool (fixed, ulog, tropical, …). */
  private isSystem(t: ScalarTypeName): boolean {
    return t !== 'f64' && t !== 'f32' && t !== 'i32' && t !== 'bool' && this.registry.findNumberSystem(t) !== undefined
  }

  /**
   * Whether a value of type `from` converts implicitly where a `to` is needed: i32 → f64 and
   * f32 → f64 (exact),
   * and a plain number (i32, f32, f64) into a number system (`convert`, rounded into the system:
   * a deterministic rounding, so forward-then-inverse stays exact).
   */
  private implicit(from: ScalarTypeName, to: ScalarTypeName): boolean {
    if (from === to) return false
    if ((from === 'i32' || from === 'f32') && to === 'f64') return true
    return this.isSystem(to) && (from === 'i32' || from === 'f32' || from === 'f64')
  }

  /** `e` converted to `to`: `f64(e)` for i32/f32 → f64, else `convert(e)`. */
  private converted(e: Expr, to: ScalarTypeName): Expr {
    return {
      kind: 'call',
      callee: to === 'f64' ? 'f64' : 'convert',
      args: [e],
      type: to,
      ...(e.loc ? { loc: e.loc } : {}),
    }
  }

  /** The explicit conversion that turns a `from` into a `to`, for error hints. */
  private hint(from: ScalarTypeName, to: ScalarTypeName): string {
    if (from === 'bool' || to === 'bool')
      return 'bool and numbers do not convert into each other (compare a number, e.g. `x != 0`, to get a bool)'
    if (this.isSystem(to))
      return `convert the ${from} side into ${to} with \`convert(...)\` (in a context that fixes the type, e.g. \`y += convert(x)\`)`
    if (this.isSystem(from)) return `read the ${from} value as ${to} with \`${to === 'i32' ? 'i32' : to}(...)\``
    if (to === 'i32') return 'convert the float side with `i32(...)` (rounds toward zero)'
    if (to === 'f32') return `convert the ${from} side with \`f32(...)\` (rounds to single precision)`
    return `convert the ${from} side with \`${to}(...)\``
  }

  check(): void {
    const top = new Map<string, Binding>()
    for (const p of this.fn.params) {
      if (top.has(p.name)) fail('static/duplicate-param', `parameter \`${p.name}\` is declared twice`, p.loc)
      this.checkType(p.type, p.loc)
      top.set(p.name, { type: p.type, role: 'param', live: true, loc: p.loc, scope: 0 })
    }
    this.scopes = [top]
    this.block(this.fn.body, false, undefined, true)
  }

  private checkType(t: Type, loc?: SourceLocation): void {
    const name = t.kind === 'scalar' ? t.name : t.elem
    if (!this.registry.findNumberSystem(name)) {
      fail('static/unknown-type', `unknown type \`${name}\`${suggest(name, this.registry.names('number'))}`, loc)
    }
  }

  private lookup(name: string): Binding | undefined {
    for (let i = this.scopes.length - 1; i >= 0; i--) {
      const b = this.scopes[i]!.get(name)
      if (b) return b
    }
    return undefined
  }

  private knownNames(): string[] {
    const names: string[] = []
    for (const s of this.scopes) for (const [n, b] of s) if (b.live) names.push(n)
    return names
  }

  /**
   * Checks a block; `newScope` opens a scope for its names, `closes` checks at its end that every
   * ancilla of the scope was deallocated (a function body closes the parameters' scope).
   */
  private block(
    body: Stmt[],
    newScope = true,
    loopVar?: { name: string; loc?: SourceLocation },
    closes = newScope,
  ): void {
    if (newScope) this.scopes.push(new Map())
    const scope = this.scopes[this.scopes.length - 1]!
    if (loopVar)
      scope.set(loopVar.name, {
        type: { kind: 'scalar', name: 'i32' },
        role: 'loop',
        live: true,
        loc: loopVar.loc,
        scope: this.scopes.length - 1,
      })
    for (const s of body) this.stmt(s)
    if (closes)
      for (const [name, b] of scope) {
        if (b.role === 'local' && b.live) {
          fail(
            'static/not-deallocated',
            `\`${name}\` is still allocated at the end of its scope; deallocate it with \`${name} -> value\``,
            b.loc,
          )
        }
      }
    if (newScope) this.scopes.pop()
  }

  private ns(t: ScalarTypeName) {
    return this.registry.numberSystem(t)
  }
  private isNumeric(t: ScalarTypeName) {
    return t !== 'bool'
  }
  private isFloat(t: ScalarTypeName) {
    return this.registry.findNumberSystem(t)?.float === true
  }
  private isInteger(t: ScalarTypeName) {
    return this.registry.findNumberSystem(t)?.integer === true
  }
  /** The custom arithmetic of a number system whose representation is not the value (ulog, tropical). */
  private arith(t: ScalarTypeName) {
    return this.registry.findNumberSystem(t)?.arithmetic
  }
  private checkArith(op: string, t: ScalarTypeName, loc?: SourceLocation): void {
    const a = this.arith(t)
    if (a && !(a.ops as string[]).includes(op))
      fail('static/operator', a.reject?.(op) ?? `\`${op}\` is not defined on ${t}`, loc)
  }

  // ---------- expressions ----------

  private isIntLiteral(e: Expr): boolean {
    return e.kind === 'num' && !e.isFloat
  }

  /** An expression of integer literals only (`2 + 3`): it takes its type from context. */
  private isIntConstant(e: Expr): boolean {
    switch (e.kind) {
      case 'num':
        return !e.isFloat
      case 'unary':
        return e.op === '-' && this.isIntConstant(e.arg)
      case 'binary':
        // a power only with a non-negative literal exponent: 2 ** -1 is not an integer
        if (e.op === '**')
          return this.isIntConstant(e.left) && e.right.kind === 'num' && !e.right.isFloat && e.right.value >= 0
        // the right operand first: in a long chain `x + a + b + …` it is the short side
        return (
          ['+', '-', '*', '%', '^', '&', '|'].includes(e.op) &&
          this.isIntConstant(e.right) &&
          this.isIntConstant(e.left)
        )
      default:
        return false
    }
  }

  /** Infers (and records) the scalar type of `e`; `expected` guides integer literals. */
  infer(e: Expr, expected?: ScalarTypeName): ScalarTypeName {
    const t = this.inferInner(e, expected)
    ;(e as { type?: ScalarTypeName }).type = t
    return t
  }

  private inferInner(e: Expr, expected?: ScalarTypeName): ScalarTypeName {
    switch (e.kind) {
      case 'num':
        if (e.isFloat) return expected && (this.isFloat(expected) || this.arith(expected)) ? expected : 'f64'
        if (expected && expected !== 'bool') {
          if (this.isInteger(expected) && !Number.isInteger(e.value)) return 'f64'
          if (
            this.isInteger(expected) &&
            this.registry.findNumberSystem(expected)?.arrayType === 'Int32Array' &&
            (e.value < -0x80000000 || e.value > 0x7fffffff)
          ) {
            fail(
              'static/literal-range',
              `the ${expected} literal ${e.value} is out of range (${-0x80000000} to ${0x7fffffff}); it would wrap around`,
              e.loc,
            )
          }
          return expected
        }
        return 'f64'
      case 'bool':
        return 'bool'
      case 'var': {
        const b = this.varBinding(e.name, e.loc)
        if (b.pending) {
          if (expected !== undefined && this.isInteger(expected)) this.decide(b, expected)
          else b.provisional = (b.provisional ?? 0) + 1
        }
        if (b.type.kind !== 'scalar') {
          fail(
            'static/array-as-scalar',
            `\`${e.name}\` is ${b.type.kind === 'array' ? 'an array' : 'a stack'} (${typeToString(b.type)}); use an element such as \`${e.name}[i]\``,
            e.loc,
          )
        }
        e.type = b.type
        return (b.type as { name: string }).name
      }
      case 'index': {
        const b = this.varBinding(e.array.name, e.array.loc)
        if (b.type.kind !== 'array')
          fail(
            'static/not-array',
            `\`${e.array.name}\` is ${typeToString(b.type)}, not an array, so it cannot be indexed`,
            e.loc,
          )
        e.array.type = b.type
        const it = this.infer(e.index, 'i32')
        if (it !== 'i32')
          fail('static/type', `an array index must be i32, not ${it}; convert with \`i32(...)\``, e.index.loc)
        return (b.type as { elem: string }).elem
      }
      case 'field': {
        const tt = this.infer(e.target)
        const fields = (this.registry.findNumberSystem(tt) as { fields?: Record<string, ScalarTypeName> } | undefined)
          ?.fields
        // own properties only: `z.constructor` is not a field
        const ft = fields && Object.hasOwn(fields, e.field) ? fields[e.field] : undefined
        if (!ft)
          fail(
            'static/unknown-field',
            `${tt} has no field \`${e.field}\`${fields ? ` (fields: ${Object.keys(fields).join(', ')})` : ''}`,
            e.loc,
          )
        return ft!
      }
      case 'unary': {
        if (e.op === '!') {
          const t = this.infer(e.arg, 'bool')
          if (t !== 'bool') fail('static/type', `\`!\` needs a bool, not ${t}`, e.loc)
          return 'bool'
        }
        const t = this.infer(e.arg, expected)
        if (!this.isNumeric(t)) fail('static/type', `cannot negate a ${t}`, e.loc)
        const ar = this.arith(t)
        if (ar && !ar.negate) fail('static/operator', ar.reject?.('-x') ?? `unary \`-\` is not defined on ${t}`, e.loc)
        return t
      }
      case 'binary':
        return this.inferBinary(e, expected)
      case 'call':
        return this.inferCall(e, expected)
    }
  }

  private inferPair(l: Expr, r: Expr, expected?: ScalarTypeName): [ScalarTypeName, ScalarTypeName] {
    if (this.rightFirst(l, r)) {
      const rt = this.infer(r, expected)
      return [this.infer(l, rt), rt]
    }
    const lt = this.infer(l, expected)
    return [lt, this.infer(r, lt)]
  }

  /**
   * The operands of a binary node brought to one type: an implicit conversion (i32 → f64, a plain
   * number into a number system) is inserted on the side that needs it; otherwise a mismatch.
   */
  private unify(e: Extract<Expr, { kind: 'binary' }>, a: ScalarTypeName, b: ScalarTypeName): ScalarTypeName {
    if (a === b) return a
    if (this.implicit(b, a)) {
      e.right = this.converted(e.right, a)
      return a
    }
    if (this.implicit(a, b)) {
      e.left = this.converted(e.left, b)
      return b
    }
    return this.mismatch(e.op, a, b, e.loc)
  }

  /**
   * A type mismatch between `a` (the target, or the left operand) and `b`, with a conversion that
   * works when followed: into the target's type for updates, allocations and arguments
   * (`directional`); for the operands of a binary operator, the i32 or plain side is converted.
   */
  private mismatch(op: string, a: ScalarTypeName, b: ScalarTypeName, loc?: SourceLocation, directional = false): never {
    let how: string
    if (directional || a === 'bool' || b === 'bool' || this.isSystem(a)) how = this.hint(b, a)
    else if (this.isSystem(b) || a === 'i32') how = this.hint(a, b)
    else how = this.hint(b, a)
    return fail('static/type-mismatch', `\`${op}\` between ${a} and ${b}: ${how}`, loc)
  }

  private inferBinary(e: Extract<Expr, { kind: 'binary' }>, expected?: ScalarTypeName): ScalarTypeName {
    const op = e.op
    switch (op) {
      case '&&':
      case '||': {
        const a = this.infer(e.left, 'bool'),
          b = this.infer(e.right, 'bool')
        if (a !== 'bool' || b !== 'bool') fail('static/type', `\`${op}\` needs bool operands, not ${a} and ${b}`, e.loc)
        return 'bool'
      }
      case '==':
      case '!=':
      case '<':
      case '<=':
      case '>':
      case '>=': {
        const [a0, b0] = this.inferPair(e.left, e.right)
        const a = this.unify(e, a0, b0)
        if (a === 'bool' && op !== '==' && op !== '!=') fail('static/type', `\`${op}\` does not compare bools`, e.loc)
        return 'bool'
      }
      case '^':
      case '&':
      case '|': {
        const [a, b] = this.inferPair(e.left, e.right, expected)
        if (a !== b) this.mismatch(op, a, b, e.loc)
        if (a !== 'bool' && !this.isInteger(a)) {
          if (this.isIntConstant(e)) {
            this.infer(e.left, 'i32')
            this.infer(e.right, 'i32')
            return 'i32'
          }
          fail('static/type', `\`${op}\` works on bool or i32, not ${a}`, e.loc)
        }
        return a
      }
      case '/': {
        const exp = expected && this.isFloat(expected) ? expected : undefined
        const [a0, b0] = this.inferPair(e.left, e.right, exp)
        const a = this.unify(e, a0, b0)
        if (!this.isNumeric(a)) fail('static/type', `\`/\` needs numbers, not ${a}`, e.loc)
        this.checkArith(op, a, e.loc)
        return this.isFloat(a) || this.arith(a) ? a : 'f64'
      }
      case '**': {
        let a: ScalarTypeName, b: ScalarTypeName
        if (this.isIntLiteral(e.left) && !this.isIntLiteral(e.right)) {
          b = this.infer(e.right, expected)
          a = this.infer(e.left, expected ?? (this.isFloat(b) ? b : 'f64'))
        } else {
          a = this.infer(e.left, expected)
          b = this.infer(e.right, this.isInteger(a) ? 'i32' : this.arith(a) ? 'f64' : a)
        }
        if (!this.isNumeric(a) || !this.isNumeric(b))
          fail('static/type', `\`**\` needs numbers, not ${a} and ${b}`, e.loc)
        this.checkArith(op, a, e.loc)
        if (a !== b && b !== 'i32' && !(this.arith(a) && b === 'f64')) {
          if (this.implicit(b, a)) e.right = this.converted(e.right, a)
          else if (this.implicit(a, b)) {
            e.left = this.converted(e.left, b)
            return b
          } else this.mismatch(op, a, b, e.loc)
        }
        return a
      }
      default:
        return this.inferArithmetic(e, expected)
    }
  }

  /** Whether `inferPair` takes the right operand's type first (a literal on the left). */
  private rightFirst(l: Expr, r: Expr): boolean {
    return (
      (this.isIntLike(l) && !this.isIntLike(r)) ||
      (l.kind === 'num' && r.kind !== 'num') ||
      // `convert(x) * y`: the target type of convert comes from the other side
      (l.kind === 'call' &&
        l.callee === 'convert' &&
        l.type === undefined &&
        !(r.kind === 'call' && r.callee === 'convert'))
    )
  }

  /**
   * `+ - * %`. The left spine of a chain `a + b - c + …` is typed in a loop, bottom up, with the
   * same rules as `inferPair`, so that a chain of thousands of terms does not recurse per term.
   */
  private inferArithmetic(e: Extract<Expr, { kind: 'binary' }>, expected?: ScalarTypeName): ScalarTypeName {
    const spine: Array<Extract<Expr, { kind: 'binary' }>> = []
    let n: Expr = e
    while (n.kind === 'binary' && ARITHMETIC.has(n.op) && (n === e || !this.rightFirst(n.left, n.right))) {
      spine.push(n)
      if (this.rightFirst(n.left, n.right)) break
      n = n.left
    }
    let lt: ScalarTypeName | undefined
    for (let k = spine.length - 1; k >= 0; k--) {
      const node = spine[k]!
      let a: ScalarTypeName, b: ScalarTypeName
      if (lt === undefined) [a, b] = this.inferPair(node.left, node.right, expected)
      else {
        a = lt
        b = this.infer(node.right, a)
      }
      a = this.unify(node, a, b)
      if (!this.isNumeric(a)) fail('static/type', `\`${node.op}\` needs numbers, not ${a}`, node.loc)
      this.checkArith(node.op, a, node.loc)
      if (k > 0) node.type = a
      lt = a
    }
    return lt!
  }

  private inferCall(e: Extract<Expr, { kind: 'call' }>, expected?: ScalarTypeName): ScalarTypeName {
    const name = e.callee
    const arity = (n: number) => {
      if (e.args.length !== n)
        fail('static/arity', `\`${name}\` takes ${n} argument${n === 1 ? '' : 's'}, not ${e.args.length}`, e.loc)
    }
    if (name.startsWith('$host')) {
      const v = this.hosts[Number(name.slice(5))]
      if (typeof v !== 'function')
        fail('static/host', `the interpolated value \`\${${name.slice(5)}}\` is not a function`, e.loc)
      for (const a of e.args) this.inferHostArg(a)
      return 'f64'
    }
    switch (name) {
      case 'f64':
      case 'f32':
      case 'i32': {
        arity(1)
        const t = this.infer(e.args[0]!, name)
        if (!this.isNumeric(t)) fail('static/type', `cannot convert ${t} to ${name}`, e.loc)
        return name
      }
      case 'convert': {
        arity(1)
        // (an implicit conversion, or one typed in an earlier pass, keeps its type)
        const to = expected ?? e.type
        if (!to)
          fail(
            'static/type',
            '`convert(x)` needs a target type from context (use it as `y += convert(x)`, or `a * convert(x)`)',
            e.loc,
          )
        this.infer(e.args[0]!)
        return to!
      }
      case 'div': {
        arity(2)
        const [a, b] = this.inferPair(e.args[0]!, e.args[1]!, 'i32')
        if (a !== 'i32' || b !== 'i32')
          fail(
            'static/type',
            `\`div\` is integer division of two i32, not ${a} and ${b}: convert with \`i32(...)\` (rounds toward zero), or divide with \`/\` (real division)`,
            e.loc,
          )
        return 'i32'
      }
      case 'len': {
        arity(1)
        const a = e.args[0]!
        if (a.kind !== 'var') fail('static/type', '`len` takes an array name', e.loc)
        const b = this.varBinding((a as { name: string }).name, a.loc)
        if (b.type.kind === 'scalar') fail('static/type', `\`len\` takes an array, not ${typeToString(b.type)}`, a.loc)
        ;(a as { type?: Type }).type = b.type
        return 'i32'
      }
      case 'zeros':
        fail('static/zeros', '`zeros(n)` can only initialise an array ancilla: `a: f64[] <- zeros(n)`', e.loc)
    }
    const spec = this.registry.findPrimitive(name)
    if (!spec || spec.kind !== 'pure') {
      if (this.functions.has(name))
        fail(
          'static/call-in-expression',
          `\`${name}\` is a reversible function: call it as a statement (\`${name}(...)\` on its own line), not inside an expression`,
          e.loc,
        )
      if (spec?.kind === 'bijection')
        fail(
          'static/call-in-expression',
          `\`${name}\` is a bijection: use it as a statement, not inside an expression`,
          e.loc,
        )
      fail(
        'static/unknown-primitive',
        `unknown function \`${name}\`${suggest(name, [...this.registry.names('pure'), ...BUILTIN_FUNCTIONS])}`,
        e.loc,
      )
    }
    const p = spec as Extract<typeof spec, { kind: 'pure' }>
    arity(p.arity)
    if (p.argKinds?.includes('array')) return this.inferArrayCall(p, e)
    // the float type: the first non-literal argument's, else the expected one, else f64
    const firstTyped = e.args.find((a) => a.kind !== 'num')
    let floatT: ScalarTypeName | undefined = expected && this.isFloat(expected) ? expected : undefined
    const types: ScalarTypeName[] = []
    if (firstTyped) floatT = this.infer(firstTyped, floatT ?? 'f64')
    for (const a of e.args) types.push(a === firstTyped ? floatT! : this.infer(a, floatT ?? 'f64'))
    if (p.signature) {
      const r = p.signature(types)
      if (r.startsWith('error:')) fail('static/type', `\`${name}\`: ${r.slice(6).trim()}`, e.loc)
      return r
    }
    // i32 arguments are promoted to f64 (exact); then a plain argument meets a number system
    // argument by conversion into the system
    types.forEach((t, k) => {
      if (t === 'i32') {
        e.args[k] = this.converted(e.args[k]!, 'f64')
        types[k] = 'f64'
      }
    })
    const t0 = types.find((t) => this.isSystem(t)) ?? types[0] ?? 'f64'
    types.forEach((t, k) => {
      if (!this.isFloat(t))
        fail(
          'static/type',
          `\`${name}\` takes floating-point arguments, not ${t}${t === 'bool' ? '' : '; convert with `f64(...)`'}`,
          e.args[k]!.loc ?? e.loc,
        )
      if (t !== t0) {
        if (!this.implicit(t, t0)) this.mismatch(name, t0, t, e.loc)
        e.args[k] = this.converted(e.args[k]!, t0)
      }
    })
    return t0
  }

  /**
   * A primitive with array arguments (`det(A)`): each array argument is a float array passed by
   * name, each scalar argument an f64; the result is f64.
   */
  private inferArrayCall(
    p: Extract<PrimitiveSpec, { kind: 'pure' }>,
    e: Extract<Expr, { kind: 'call' }>,
  ): ScalarTypeName {
    e.args.forEach((a, k) => {
      if (p.argKinds![k] === 'array') {
        if (a.kind !== 'var')
          fail(
            'static/type',
            `argument ${k + 1} of \`${p.name}\` is an array: pass an f64[] variable by name`,
            a.loc ?? e.loc,
          )
        const b = this.varBinding((a as { name: string }).name, a.loc)
        if (b.type.kind !== 'array' || b.type.elem !== 'f64')
          fail(
            'static/type',
            `argument ${k + 1} of \`${p.name}\` must be an f64[] array, not ${typeToString(b.type)}`,
            a.loc ?? e.loc,
          )
        ;(a as { type?: Type }).type = b.type
        return
      }
      const t = this.infer(a, 'f64')
      if (t !== 'f64')
        fail(
          'static/type',
          `argument ${k + 1} of \`${p.name}\` must be f64, not ${t}; convert with \`f64(...)\``,
          a.loc ?? e.loc,
        )
    })
    return 'f64'
  }

  private inferHostArg(a: Expr): void {
    if (a.kind === 'var') {
      const b = this.varBinding(a.name, a.loc)
      a.type = b.type
      if (b.type.kind !== 'scalar') return
    }
    this.infer(a)
  }

  private varBinding(name: string, loc?: SourceLocation): Binding {
    if (name.startsWith('$host')) {
      fail(
        'static/host',
        `the interpolated value \`\${${name.slice(5)}}\` cannot be used here (numbers, booleans and functions can be interpolated)`,
        loc,
      )
    }
    const b = this.lookup(name)
    if (!b) fail('static/unknown-name', `unknown name \`${name}\`${suggest(name, this.knownNames())}`, loc)
    if (!b!.live)
      fail(
        'static/use-after-dealloc',
        `\`${name}\` is used after it was deallocated (at ${b!.deadAt?.line}:${b!.deadAt?.column})`,
        loc,
      )
    return b!
  }

  // ---------- dataviews ----------

  /** Type of a dataview that is written; checks it is writable. */
  private writableType(dv: Dataview, what: string): ScalarTypeName {
    const root = rootName(dv)!
    const b = this.varBinding(root, dv.loc)
    if (b.role === 'loop')
      fail('static/write-loop-variable', `cannot write the loop variable \`${root}\` (${what})`, dv.loc)
    if (dv.kind === 'neg') {
      const t = this.writableType(dv.target, what)
      dv.type = t
      if (!this.isNumeric(t)) fail('static/type', `cannot negate a ${t}`, dv.loc)
      return t
    }
    const t = this.infer(dv)
    if (dv.kind === 'field') {
      const ns = this.registry.findNumberSystem(dv.target.type as string)
      if (ns && !ns.setField && !ns.lowering)
        fail('static/read-only-field', `the field \`.${dv.field}\` of ${ns.name} is read-only`, dv.loc)
    }
    return t
  }

  // ---------- statements ----------

  private stmt(s: Stmt): void {
    switch (s.kind) {
      case 'update':
        return this.update(s)
      case 'callstmt':
        return this.call(s)
      case 'alloc': {
        const scope = this.scopes[this.scopes.length - 1]!
        const prev = this.lookup(s.name)
        if (prev?.live)
          fail(
            'static/realloc',
            `\`${s.name}\` already exists (${prev.role === 'param' ? 'a parameter' : prev.role === 'loop' ? 'a loop variable' : `allocated at ${prev.loc?.line}:${prev.loc?.column}`}); pick another name or deallocate it first`,
            s.loc,
          )
        if (s.declared) this.checkType(s.declared, s.loc)
        let type: Type
        if (s.value.kind === 'emptystack') {
          if (s.declared?.kind !== 'stack')
            fail('static/type', `\`[]\` allocates a stack: declare it, e.g. \`${s.name}: stack<f64> <- []\``, s.loc)
          type = s.declared!
        } else if (s.value.kind === 'call' && s.value.callee === 'zeros') {
          if (s.declared?.kind !== 'array')
            fail(
              'static/type',
              `\`zeros(n)\` allocates an array: declare it, e.g. \`${s.name}: f64[] <- zeros(n)\``,
              s.loc,
            )
          this.zerosArg(s.value)
          type = s.declared!
        } else {
          if (s.declared && s.declared.kind !== 'scalar')
            fail(
              'static/type',
              `a ${typeToString(s.declared)} ancilla is initialised with ${s.declared.kind === 'stack' ? '`[]`' : '`zeros(n)`'}`,
              s.loc,
            )
          // an integer literal without a declared type: decided by a later use (or f64)
          const decided = s.declared ? undefined : this.decisions.get(s)
          const pending = !s.declared && decided === undefined && this.isIntConstant(s.value)
          const want = s.declared?.kind === 'scalar' ? s.declared.name : decided
          let t = this.infer(s.value, want)
          if (want && t !== want) {
            if (!this.implicit(t, want))
              fail(
                'static/type-mismatch',
                `\`${s.name}\` is declared ${want} but initialised with a ${t}: ${this.hint(t, want)}`,
                s.value.loc,
              )
            s.value = this.converted(s.value, want)
            t = want
          }
          type = { kind: 'scalar', name: t }
          if (pending) {
            s.type = type
            scope.set(s.name, {
              type,
              role: 'local',
              live: true,
              loc: s.loc,
              scope: this.scopes.length - 1,
              pending: s,
            })
            return
          }
        }
        s.type = type
        scope.set(s.name, { type, role: 'local', live: true, loc: s.loc, scope: this.scopes.length - 1 })
        return
      }
      case 'dealloc': {
        const b = this.lookup(s.name)
        if (!b)
          fail(
            'static/unknown-name',
            `cannot deallocate unknown name \`${s.name}\`${suggest(s.name, this.knownNames())}`,
            s.loc,
          )
        if (!b!.live)
          fail(
            'static/use-after-dealloc',
            `\`${s.name}\` was already deallocated (at ${b!.deadAt?.line}:${b!.deadAt?.column})`,
            s.loc,
          )
        if (b!.role !== 'local')
          fail(
            'static/dealloc-param',
            `\`${s.name}\` is a ${b!.role === 'param' ? 'parameter' : 'loop variable'}; only ancillas allocated with \`<-\` can be deallocated`,
            s.loc,
          )
        if (b!.scope !== this.scopes.length - 1)
          fail(
            'static/dealloc-scope',
            `\`${s.name}\` was allocated in an enclosing block (at ${b!.loc?.line}:${b!.loc?.column}); deallocate it in that block`,
            s.loc,
          )
        // an integer-literal ancilla that nothing decided ends as f64
        if (b!.pending) this.decide(b!, 'f64')
        const t = b!.type
        if (s.value.kind === 'emptystack') {
          if (t.kind !== 'stack')
            fail('static/type', `\`[]\` is the empty stack, but \`${s.name}\` is ${typeToString(t)}`, s.loc)
        } else if (s.value.kind === 'call' && s.value.callee === 'zeros') {
          if (t.kind !== 'array')
            fail('static/type', `\`zeros(n)\` is an array, but \`${s.name}\` is ${typeToString(t)}`, s.loc)
          this.zerosArg(s.value)
        } else {
          if (t.kind !== 'scalar')
            fail(
              'static/type',
              `deallocate ${typeToString(t)} \`${s.name}\` against ${t.kind === 'stack' ? '`[]`' : '`zeros(n)`'}`,
              s.loc,
            )
          const tn = (t as { name: string }).name
          const vt = this.infer(s.value, tn)
          if (vt !== tn) {
            if (!this.implicit(vt, tn)) this.mismatch('->', tn, vt, s.value.loc, true)
            s.value = this.converted(s.value, tn)
          }
          const r = readsOf(s.value).find((p) => p.root === s.name)
          if (r)
            fail(
              'static/self-read',
              `the value that \`${s.name}\` is checked against cannot read \`${s.name}\` itself`,
              r.loc,
            )
        }
        s.type = t
        b!.live = false
        b!.deadAt = s.loc
        return
      }
      case 'if': {
        this.cond(s.pre, 'pre-condition')
        if (s.post) this.cond(s.post, 'post-condition')
        this.block(s.then)
        this.block(s.else)
        return
      }
      case 'while': {
        this.cond(s.pre, 'pre-condition')
        this.cond(s.post, 'post-condition')
        this.block(s.body)
        return
      }
      case 'for': {
        if (s.readOnly) this.readOnlyLoop(s.readOnly, s.body, s.stop, s.loc)
        for (const [e, what] of [
          [s.start, 'start'],
          [s.stop, 'end'],
          [s.step, 'step'],
        ] as const) {
          if (!e) continue
          const t = this.infer(e, 'i32')
          if (t !== 'i32')
            fail(
              'static/type',
              `the loop ${what} must be i32, not ${t}${t === 'bool' ? '' : ': convert with `i32(...)` (rounds toward zero)'}`,
              e.loc,
            )
        }
        if (s.step?.kind === 'num' && s.step.value === 0)
          fail('static/zero-step', 'a loop step cannot be 0', s.step.loc)
        if (this.lookup(s.variable)?.live)
          fail('static/realloc', `the loop variable \`${s.variable}\` shadows an existing name`, s.loc)
        this.block(s.body, true, { name: s.variable, loc: s.loc })
        return
      }
      case 'push':
      case 'pop': {
        const b = this.varBinding(s.stack.name, s.stack.loc)
        if (b.type.kind !== 'stack')
          fail('static/type', `\`${s.stack.name}\` is ${typeToString(b.type)}, not a stack`, s.stack.loc)
        s.stack.type = b.type
        const elem = (b.type as { elem: string }).elem
        const pb = this.pendingVar(s.value)
        if (pb) this.decide(pb, elem === 'i32' ? 'i32' : 'f64')
        const t = this.writableType(s.value, s.kind)
        if (t !== elem)
          fail(
            'static/type-mismatch',
            `\`${s.kind}\` on a ${typeToString(b.type)} moves an ${elem} variable, not ${t} (${s.kind === 'push' ? 'copy the value into' : 'pop into'} an ${elem} ancilla, e.g. \`t: ${elem} <- ${elem === 'i32' ? '0' : elem === 'bool' ? 'false' : '0.0'}\`)`,
            s.value.loc,
          )
        return
      }
      case 'safe': {
        if (s.expr.kind === 'call' && s.expr.callee.startsWith('$host')) {
          const v = this.hosts[Number(s.expr.callee.slice(5))]
          if (typeof v !== 'function')
            fail('static/host', 'the interpolated value after `@safe` is not a function', s.expr.loc)
          for (const a of s.expr.args) this.inferHostArg(a)
        } else this.infer(s.expr)
        return
      }
      // `@unchecked` only switches checks off: it opens no scope (a statement inside may
      // deallocate what was allocated outside, as in `@unchecked { x -> 0.0 }`)
      case 'unchecked':
        return this.block(s.body, false)
      case 'routine':
      case 'unroutine':
      case 'invblock':
        fail('static/internal', `\`${s.kind}\` must be expanded by preprocess() before checking`, s.loc)
    }
  }

  /** `for x in arr`: `x` is a new name, and the body writes neither `arr` nor (so) `x`. */
  private readOnlyLoop(r: { array: string; element: string }, body: Stmt[], stop: Expr, loc?: SourceLocation): void {
    const { array, element } = r
    const b = this.lookup(element)
    if (b?.live)
      fail(
        'static/realloc',
        `the element \`${element}\` of \`for ${element} in ${array}\` shadows an existing name`,
        loc,
      )
    // the array as the checked program names it: a lowering may have renamed it (a complex array
    // is a float array of twice the length), and the loop's end, `len(array)`, was renamed with it
    const lowered = [...readNames(stop)].find((n) => n !== array && this.lookup(n)?.type.kind === 'array')
    const real = this.lookup(array) ? array : (lowered ?? array)
    const ab = this.varBinding(real, loc)
    if (ab.type.kind !== 'array')
      fail(
        'static/not-array',
        `\`for ${element} in ${array}\` loops over an array, but \`${array}\` is ${typeToString(ab.type)}`,
        loc,
      )
    const written = (dv: Dataview | Arg, where?: SourceLocation): void => {
      if (rootName(dv) === real) {
        fail(
          'static/write-read-only',
          `\`for ${element} in ${array}\` only reads \`${array}\`: its body cannot write \`${element}\` or any element of \`${array}\` (use an index loop \`for i in 0..len(${array})\` to update it)`,
          dv.loc ?? where,
        )
      }
    }
    walk(body, (s) => {
      if (s.kind === 'update') written(s.target, s.loc)
      else if (s.kind === 'push' || s.kind === 'pop') written(s.value, s.loc)
      else if (s.kind === 'callstmt') {
        const fn = this.functions.get(s.callee)
        const w = fn ? this.writes.get(fn.name) : undefined
        const spec = fn ? undefined : this.registry.findPrimitive(s.callee)
        s.args.forEach((a, i) => {
          if (w?.[i] || (spec?.kind === 'bijection' && spec.roles[i] === 'inout')) written(a, s.loc)
        })
      }
    })
  }

  private zerosArg(e: Extract<Expr, { kind: 'call' }>): void {
    if (e.args.length !== 1) fail('static/arity', '`zeros` takes one argument (the length)', e.loc)
    const t = this.infer(e.args[0]!, 'i32')
    if (t !== 'i32') fail('static/type', `the length in \`zeros(n)\` must be i32, not ${t}`, e.loc)
    e.type = 'i32'
  }

  private cond(e: Expr, what: string): void {
    const t = this.infer(e, 'bool')
    if (t !== 'bool') fail('static/type', `the ${what} must be a bool, not ${t}`, e.loc)
  }

  private update(s: Extract<Stmt, { kind: 'update' }>): void {
    // an undecided integer-literal target (`k <- 0`) takes its type from the operator or the value
    const pb = this.pendingVar(s.target)
    if (pb) {
      if (s.op === '^=') this.decide(pb, 'i32')
      else if (s.op === '*=' || s.op === '/=') this.decide(pb, 'f64')
      else if (!this.isIntLike(s.value)) {
        const vt0 = this.infer(s.value)
        this.decide(pb, vt0 === 'i32' ? 'i32' : 'f64')
      } else pb.provisional = (pb.provisional ?? 0) + 1
    }
    const t = this.writableType(s.target, `\`${s.op}\``)
    const ns = this.ns(t)
    if (!ns.bijectiveUpdates.includes(s.op)) {
      fail('static/not-bijective', ns.rejectUpdate?.(s.op) ?? `\`${s.op}\` is not a reversible update of ${t}`, s.loc)
    }
    let vt = this.infer(s.value, t)
    if (vt !== t) {
      // the value converts into the target's type where that is implicit (i32 → f64, a plain number
      // into a number system: the value added is the right-hand side rounded into the system, so
      // forward-then-inverse stays exact), and for `*=`/`/=` by any number
      const scale = (s.op === '*=' || s.op === '/=') && vt !== 'bool' && t !== 'i32'
      if (!this.implicit(vt, t) && !scale) this.mismatch(s.op, t, vt, s.value.loc, true)
      s.value = this.converted(s.value, t)
      vt = t
    }
    const target = pathOf(s.target)!
    const distinct: [Expr, Expr][] = []
    for (const r of readsOf(s.value)) {
      const o = overlap(target, r)
      if (o === 'same') {
        fail(
          'static/self-read',
          `\`${printExpr(s.target)}\` is read in its own right-hand side, so \`${s.op}\` could not be undone; compute the value into an ancilla first`,
          r.loc ?? s.value.loc,
        )
      }
      if (o === 'maybe') distinct.push([target.index!, r.index!])
    }
    if (distinct.length) s.distinct = distinct
    else delete s.distinct
  }

  private call(s: CallStmt): void {
    if (s.callee.startsWith('$host')) {
      fail(
        'static/host',
        `the interpolated value \`\${${s.callee.slice(5)}}\` is not a Tenet function, so it cannot be called as a statement`,
        s.loc,
      )
    }
    const fn = this.functions.get(s.callee)
    let written: boolean[]
    let types: Array<Type | string>
    if (fn) {
      s.target = 'function'
      written = this.writes.get(fn.name)!
      types = fn.params.map((p) => p.type)
    } else {
      const spec = this.registry.findPrimitive(s.callee)
      if (!spec || spec.kind !== 'bijection') {
        if (spec?.kind === 'pure')
          fail(
            'static/pure-as-statement',
            `\`${s.callee}\` is a pure function: use it in an update, e.g. \`y += ${s.callee}(...)\``,
            s.loc,
          )
        fail(
          'static/unknown-function',
          `unknown function or primitive \`${s.callee}\`${suggest(s.callee, [...this.functions.keys(), ...this.registry.names('bijection')])}`,
          s.loc,
        )
      }
      const b = spec as Extract<typeof spec, { kind: 'bijection' }>
      if (s.inverse && b.inverse !== 'self' && !this.registry.findPrimitive(b.inverse)) {
        fail(
          'static/unknown-primitive',
          `\`~${b.name}\` needs the inverse bijection \`${b.inverse}\`, which is not registered`,
          s.loc,
        )
      }
      s.target = 'bijection'
      written = b.roles.map((r) => r === 'inout')
      types = b.types ?? b.roles.map(() => 'numeric')
    }
    if (s.args.length !== written.length) {
      fail(
        'static/arity',
        `\`${s.callee}\` takes ${written.length} argument${written.length === 1 ? '' : 's'}, not ${s.args.length}`,
        s.loc,
      )
    }
    const paths: Array<{ path: MemPath; written: boolean }> = []
    let shared: ScalarTypeName | undefined
    s.args.forEach((a, i) => {
      const want = types[i]!
      const loc = a.loc ?? s.loc
      const isArrayParam = typeof want === 'object' && want.kind !== 'scalar'
      if (isArrayParam) {
        if (a.kind !== 'var')
          fail('static/type', `argument ${i + 1} of \`${s.callee}\` must be ${typeToString(want)}, passed by name`, loc)
        const b = this.varBinding((a as { name: string }).name, loc)
        if (b.type.kind !== want.kind || (b.type as { elem: string }).elem !== (want as { elem: string }).elem) {
          fail(
            'static/type-mismatch',
            `argument ${i + 1} of \`${s.callee}\` must be ${typeToString(want)}, not ${typeToString(b.type)}`,
            loc,
          )
        }
        if (written[i] && b.role === 'loop')
          fail('static/write-loop-variable', `cannot pass the loop variable to a written parameter`, loc)
        ;(a as { type?: Type }).type = b.type
        paths.push({ path: { root: (a as { name: string }).name, loc }, written: written[i]! })
        return
      }
      let wantName: ScalarTypeName | undefined = typeof want === 'object' ? (want as { name: string }).name : undefined
      if (!wantName && (want === 'numeric' || want === 'float' || want === 'integer')) wantName = shared
      if (!wantName && want !== 'numeric' && want !== 'float' && want !== 'integer') wantName = want as string
      let t: ScalarTypeName
      if (written[i]) {
        const pb = this.pendingVar(a)
        if (pb) {
          if (wantName && (this.isInteger(wantName) || wantName === 'f64')) this.decide(pb, wantName)
          else pb.provisional = (pb.provisional ?? 0) + 1
        }
        const dv =
          a.kind === 'neg' || a.kind === 'var' || a.kind === 'index' || a.kind === 'field' ? (a as Dataview) : undefined
        if (!dv) {
          const pname = fn ? `parameter \`${fn.params[i]!.name}\`` : `argument ${i + 1}`
          fail(
            'static/expression-to-written',
            `argument ${i + 1} of \`${s.callee}\` is an expression, but \`${s.callee}\` writes ${pname}; pass a variable or an array element`,
            loc,
          )
        }
        t = this.writableType(dv!, `passed to \`${s.callee}\`, which writes it`)
        paths.push({ path: pathOf(dv!)!, written: true })
      } else {
        if (a.kind === 'neg') {
          t = this.infer(a.target as Expr, wantName)
          a.type = t
          if (!this.isNumeric(t)) fail('static/type', `cannot negate a ${t}`, a.loc)
        } else t = this.infer(a, wantName)
        const p = pathOf(a)
        if (p) paths.push({ path: p, written: false })
        else for (const r of readsOf(a as Expr)) paths.push({ path: r, written: false })
      }
      if (wantName && t !== wantName) {
        // a value passed to a parameter it does not write converts implicitly (i32 → f64, into a number system)
        if (!written[i] && a.kind !== 'neg' && this.implicit(t, wantName)) {
          s.args[i] = this.converted(a as Expr, wantName)
          t = wantName
        } else {
          fail(
            'static/type-mismatch',
            `argument ${i + 1} of \`${s.callee}\` must be ${wantName}, not ${t}${written[i] ? ` (it is written: pass a ${wantName} variable)` : `: ${this.hint(t, wantName)}`}`,
            loc,
          )
        }
      }
      if (want === 'float' && !this.isFloat(t))
        fail('static/type', `argument ${i + 1} of \`${s.callee}\` must be floating point, not ${t}`, loc)
      if (want === 'integer' && !this.isInteger(t))
        fail('static/type', `argument ${i + 1} of \`${s.callee}\` must be an integer, not ${t}`, loc)
      if (typeof want === 'string' && (want === 'numeric' || want === 'float' || want === 'integer')) {
        if (shared === undefined && a.kind !== 'num') shared = t
        // a generic bijection computes on the plain value: not defined on encoded number systems
        // (logarithmic, tropical), except SWAP, which only moves values
        if (!fn && s.callee !== 'SWAP' && this.registry.findNumberSystem(t)?.arithmetic) {
          fail(
            'static/type',
            `\`${s.callee}\` is not defined on ${t} (it would act on the encoded representation)`,
            loc,
          )
        }
      }
    })
    const distinct: [Expr, Expr][] = []
    for (let i = 0; i < paths.length; i++) {
      for (let j = i + 1; j < paths.length; j++) {
        const a = paths[i]!,
          b = paths[j]!
        if (!a.written && !b.written) continue
        const o = overlap(a.path, b.path)
        if (o === 'same')
          fail(
            'static/alias',
            `the same memory \`${a.path.root}${a.path.index ? '[' + printExpr(a.path.index) + ']' : ''}\` is passed twice to \`${s.callee}\`, which writes it`,
            b.path.loc ?? s.loc,
          )
        if (o === 'maybe') distinct.push([a.path.index!, b.path.index!])
      }
    }
    if (distinct.length) s.distinct = distinct
    else delete s.distinct
  }
}

/** A literal argument: a number or a bool, possibly negated. */
function literalValue(a: Arg): Expr | undefined {
  if (a.kind === 'num' || a.kind === 'bool') return a
  if (a.kind === 'unary' && a.op === '-' && a.arg.kind === 'num') return a
  return undefined
}

/**
 * A literal passed to a parameter the callee writes (`g(o, 2, 0)` where g writes its second
 * parameter) becomes an implicit ancilla: allocated with the literal before the call, passed, and
 * deallocated against the same literal after it (a run-time error if the callee changed it).
 * The ancilla's name (`2 passed to g`) is what a failed deallocation names.
 */
function literalArguments(
  body: Stmt[],
  functions: Map<string, FunctionDef>,
  writes: Map<string, boolean[]>,
  registry: Registry,
): Stmt[] {
  let changed = false
  const out: Stmt[] = []
  for (const s of body) {
    let t: Stmt = s
    switch (s.kind) {
      case 'if': {
        const then = literalArguments(s.then, functions, writes, registry),
          els = literalArguments(s.else, functions, writes, registry)
        if (then !== s.then || els !== s.else) t = { ...s, then, else: els }
        break
      }
      case 'while':
      case 'for':
      case 'unchecked': {
        const b = literalArguments(s.body, functions, writes, registry)
        if (b !== s.body) t = { ...s, body: b } as Stmt
        break
      }
      case 'callstmt': {
        const fn = functions.get(s.callee)
        const spec = fn ? undefined : registry.findPrimitive(s.callee)
        const w = fn
          ? writes.get(fn.name)
          : spec?.kind === 'bijection'
            ? spec.roles.map((r) => r === 'inout')
            : undefined
        if (!w || s.args.length !== w.length) break
        const before: Stmt[] = [],
          after: Stmt[] = []
        const args = s.args.map((a, i) => {
          const lit = w[i] ? literalValue(a) : undefined
          if (!lit) return a
          const p = fn?.params[i]
          const name = `${printExpr(lit)} passed to ${s.callee}${p ? ` as ${p.name}` : ` (argument ${i + 1})`}`
          const declared = p?.type.kind === 'scalar' ? p.type : undefined
          const at = lit.loc ? { loc: lit.loc } : s.loc ? { loc: s.loc } : {}
          before.push({ kind: 'alloc', name, ...(declared ? { declared } : {}), value: lit, ...at })
          after.unshift({ kind: 'dealloc', name, ...(declared ? { declared } : {}), value: lit, ...at })
          return { kind: 'var', name, ...at } as Expr
        })
        if (before.length) {
          changed = true
          out.push(...before, { ...s, args }, ...after)
          continue
        }
        break
      }
    }
    if (t !== s) changed = true
    out.push(t)
  }
  return changed ? out : body
}

/**
 * Checks one function. An integer-literal ancilla (`k <- 0`) whose type a use decides after uses
 * that were typed with the provisional f64 makes the function be checked again with what was
 * decided (a static error in a pass that decided something is also retried): each pass decides at
 * least one more ancilla, so this ends.
 */
function checkFunction(
  f: FunctionDef,
  table: Map<string, FunctionDef>,
  writes: Map<string, boolean[]>,
  registry: Registry,
  hosts: unknown[],
): void {
  const decisions: Decisions = new Map()
  for (;;) {
    const before = decisions.size
    const checker = new FunctionChecker(f, table, writes, registry, hosts, decisions)
    try {
      checker.check()
    } catch (e) {
      if (decisions.size > before && [...decisions.values()].some((t) => t !== 'f64')) continue
      throw e
    }
    if (!checker.redo) return
  }
}

/**
 * Checks a set of preprocessed functions against the static rules and the registry, and
 * returns the program a backend compiles. Expressions get their `type`; calls their `target`.
 */
export function check(functions: FunctionDef[], hosts: unknown[], registry: Registry): Program {
  const table = new Map<string, FunctionDef>()
  for (const f of functions) {
    if (table.has(f.name)) fail('static/duplicate-function', `function \`${f.name}\` is defined twice`, f.loc)
    if (registry.findPrimitive(f.name))
      fail('static/shadow-primitive', `function \`${f.name}\` has the name of a registered primitive; rename it`, f.loc)
    table.set(f.name, f)
  }
  const writes = writtenParams(table, registry)
  for (const f of table.values()) f.body = literalArguments(f.body, table, writes, registry)
  for (const f of table.values()) checkFunction(f, table, writes, registry, hosts)
  return { functions: table, hosts, writes, registry }
}
