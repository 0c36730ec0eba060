/**
 * `insert-checks`: the run-time checks of the catalog (`RUNTIME_CHECKS`) as `assert` statements
 * of the IR (NiLangCore's "translate" stage). With checks on, every engine (interpreter, cpu,
 * wasm) runs this pass last, on a function and on its inverse alike, and lowers the one `assert`
 * kind; so where a check goes, what it tests and what its message says is decided here once.
 * With checks off it changes nothing (no assert, the program is the one it was given), and no
 * assert is placed inside `@unchecked` (which is lexical: a called function keeps its checks).
 *
 * | check | the assert |
 * |---|---|
 * | `outOfBounds` | before a statement, per element it reads or writes: `$inrange(i, len(a))` (after the indices inside `i`; under `p && …` only when `p`) |
 * | `alias` | before `x[i] += f(x[j])` (the checker's `distinct` pairs): `i != j`; the pairs are then dropped |
 * | `zeroFactor` | before `y *= e` / `y /= e` on a float: `$factor(e)` (nonzero and finite) |
 * | `dealloc` | before `t -> v`, t a scalar: `t == v`, or `$near(t, v)` for floats (the tolerance of the options) |
 * | `deallocArray`, `deallocStack` | before `t -> zeros(n)`: `$zeros(t, n)`; before `s -> []`: `len(s) == 0` |
 * | `popNonzero` | before `pop(s, x)`: `x == 0` (`!x` for a bool) |
 * | `postIf` | at the end of each branch: `post` after `then`, `!post` after `else` (`post` is `pre` for `~`); left out for `~` when the branches write nothing `pre` reads and neither calls a host function (`pre` is then what it was: the check cannot fail; where `pre` reads array elements, the branches write no element but of the function's array ancillas, fresh memory that no parameter shares) |
 * | `postWhileStart`, `postWhileIteration` | `!post` before the loop, `post` at the end of the body |
 * | `loopRange` | after a `for`: `start == $start(v) && …` (the range the loop saved when it began); left out when the body writes nothing the range reads (writing elements of `a` leaves `len(a)` as it is) |
 *
 * The small expressions this needs are calls of reserved names (a user name never starts with
 * `$`): `$inrange(i, n)` is 0 ≤ i < n; `$factor(e)` is e ≠ 0 and finite; `$near(a, b)` is the
 * float comparison of deallocations (|a − b| ≤ tol · max(1, |b|)); `$zeros(t, n)` is "t has length
 * n and every element is zero" (within the tolerance for float elements); `$start(v)`, `$stop(v)` and
 * `$step(v)` read the range saved by the loop of variable `v` that has just ended (the assert comes
 * right after it). Besides, an element access that the assert before it checks (or that a loop
 * proves, see below) is marked `inBounds`: an engine that guards memory whatever the options (the
 * wasm backend, whose arrays share one linear memory) need not guard it again.
 *
 * Proven away: `a[v]` in the body of `for v in k..len(a)` (k a literal ≥ 0, step 1, `a` a parameter
 * array the function never allocates or deallocates, so its length is fixed) needs no assert.
 *
 * What stays in the engines, and why: the checks that run whatever `checks` says, because without
 * them the engine itself would go wrong — `zeroStep` (a loop of step 0 never ends), `arrayLength`
 * (a JS `RangeError`, or a wasm heap overrun), `emptyStack` (a pop of nothing), the wasm backend's
 * memory guard of every element access (`outOfBounds`: one memory for all arrays) and its
 * `tooLarge` / `cannotGrow` (the allocator's state, not a value of the program); and `host-result`
 * (the value a host function returns, checked where it is called). An index that calls a host function gets no assert (the assert
 * would call the function a second time): the engines guard that access themselves.
 */
import type { Arg, AssertStmt, Expr, FunctionDef, IndexExpr, Stmt, VarRef } from '../ast.js'
import { readNames, rootName, walk } from '../check.js'
import type { CompileOptions, Program } from '../plugin.js'
import { printAsWritten } from '../printer.js'
import type { RuntimeCheck } from '../runtime-checks.js'
import { elementName } from './scalar-arrays.js'
import { writtenNames as namesWritten } from './hoist-invariants.js'
import { effectfulFunctions } from './dead-ancillas.js'
import { stmtExprs, valueReads } from '../stmt-exprs.js'
import { APART } from './apart.js'

const num = (value: number): Expr => ({ kind: 'num', value, isFloat: false, type: 'i32' })
const bool = (value: boolean): Expr => ({ kind: 'bool', value, type: 'bool' })
const not = (arg: Expr): Expr =>
  arg.kind === 'unary' && arg.op === '!' ? arg.arg : { kind: 'unary', op: '!', arg, type: 'bool' }
const bin = (op: '&&' | '||' | '==' | '!=', left: Expr, right: Expr): Expr => ({
  kind: 'binary',
  op,
  left,
  right,
  type: 'bool',
})
const call = (callee: string, args: Expr[], type: string): Expr => ({ kind: 'call', callee, args, type })

/** `$inrange(index, len(array))`. */
export const inRange = (index: Expr, array: VarRef): Expr =>
  call('$inrange', [index, call('len', [array], 'i32')], 'bool')

/** The names of the reserved calls the asserts use (see the module comment). */
export const CHECK_CALLS = ['$inrange', '$factor', '$near', '$zeros', '$start', '$stop', '$step'] as const

const assert = (check: RuntimeCheck, cond: Expr, args: Array<string | Expr>, loc: Stmt['loc']): AssertStmt => ({
  kind: 'assert',
  check,
  cond,
  args,
  ...(loc ? { loc } : {}),
})

/** Whether an expression calls an interpolated host function (evaluating it twice would call it twice). */
export function callsHost(e: Expr | Arg): boolean {
  return callsPrefixed(e, '$host')
}

/**
 * Whether an expression calls a function the runtime provides (`$…`: host functions and helpers),
 * other than `$apart` (which reads only where two arrays lie, see `apart.ts`).
 */
export function callsRuntime(e: Expr | Arg): boolean {
  return callsPrefixed(e, '$', APART)
}

/** Whether an expression calls a function whose name starts with `prefix` (other than `except`). */
function callsPrefixed(e: Expr | Arg, prefix: string, except?: string): boolean {
  switch (e.kind) {
    case 'call':
      return (
        (e.callee.startsWith(prefix) && e.callee !== except) || e.args.some((a) => callsPrefixed(a, prefix, except))
      )
    case 'index':
      return callsPrefixed(e.index, prefix, except)
    case 'field':
    case 'neg':
      return callsPrefixed(e.target, prefix, except)
    case 'unary':
      return callsPrefixed(e.arg, prefix, except)
    case 'binary':
      return callsPrefixed(e.left, prefix, except) || callsPrefixed(e.right, prefix, except)
    default:
      return false
  }
}

/** What the pass knows inside a function. */
interface Scope {
  program: Program
  /** Parameter arrays whose length the function never changes. */
  fixed: Set<string>
  /** Loop variables proven to be indices of an array: variable → array. */
  proven: Map<string, string>
  /** The functions with a host effect (see \`effectfulFunctions\`). */
  effectful: ReadonlySet<string>
  /**
   * The function's array ancillas (\`a <- zeros(n)\`, no parameter of that name): fresh memory,
   * which no parameter's elements share.
   */
  fresh: ReadonlySet<string>
}

/**
 * The bounds asserts of the element accesses of `e` (in the order they are evaluated, each after
 * the accesses inside its index), pushed to `out`; returns `e` with those accesses marked
 * `inBounds` when `mark` (the statement evaluates `e` right after the asserts, nothing written in
 * between). `guard`: what must hold for `e` to be evaluated at all (the left of `&&`, say).
 */
function bounds(e: Expr, out: Stmt[], scope: Scope, mark: boolean, guard?: Expr): Expr {
  switch (e.kind) {
    case 'index': {
      const index = bounds(e.index, out, scope, mark, guard)
      const x: IndexExpr = { ...e, index }
      // (a table read is checked as the read of the array whose values it holds, see `checkedAs`)
      const array = e.checkedAs ?? e.array
      if (index.kind === 'var' && scope.proven.get(index.name) === array.name) return { ...x, inBounds: true }
      if (callsHost(index)) return x
      const ok = inRange(index, array)
      out.push(
        assert(
          'outOfBounds',
          guard ? bin('||', not(guard), ok) : ok,
          [array.shown ?? array.name, index, call('len', [array], 'i32')],
          e.loc,
        ),
      )
      return mark ? { ...x, inBounds: true } : x
    }
    case 'field':
      return { ...e, target: bounds(e.target, out, scope, mark, guard) }
    case 'unary':
      return { ...e, arg: bounds(e.arg, out, scope, mark, guard) }
    case 'binary': {
      const left = bounds(e.left, out, scope, mark, guard)
      if (e.op !== '&&' && e.op !== '||') return { ...e, left, right: bounds(e.right, out, scope, mark, guard) }
      // the right operand is evaluated only when the left one is true (`&&`) or false (`||`)
      const when = e.op === '&&' ? left : not(left)
      return { ...e, left, right: bounds(e.right, out, scope, mark, guard ? bin('&&', guard, when) : when) }
    }
    case 'call':
      return { ...e, args: e.args.map((a) => bounds(a, out, scope, mark, guard)) }
    default:
      return e
  }
}

/** `bounds` of a dataview (a target or an argument): the indices of its elements. */
function boundsOf<D extends Expr | Extract<Stmt, { kind: 'update' }>['target']>(
  dv: D,
  out: Stmt[],
  scope: Scope,
  mark: boolean,
): D {
  if (dv.kind === 'neg') return { ...dv, target: boundsOf(dv.target, out, scope, mark) }
  return bounds(dv as Expr, out, scope, mark) as D
}

/** An assert's condition with the bounds asserts of its own accesses before it. */
function guarded(a: AssertStmt, scope: Scope): Stmt[] {
  const out: Stmt[] = []
  const cond = bounds(a.cond, out, scope, true)
  out.push({ ...a, cond })
  return out
}

/**
 * What a block may change, for the loop-range proof: the names it may write (targets, the
 * arguments a callee writes, ancillas, stacks), and `len:a` for an array `a` it allocates or
 * deallocates (writing elements leaves the length as it is).
 */
function writtenNames(body: Stmt[], program: Program): Set<string> {
  const w = new Set<string>()
  walk(body, (s) => {
    switch (s.kind) {
      case 'update':
        w.add(rootName(s.target) ?? '')
        break
      case 'callstmt': {
        const writes =
          s.target === 'function'
            ? program.writes.get(s.callee)
            : program.registry.findPrimitive(s.callee)?.kind === 'bijection'
              ? program.registry.bijection(s.callee).roles.map((r) => r === 'inout')
              : undefined
        s.args.forEach((a, i) => {
          const r = rootName(a)
          if (r !== undefined && (writes?.[i] ?? true)) w.add(r)
        })
        break
      }
      case 'alloc':
      case 'dealloc':
        w.add(s.name)
        w.add(`len:${s.name}`)
        break
      case 'push':
      case 'pop':
        w.add(s.stack.name)
        w.add(rootName(s.value) ?? '')
        break
    }
  })
  return w
}

function checkBlock(body: Stmt[], scope: Scope): Stmt[] {
  const out: Stmt[] = []
  for (const s of body) checkStmt(s, scope, out)
  return out
}

function checkStmt(s: Stmt, scope: Scope, out: Stmt[]): void {
  const registry = scope.program.registry
  switch (s.kind) {
    case 'update': {
      const { distinct, ...rest } = s
      for (const [a, b] of distinct ?? []) {
        out.push(...guarded(assert('alias', bin('!=', a, b), [printAsWritten(a), printAsWritten(b), a], s.loc), scope))
      }
      const target = boundsOf(s.target, out, scope, true)
      const value = bounds(s.value, out, scope, true)
      const t = (s.target as { type?: string }).type
      if ((s.op === '*=' || s.op === '/=') && t && registry.findNumberSystem(t)?.float) {
        const shown = `${printAsWritten(s.target)} ${s.op} ${printAsWritten(s.value)}`
        out.push(...guarded(assert('zeroFactor', call('$factor', [value], 'bool'), [shown, value], s.loc), scope))
      }
      out.push({ ...rest, target, value })
      return
    }
    case 'callstmt': {
      const { distinct, ...rest } = s
      for (const [a, b] of distinct ?? []) {
        out.push(...guarded(assert('alias', bin('!=', a, b), [printAsWritten(a), printAsWritten(b), a], s.loc), scope))
      }
      // an index that reads what the call writes back may change before its write-back: such an
      // access is checked before the call but not marked
      const written = new Set(s.args.map((a) => rootName(a)).filter((r): r is string => r !== undefined))
      const args = s.args.map((a) => boundsOf(a, out, scope, !indexReadsWritten(a, written)))
      out.push({ ...rest, args })
      return
    }
    case 'alloc':
      out.push(s.value.kind === 'emptystack' ? s : { ...s, value: bounds(s.value, out, scope, true) })
      return
    case 'dealloc': {
      const t = s.type
      if (s.value.kind === 'emptystack') {
        if (t?.kind === 'stack') {
          const count = call('len', [{ kind: 'var', name: s.name, type: t }], 'i32')
          out.push(assert('deallocStack', bin('==', count, num(0)), [s.shown ?? s.name, count], s.loc))
        }
        out.push(s)
        return
      }
      if (s.element && t?.kind === 'scalar') {
        // an element of an array that `scalar-arrays` replaced: the array's check, once, over all elements
        if (s.element.index === 0) out.push(elementsZero(s.element, t.name, s.value, s.loc, registry, s.shown))
        out.push(s)
        return
      }
      const value = bounds(s.value, out, scope, true)
      if (t?.kind === 'array' && value.kind === 'call' && value.callee === 'zeros') {
        const n = value.args[0]!
        const zeros = call('$zeros', [{ kind: 'var', name: s.name, type: t }, n], 'bool')
        out.push(assert('deallocArray', zeros, [s.shown ?? s.name, printAsWritten(s.value), n], s.loc))
      }
      if (t?.kind === 'scalar') {
        const v: VarRef = { kind: 'var', name: s.name, type: t.name, ...(s.loc ? { loc: s.loc } : {}) }
        const ns = t.name === 'bool' ? undefined : registry.findNumberSystem(t.name)
        const cond = ns && !ns.exact ? call('$near', [v, value], 'bool') : bin('==', v, value)
        // the values the user knows (a ulog value as its real value, not its encoding)
        const real = (x: Expr): Expr => (ns?.toHost ? call('f64', [x], 'f64') : x)
        out.push(assert('dealloc', cond, [s.shown ?? s.name, printAsWritten(s.value), real(v), real(value)], s.loc))
      }
      out.push({ ...s, value })
      return
    }
    case 'if': {
      const pre = bounds(s.pre, out, scope, true)
      const post = s.post ?? s.pre
      const text = printAsWritten(post)
      const tilde = bool(!s.post)
      // \`if (c, ~)\` whose branches write nothing c reads: c is what it was, it cannot fail
      const holds = !s.post && unchanged(s.pre, [...s.then, ...s.else], scope)
      const end = (branch: Stmt[], taken: boolean): Stmt[] => [
        ...checkBlock(branch, scope),
        ...(holds
          ? []
          : guarded(
              assert('postIf', taken ? post : not(post), [text, tilde, bool(!taken), bool(taken)], s.loc),
              scope,
            )),
      ]
      out.push({ ...s, pre, then: end(s.then, true), else: end(s.else, false) })
      return
    }
    case 'while': {
      out.push(...guarded(assert('postWhileStart', not(s.post), [printAsWritten(s.post)], s.loc), scope))
      const pre = bounds(s.pre, out, scope, true)
      const body = [
        ...checkBlock(s.body, scope),
        ...guarded(assert('postWhileIteration', s.post, [printAsWritten(s.post)], s.loc), scope),
      ]
      // the condition is evaluated again after each iteration: its accesses are checked there too
      bounds(s.pre, body, scope, false)
      out.push({ ...s, pre, body })
      return
    }
    case 'for': {
      const start = bounds(s.start, out, scope, true)
      const stop = bounds(s.stop, out, scope, true)
      const step = s.step ? bounds(s.step, out, scope, true) : null
      const proven = new Map(scope.proven)
      proven.delete(s.variable)
      const array = provenArray(s, scope)
      if (array) proven.set(s.variable, array)
      const body = checkBlock(s.body, { ...scope, proven })
      out.push({ ...s, start, stop, step, body })
      // the range can change only through a name it reads that the body writes
      const reads = new Set<string>()
      for (const e of [s.start, s.stop, s.step]) if (e) rangeReads(e, reads)
      const written = writtenNames(s.body, scope.program)
      if (![...reads].some((n) => written.has(n))) return
      const v: VarRef = { kind: 'var', name: s.variable, type: 'i32' }
      const saved = (part: string) => call(`$${part}`, [v], 'i32')
      const now = [s.start, s.stop, s.step ?? num(1)]
      const cond = bin(
        '&&',
        bin('&&', bin('==', now[0]!, saved('start')), bin('==', now[1]!, saved('stop'))),
        bin('==', now[2]!, saved('step')),
      )
      out.push(
        ...guarded(assert('loopRange', cond, [saved('start'), saved('stop'), saved('step'), ...now], s.loc), scope),
      )
      return
    }
    case 'push':
      out.push({ ...s, value: boundsOf(s.value, out, scope, true) })
      return
    case 'pop': {
      const value = boundsOf(s.value, out, scope, true)
      const t = (value as { type?: string }).type
      const cond =
        t === 'bool'
          ? not(value as Expr)
          : bin('==', value as Expr, { kind: 'num', value: 0, isFloat: false, type: t ?? 'f64' })
      out.push(
        ...guarded(
          assert('popNonzero', cond, [s.stack.shown ?? s.stack.name, printAsWritten(s.value), value as Expr], s.loc),
          scope,
        ),
      )
      out.push({ ...s, value })
      return
    }
    case 'safe':
      out.push({ ...s, expr: bounds(s.expr, out, scope, true) })
      return
    default:
      // `@unchecked` (no checks inside), an assert already placed
      out.push(s)
  }
}

/**
 * The `deallocArray` assert of an array ancilla that pass `scalar-arrays` replaced by scalars
 * (see `DeallocStmt.element`): every element within the tolerance of zero (`$near`, float
 * elements) or exactly zero, with the message of the array's own deallocation.
 */
function elementsZero(
  element: NonNullable<Extract<Stmt, { kind: 'dealloc' }>['element']>,
  type: string,
  zero: Expr,
  loc: Stmt['loc'],
  registry: Program['registry'],
  /** the array's name as the source wrote it, where a pass renamed it (\`DeallocStmt.shown\`) */
  shown?: string,
): AssertStmt {
  const ns = registry.findNumberSystem(type)
  let cond: Expr | undefined
  for (let k = 0; k < element.length; k++) {
    const v: VarRef = { kind: 'var', name: elementName(element.array, k), type }
    const one = ns && !ns.exact ? call('$near', [v, zero], 'bool') : bin('==', v, zero)
    cond = cond ? bin('&&', cond, one) : one
  }
  return assert('deallocArray', cond ?? bool(true), [shown ?? element.array, element.shown, num(element.length)], loc)
}

/** What a range expression reads: names, and `len:a` for the length of array `a`. */
function rangeReads(e: Expr, out: Set<string>): void {
  if (e.kind === 'call' && e.callee === 'len' && e.args[0]?.kind === 'var') out.add(`len:${e.args[0].name}`)
  else if (e.kind === 'call') for (const a of e.args) rangeReads(a, out)
  else if (e.kind === 'index') {
    out.add(e.array.name)
    rangeReads(e.index, out)
  } else if (e.kind === 'unary') rangeReads(e.arg, out)
  else if (e.kind === 'binary') {
    rangeReads(e.left, out)
    rangeReads(e.right, out)
  } else if (e.kind === 'field') rangeReads(e.target, out)
  else if (e.kind === 'var') out.add(e.name)
}

/** Whether an element argument's index reads a name the call writes back. */
function indexReadsWritten(a: Expr | Extract<Stmt, { kind: 'update' }>['target'], written: Set<string>): boolean {
  if (a.kind === 'neg') return indexReadsWritten(a.target, written)
  if (a.kind !== 'index') return false
  return [...readNames(a.index)].some((n) => written.has(n))
}

/**
 * Whether \`e\` has the same value after \`body\` as before it: \`e\` calls no host function
 * (evaluated again, it could give another value), and \`body\` writes nothing \`e\` reads, calls
 * no host function and no function with a host effect (which could change anything).
 */
function unchanged(e: Expr, body: Stmt[], scope: Scope): boolean {
  if (callsHost(e)) return false
  let effect = false
  walk(body, (s) => {
    if (s.kind !== 'assert' && stmtExprs(s).some(callsHost)) effect = true
    if (s.kind === 'callstmt' && s.target === 'function' && !scope.program.functions.has(s.callee)) effect = true
  })
  if (effect) return false
  // two array parameters may be one array: an element the condition reads may change through
  // any element the branches write, or any array they pass to a call (an ancilla's elements are
  // its own: a write of them changes an element the condition reads only under the same name)
  if (readsElement(e) && writesElements(body, scope.fresh)) return false
  const written = namesWritten(body, scope.effectful)
  // (\`valueReads\`: the arrays of a \`$apart\` test are not read, where they lie never changes)
  return written !== undefined && ![...valueReads(e)].some((n) => written.has(n))
}

/** Whether an expression reads an array element. */
function readsElement(e: Expr): boolean {
  switch (e.kind) {
    case 'index':
      return true
    case 'field':
      return readsElement(e.target)
    case 'unary':
      return readsElement(e.arg)
    case 'binary':
      return readsElement(e.left) || readsElement(e.right)
    case 'call':
      return e.args.some(readsElement)
    default:
      return false
  }
}

/**
 * Whether statements write an array element, or pass an element or an array to a call, of an
 * array other than the ancillas \`fresh\`.
 */
function writesElements(body: Stmt[], fresh: ReadonlySet<string>): boolean {
  let writes = false
  const elementOrArray = (a: Arg): boolean => {
    const x = a.kind === 'neg' ? a.target : a
    const root = rootName(x)
    if (root !== undefined && fresh.has(root)) return false
    if (x.kind === 'index' || x.kind === 'field') return true
    return x.kind === 'var' && typeof x.type === 'object' && x.type.kind !== 'scalar'
  }
  walk(body, (s) => {
    if (s.kind === 'update' && elementOrArray(s.target)) writes = true
    if (s.kind === 'callstmt' && s.args.some(elementOrArray)) writes = true
    if ((s.kind === 'push' || s.kind === 'pop') && elementOrArray(s.value)) writes = true
  })
  return writes
}

/** The array whose indices a loop's variable runs over (see the module comment), if any. */
function provenArray(s: Extract<Stmt, { kind: 'for' }>, scope: Scope): string | undefined {
  const stepOne = !s.step || (s.step.kind === 'num' && s.step.value === 1)
  if (!stepOne || s.inclusive || s.start.kind !== 'num' || !Number.isInteger(s.start.value) || s.start.value < 0)
    return undefined
  const stop = s.stop
  if (stop.kind !== 'call' || stop.callee !== 'len' || stop.args[0]?.kind !== 'var') return undefined
  return scope.fixed.has(stop.args[0].name) ? stop.args[0].name : undefined
}

/** One function with its checks placed (see the module comment). */
export function insertChecksFunction(
  f: FunctionDef,
  program: Program,
  effectful: ReadonlySet<string> = effectfulFunctions(program.functions.values()),
): FunctionDef {
  const fixed = new Set(f.params.filter((p) => p.type.kind === 'array').map((p) => p.name))
  walk(f.body, (x) => {
    if (x.kind === 'alloc' || x.kind === 'dealloc') fixed.delete(x.name)
  })
  const params = new Set(f.params.map((p) => p.name))
  const fresh = new Set<string>()
  walk(f.body, (x) => {
    if (x.kind === 'alloc' && !params.has(x.name) && x.value.kind === 'call' && x.value.callee === 'zeros')
      fresh.add(x.name)
  })
  return { ...f, body: checkBlock(f.body, { program, fixed, proven: new Map(), effectful, fresh }) }
}

/**
 * Places the run-time checks of every function of a program and of its inverses as `assert`
 * statements (see the module comment); with `options.checks` off, returns them unchanged.
 */
export function insertChecks(
  program: Program,
  inverses: Map<string, FunctionDef>,
  options: CompileOptions,
): { program: Program; inverses: Map<string, FunctionDef> } {
  if (!options.checks) return { program, inverses }
  const effectful = effectfulFunctions([...program.functions.values(), ...inverses.values()])
  const functions = new Map([...program.functions].map(([n, d]) => [n, insertChecksFunction(d, program, effectful)]))
  return {
    program: { ...program, functions },
    inverses: new Map([...inverses].map(([n, d]) => [n, insertChecksFunction(d, program, effectful)])),
  }
}
