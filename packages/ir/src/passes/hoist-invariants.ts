/**
 * Pass `hoist-invariants` (loop-invariant code motion): a pure expression inside a `for` loop
 * whose inputs the loop never writes has the same value on every iteration, so it is computed once,
 * into a scalar ancilla, before the loop, and uncomputed after it:
 *
 *     for i in 0..n { y[i] += x[i] * cos(theta[j]) }
 * becomes
 *     i$inv0: f64 <- 0.0
 *     if (0 < n, 0 < n) { i$inv0 += cos(theta[j]) }
 *     for i in 0..n { y[i] += x[i] * i$inv0 }
 *     @unchecked { if (0 < n, 0 < n) { i$inv0 -= cos(theta[j]) } ; i$inv0 -> 0.0 }
 *
 * (a value that needs no guard is allocated at the value and freed at it: `i$inv0: f64 <- e`,
 * `@unchecked { i$inv0 -> e }`). The result stays reversible, and exact: the ancilla holds `e`,
 * (with a guard `0 + e`, which is `e` but for the sign of a zero), and `e - e` is zero when `e`
 * is recomputed from the same (unchanged) inputs. The deallocation sits in `@unchecked` all the
 * same, because `e - e` is NaN (and `e` unequal to itself) when `e` is infinite or NaN, which the
 * original program did not check either; without run-time checks `dead-ancillas` then drops the
 * uncompute, and with them the pass leaves it out (`checks` of `hoistInvariants`).
 *
 * What the loop writes (whole variables and whole arrays, the loop variable and every name bound
 * inside the loop included) comes from its statements: update targets, every dataview argument
 * of a call (a function or bijection may write any of them), stack operations, allocations. A
 * loop with a `@safe` statement, a host call, or a call of a function that has one is left alone
 * (host code may write anything). Distinct names are taken for distinct memory, so an array the
 * loop does not name as written keeps its elements (not yet so where a host passes one array for
 * two parameters: see \`apart.ts\` and the README's "Aliased array parameters").
 *
 * Which expressions move: the largest invariant subexpressions of type f64 or i32 that call a pure
 * primitive or read an array element (a lone variable or literal is not worth an ancilla), with
 * no host call. An expression that can fail or trap when evaluated where the program would not
 * (an element read out of bounds, an integer division by zero, a conversion of NaN to i32: wasm
 * traps) moves only when it is evaluated on
 * every iteration (a statement of the loop body itself, not under an `if`, a nested loop or the
 * right operand of `&&`/`||`) and then only under the guard "the loop runs at least once", so it is
 * evaluated exactly when the original evaluated it; float arithmetic and pure primitive calls
 * cannot fail, and move from anywhere in the body, without a guard when the range is literal and
 * not empty. With run-time checks on, such an expression moves as it is only where nothing
 * evaluated before it in the first iteration may fail (the statements of the body before its own,
 * and the other checks of its own statement: bounds, alias, zero factor, `mayFailChecked`), and
 * not from inside `@unchecked`: a hoisted check would otherwise fail before the check that the
 * loop as written reaches first (an invariant read out of bounds hoisted before the first
 * iteration's zero factor). Elsewhere, where its only parts that may fail are element reads, the
 * loop runs in two versions: with it hoisted where the loop runs and a test shows every read in
 * range (`safetyTest`: `0 <= i && i < len(a)`, inner reads first), as written otherwise, where its
 * checks fail in their order:
 *
 *     if (0 < n && (0 <= k && k < len(x)), ~) {
 *       i$inv0: f64 <- x[k]
 *       for i in 0..n { y[i] *= z[i] ; y[i] += i$inv0 }
 *       @unchecked { i$inv0 -> x[k] }
 *     } else {
 *       for i in 0..n { y[i] *= z[i] ; y[i] += x[k] }
 *     }
 *
 * (one such test a nest: a loop around a loop in two versions is not versioned again, so the
 * copies never multiply; nothing moves out of the test). An expression that the loop's range
 * reads (`acolptr[j + 1]` in `for i in 0..acolptr[j + 1] - acolptr[j]`) is read on entry in any
 * case: it moves from anywhere, without a guard. So does a read of an element that a statement of the same block accessed before
 * the loop, whatever happens, with nothing in between writing the array as a whole or a name its
 * index reads: it is in range (see `hoistInvariantsBlock`). Loops are processed innermost first, so an invariant of two nested loops climbs out
 * of both (the inner ancilla's computation is itself invariant in the outer loop).
 */
import type { Arg, Dataview, Expr, FunctionDef, ScalarTypeName, Stmt } from '../ast.js'
import { readNames, rootName, walk } from '../check.js'
import { key } from '../cse.js'
import { exprChildren } from '../stmt-exprs.js'
import { printAsWritten } from '../printer.js'
import { APART } from './apart.js'

type ForStmt = Extract<Stmt, { kind: 'for' }>

/** Types of ancilla the pass introduces (zero is the number 0; f64 arithmetic has no rounding step of its own). */
const HOISTED = new Set<ScalarTypeName>(['f64', 'i32'])

/**
 * The names a block may write: targets, call arguments, stacks, bound names, loop variables; or
 * undefined where anything may change (a host effect: \`effectful\` callees, \`@safe\`). With
 * \`writes\` (per function, which parameters it writes: \`Program.writes\`), a call writes only the
 * arguments of the parameters its callee writes (a bijection all its dataview arguments).
 */
export function writtenNames(
  body: Stmt[],
  effectful: ReadonlySet<string> = new Set(),
  writes?: ReadonlyMap<string, readonly boolean[]>,
): Set<string> | undefined {
  const out = new Set<string>()
  let safe = false
  walk(body, (s) => {
    switch (s.kind) {
      case 'update': {
        const r = rootName(s.target)
        if (r !== undefined) out.add(r)
        break
      }
      case 'callstmt':
        // a function with a host effect may change anything (see `effectfulFunctions`)
        if (s.target !== 'bijection' && effectful.has(s.callee)) safe = true
        s.args.forEach((a, i) => {
          if (s.target !== 'bijection' && writes?.get(s.callee)?.[i] === false) return
          if (a.kind === 'var' || a.kind === 'index' || a.kind === 'field' || a.kind === 'neg') {
            const r = rootName(a)
            if (r !== undefined) out.add(r)
          }
        })
        break
      case 'alloc':
      case 'dealloc':
        out.add(s.name)
        break
      case 'push':
      case 'pop': {
        out.add(s.stack.name)
        const r = rootName(s.value)
        if (r !== undefined) out.add(r)
        break
      }
      case 'for':
        out.add(s.variable)
        break
      case 'safe':
        safe = true
        break
    }
  })
  return safe ? undefined : out
}

/**
 * Whether atom \`n\` of an index polynomial (a name, or \`len(X)\` of an array) may hold another
 * value after a region that writes \`written\` (\`writtenNames\`) and allocates or deallocates
 * \`resized\` (\`resizedNames\`): a name changes where it is written, \`len(X)\` only where X is
 * allocated or deallocated (writing its elements keeps its length; \`X -> zeros(n)\` then
 * \`X <- zeros(m)\` gives it another).
 */
export function atomChanges(n: string, written: ReadonlySet<string>, resized: ReadonlySet<string>): boolean {
  return n.startsWith('len(') && n.endsWith(')') ? resized.has(n.slice(4, -1)) : written.has(n)
}

/** The names that \`alloc\` and \`dealloc\` statements in \`body\` (nested blocks included) bind. */
export function resizedNames(body: Stmt[]): Set<string> {
  const out = new Set<string>()
  walk(body, (s) => {
    if (s.kind === 'alloc' || s.kind === 'dealloc') out.add(s.name)
  })
  return out
}

/**
 * Whether evaluating node `e` itself (its operands aside) may fail or trap: an element read (out of
 * range), integer division or remainder (by zero), `div`, a conversion to an integer (wasm traps
 * on NaN and out of range).
 */
export function mayFailHere(e: Expr): boolean {
  switch (e.kind) {
    case 'index':
      return true
    case 'call':
      return e.callee === 'div' || e.callee === 'i32' || e.callee === 'convert'
    case 'binary':
      return (e.op === '/' || e.op === '%') && e.type !== 'f64' && e.type !== 'f32'
    default:
      return false
  }
}

/** Whether evaluating `e` cannot fail or trap wherever its names are defined (no node of it may, `mayFailHere`). */
export const cannotFail = (e: Expr): boolean => !mayFailHere(e) && exprChildren(e).every(cannotFail)

/** What the pass knows of one expression node (from its children: one pass, no recursion). */
interface Info {
  /** Reads nothing the loop writes, calls no host function. */
  invariant: boolean
  /** May fail or trap when evaluated: an element read, integer division, a conversion to i32. */
  partial: boolean
  /** Worth an ancilla: calls a pure primitive or reads an element. */
  worth: boolean
  /** A number for its structure: equal numbers, equal expressions (within one loop). */
  id: number
}

/**
 * The `Info` of every node of `root`, children before parents, with an explicit stack (a chain of
 * thousands of terms is thousands deep); `ids` numbers the structures (shared by a loop's expressions).
 */
function analyse(
  root: Expr,
  written: ReadonlySet<string>,
  ids: Map<string, number>,
  out: Map<Expr, Info>,
  host: { seen: boolean },
  known: ReadonlyMap<string, Set<string>> = NONE,
): void {
  const todo: Array<[Expr, boolean]> = [[root, false]]
  while (todo.length) {
    const [e, ready] = todo.pop()!
    if (out.has(e)) continue
    const cs = exprChildren(e)
    if (!ready) {
      todo.push([e, true])
      for (const c of cs) if (!out.has(c)) todo.push([c, false])
      continue
    }
    const kids = cs.map((c) => out.get(c)!)
    let invariant = kids.every((k) => k.invariant)
    let partial = kids.some((k) => k.partial)
    let worth = kids.some((k) => k.worth)
    let shape: string
    const t = `:${e.type ?? ''}`
    switch (e.kind) {
      case 'num':
        shape = `${Object.is(e.value, -0) ? '-0' : e.value}${e.isFloat ? 'f' : ''}${t}`
        break
      case 'bool':
        shape = String(e.value)
        break
      case 'var':
        invariant = !written.has(e.name)
        shape = `$${e.name}`
        break
      case 'index':
        invariant &&= !written.has(e.array.name)
        // an element the block accessed before the loop is in range (see `accessedBefore`)
        partial ||= !known.has(elementKey(e.array.name, e.index))
        worth = true
        shape = `${e.array.name}[]${t}`
        break
      case 'call':
        // (\`$apart\` reads where two arrays lie, which nothing changes: see \`apart.ts\`)
        if (e.callee === APART) worth = false
        else if (e.callee.startsWith('$')) invariant = !(host.seen = true)
        else if (e.callee === 'zeros') invariant = false
        else if (!CHEAP.has(e.callee)) worth = true
        partial ||= mayFailHere(e)
        shape = `${e.callee}()${t}`
        break
      case 'binary':
        partial ||= mayFailHere(e)
        shape = `${e.op}${t}`
        break
      case 'unary':
        shape = `${e.op}u${t}`
        break
      case 'field':
        shape = `.${e.field}`
        break
    }
    const k = `${shape}(${kids.map((c) => c.id).join(',')})`
    let id = ids.get(k)
    if (id === undefined) ids.set(k, (id = ids.size))
    out.set(e, { invariant, partial, worth, id })
  }
}

/**
 * Elements known to be in range: key (`elementKey`) → the names whose write may move it out of
 * range (its array and the names its index reads).
 */
type Known = Map<string, Set<string>>

const NONE: ReadonlyMap<string, Set<string>> = new Map()

/** The key of element `array[index]` among the elements known to be in range. */
const elementKey = (array: string, index: Expr): string => `${array}[${key(index)}]`

/**
 * The elements that a statement of a block accesses whatever happens (an update's target, the
 * element reads of an update's value or an allocation's value outside the right operand of `&&`
 * and `||`): once it has run, they are known to be in range, until something writes the array as
 * a whole or a name an index reads (see `hoistInvariantsBlock`).
 */
function accessedBy(s: Stmt, out: Known): void {
  const reads = (root: Expr) => {
    const todo: Expr[] = [root]
    while (todo.length) {
      const e = todo.pop()!
      if (e.kind === 'index') out.set(elementKey(e.array.name, e.index), readNames(e))
      if (e.kind === 'binary' && (e.op === '&&' || e.op === '||')) todo.push(e.left)
      else todo.push(...exprChildren(e))
    }
  }
  switch (s.kind) {
    case 'update': {
      let t = s.target
      while (t.kind === 'neg') t = t.target
      if (t.kind === 'index') {
        reads(t.index)
        out.set(elementKey(t.array.name, t.index), readNames(t as Expr))
      }
      reads(s.value)
      break
    }
    case 'alloc':
      if (s.value.kind !== 'emptystack') reads(s.value)
      break
  }
}

/**
 * Whether statement `s` may fail with run-time checks on (conservatively: anything but an update
 * or allocation whose every part is total may). `inRange(k)`: whether the element of key `k`
 * (`elementKey`) is known to be in range. An update may fail on an alias check (\`distinct\`),
 * the bounds of its target or of an element it reads, a zero factor (`*=`, `/=` by anything but a
 * nonzero literal), or a value that may fail (`mayFailHere`); an allocation on its value.
 */
export function mayFailChecked(s: Stmt, inRange: (key: string) => boolean = () => false): boolean {
  const total = (root: Expr): boolean => {
    const todo: Expr[] = [root]
    while (todo.length) {
      const e = todo.pop()!
      if (e.kind === 'index' ? !inRange(elementKey(e.array.name, e.index)) : mayFailHere(e)) return false
      if (e.kind === 'call' && (e.callee.startsWith('$') || e.callee === 'zeros')) return false
      todo.push(...exprChildren(e))
    }
    return true
  }
  switch (s.kind) {
    case 'update': {
      if ((s as { distinct?: unknown[] }).distinct?.length) return true
      if ((s.op === '*=' || s.op === '/=') && !(s.value.kind === 'num' && s.value.value !== 0)) return true
      let t: Dataview = s.target
      while (t.kind === 'neg' || t.kind === 'field') t = t.target as Dataview
      if (t.kind === 'index' && !total(t as Expr)) return true
      return !total(s.value)
    }
    case 'alloc':
      return s.value.kind !== 'emptystack' && !total(s.value)
    default:
      return true
  }
}

/** Calls that are not worth an ancilla by themselves (a length, a conversion). */
const CHEAP = new Set(['len', 'f64', 'f32', 'i32', 'convert'])

/** A copy of `e` with new children (in the order of `exprChildren`). */
function withChildren(e: Expr, cs: Expr[]): Expr {
  switch (e.kind) {
    case 'index':
      return { ...e, index: cs[0]! }
    case 'field':
      return { ...e, target: cs[0]! }
    case 'unary':
      return { ...e, arg: cs[0]! }
    case 'binary':
      return { ...e, left: cs[0]!, right: cs[1]! }
    case 'call':
      return { ...e, args: cs }
    default:
      return e
  }
}

const intLiteral = (e: Expr | null): number | undefined =>
  e === null ? 1 : e.kind === 'num' && Number.isInteger(e.value) ? e.value : undefined

/**
 * The condition "the loop runs at least once" as an expression over its range, `true` when the
 * range is literal and not empty, undefined when the step is not an integer literal.
 */
function nonEmpty(s: ForStmt): Expr | true | undefined {
  const step = intLiteral(s.step)
  if (step === undefined || step === 0) return undefined
  const a = intLiteral(s.start),
    b = intLiteral(s.stop)
  if (a !== undefined && b !== undefined) {
    const ok = step > 0 ? (s.inclusive ? a <= b : a < b) : s.inclusive ? a >= b : a > b
    return ok ? true : undefined
  }
  const op = step > 0 ? (s.inclusive ? '<=' : '<') : s.inclusive ? '>=' : '>'
  return { kind: 'binary', op, left: s.start, right: s.stop, type: 'bool', ...(s.loc ? { loc: s.loc } : {}) } as Expr
}

/**
 * The \`if\` statements that run a loop in two versions (with checks on: its values that may fail
 * hoisted where a test shows they cannot, the loop as written elsewhere), made by this pass: a
 * loop around one is not versioned again, and nothing moves out of their tests.
 */
const VERSIONED = new WeakSet<Stmt>()

/** \`copy\`, one of \`VERSIONED\` where \`original\` is. */
function versionOf(original: Stmt, copy: Stmt): Stmt {
  if (VERSIONED.has(original)) VERSIONED.add(copy)
  return copy
}

/** One hoisted value: its ancilla, the expression, and whether it needs the loop to run. */
interface Hoisted {
  name: string
  value: Expr
  type: ScalarTypeName
  guarded: boolean
  /** may fail (moved from what runs on every iteration, under the loop's guard) */
  partial: boolean
  /**
   * With checks on, where something before it in the first iteration may fail: the test that it
   * cannot fail (\`safetyTest\`); the loop then runs with it hoisted only where the test holds.
   */
  test?: Expr
}

/** The state of the pass over one function: a counter for fresh names. */
interface Names {
  next: number
  taken: Set<string>
  /** compiled with run-time checks: the guarded uncomputes are left out (see `hoistInvariants`) */
  checks?: boolean
}

function freshName(names: Names, variable: string): string {
  let n: string
  do n = `${variable}$inv${names.next++}`
  while (names.taken.has(n))
  names.taken.add(n)
  return n
}

/** The loop with its invariants hoisted: the statements to put in its place. */
function hoistLoop(
  s: ForStmt,
  names: Names,
  effectful: ReadonlySet<string>,
  known: ReadonlyMap<string, Set<string>> = NONE,
): Stmt[] {
  const written = writtenNames(s.body, effectful)
  if (!written) return [s]
  written.add(s.variable)
  const guard = nonEmpty(s)
  const found = new Map<number, Hoisted>()
  const ids = new Map<string, number>()
  const info = new Map<Expr, Info>()
  // what the loop's range reads is read on entry, whatever the body does: safe to read before it
  const onEntry = new Set<number>()
  // a host call in the body (it may have side effects) leaves the loop as it is
  const host = { seen: false }
  for (const e of [s.start, s.stop, s.step]) {
    if (!e) continue
    const seen = new Map<Expr, Info>()
    analyse(e, written, ids, seen, host, known)
    for (const i of seen.values()) onEntry.add(i.id)
  }
  // the ancilla of an expression node that moves, or undefined; `every`: evaluated on every iteration
  const decide = (e: Expr, every: boolean): Expr | undefined => {
    if (e.kind === 'num' || e.kind === 'bool' || e.kind === 'var') return undefined
    const d = info.get(e)!
    if (e.type === undefined || !HOISTED.has(e.type) || !d.invariant || !d.worth) return undefined
    const safe = !d.partial || onEntry.has(d.id)
    if (!safe && !(every && guard !== undefined)) return undefined
    let h = found.get(d.id)
    if (!h) {
      h = {
        name: freshName(names, s.variable),
        value: e,
        type: e.type,
        guarded: !safe && guard !== true,
        partial: !safe,
      }
      found.set(d.id, h)
    }
    // (printed in run-time errors as the expression it stands for: `Substituted.shown`)
    return { kind: 'var', name: h.name, type: h.type, ...(e.loc ? { loc: e.loc } : {}), shown: printAsWritten(e) }
  }
  // the largest invariant subexpressions of e worth moving, replaced (no recursion per level)
  const rewrite = (root: Expr, every: boolean): Expr => {
    analyse(root, written, ids, info, host, known)
    const order: Expr[] = []
    const out = new Map<Expr, Expr>()
    const todo: Array<[Expr, boolean]> = [[root, every]]
    while (todo.length) {
      const [e, ev] = todo.pop()!
      if (out.has(e)) continue
      const r = decide(e, ev)
      if (r) {
        out.set(e, r)
        continue
      }
      order.push(e)
      if (e.kind === 'call' && e.callee === 'len') continue
      // the right operand of && and || is not always evaluated
      if (e.kind === 'binary') todo.push([e.left, ev], [e.right, ev && e.op !== '&&' && e.op !== '||'])
      else for (const c of exprChildren(e)) todo.push([c, ev])
    }
    // parents after children: a node is copied when a child changed
    for (let i = order.length - 1; i >= 0; i--) {
      const e = order[i]!
      const cs = exprChildren(e)
      const ns = cs.map((c) => out.get(c) ?? c)
      if (ns.every((c, j) => c === cs[j])) continue
      out.set(e, withChildren(e, ns))
    }
    return out.get(root) ?? root
  }
  const target = (d: Dataview, every: boolean): Dataview => {
    switch (d.kind) {
      case 'index':
        return { ...d, index: rewrite(d.index, every) }
      case 'field':
      case 'neg':
        return { ...d, target: target(d.target as Dataview, every) } as Dataview
      default:
        return d
    }
  }
  const arg = (a: Arg, every: boolean): Arg =>
    a.kind === 'var' || a.kind === 'index' || a.kind === 'field' || a.kind === 'neg'
      ? target(a as Dataview, every)
      : rewrite(a, every)
  // with checks on, an element known in range before the loop stays so inside it only while the
  // loop writes none of its names (its array as a whole included)
  const inRange = (k: string): boolean => {
    const ns = known.get(k)
    return ns !== undefined && ![...ns].some((n) => written.has(n))
  }
  // the loop holds a loop that runs in two versions (see below)
  let nested = false
  walk(s.body, (x) => {
    if (VERSIONED.has(x)) nested = true
  })
  // the statements of a block, in order: with checks on, a value that may fail moves as it is
  // (from a statement run on every iteration) only while nothing before it in the first iteration
  // can fail (the statements before it, and the other checks of its own statement, see
  // `mayFailChecked`): else the hoisted check would fail first where the loop fails earlier on
  // another check
  const block = (body: Stmt[], every: boolean): Stmt[] => {
    let clean = true
    return body.map((x): Stmt => {
      if (!names.checks) return stmt(x, every)
      const wasClean = clean
      clean &&= !mayFailChecked(x, inRange)
      const before = new Set(found.keys())
      const next = names.next
      const r = stmt(x, every)
      const fresh = [...found].filter(([id, h]) => !before.has(id) && h.partial)
      if (!fresh.length || (wasClean && !mayFailChecked(r, inRange))) return r
      // something before them may fail: each moves under a test that it cannot fail (the loop
      // as written runs where it may), or the statement stays as it is
      const tests = fresh.map(([, h]) => safetyTest(h.value, inRange))
      // (one version test a nest: a loop around one runs as it is, so copies never multiply)
      if (!nested && tests.every((t) => t !== undefined)) {
        fresh.forEach(([, h], j) => (h.test = tests[j]!))
        return r
      }
      for (const [id, h] of found)
        if (!before.has(id)) {
          found.delete(id)
          names.taken.delete(h.name)
        }
      names.next = next
      return stmt(x, false)
    })
  }
  const stmt = (x: Stmt, every: boolean): Stmt => {
    switch (x.kind) {
      case 'update':
        return { ...x, target: target(x.target, every), value: rewrite(x.value, every) }
      case 'callstmt':
        return { ...x, args: x.args.map((a) => arg(a, every)) }
      case 'alloc':
        return x.value.kind === 'emptystack' ? x : { ...x, value: rewrite(x.value, every) }
      case 'if':
        // the condition runs every time the `if` does; the branches do not
        // (an alias guard's fallback, \`asWritten\`, stays the program as written)
        return versionOf(x, {
          ...x,
          pre: rewrite(x.pre, every && !VERSIONED.has(x)),
          then: block(x.then, false),
          else: x.asWritten ? x.else : block(x.else, false),
        })
      case 'for':
        return {
          ...x,
          start: rewrite(x.start, every),
          stop: rewrite(x.stop, every),
          step: x.step ? rewrite(x.step, every) : null,
          body: block(x.body, false),
        }
      case 'while':
        for (const c of [x.pre, x.post]) analyse(c, written, ids, info, host, known)
        return { ...x, body: block(x.body, false) }
      case 'unchecked':
        // (with checks on, a read that may fail stays in: no assert guards it there)
        return { ...x, body: block(x.body, every && !names.checks) }
      default:
        // deallocations (their value only feeds a check), stacks: left as they are
        return x
    }
  }
  const body = block(s.body, true)
  if (!found.size || host.seen) return [s]
  const loc = s.loc ? { loc: s.loc } : {}
  const before: Stmt[] = [],
    after: Stmt[] = []
  const hoisted = [...found.values()].filter((h) => !h.test)
  const tested = [...found.values()].filter((h) => h.test)
  for (const h of hoisted) {
    const type = { kind: 'scalar' as const, name: h.type }
    const zero: Expr = { kind: 'num', value: 0, isFloat: h.type !== 'i32', type: h.type }
    const v: Dataview = { kind: 'var', name: h.name, type: h.type, ...loc }
    const guarded = (op: '+=' | '-='): Stmt => {
      const u: Stmt = { kind: 'update', op, target: v, value: h.value, ...loc }
      return h.guarded ? { kind: 'if', pre: guard as Expr, post: null, then: [u], else: [], ...loc } : u
    }
    // the uncomputes in the reverse order of the computes
    if (!h.guarded) {
      // allocated at its value and freed at it (a local with the value itself: no `0 + e`, which
      // is +0 where e is −0, and which V8 measured slower than the value)
      before.push({ kind: 'alloc', name: h.name, value: h.value, type, declared: type, ...loc })
      after.unshift({ kind: 'dealloc', name: h.name, value: h.value, type, declared: type, ...loc })
      continue
    }
    before.push({ kind: 'alloc', name: h.name, value: zero, type, declared: type, ...loc }, guarded('+='))
    const free: Stmt = { kind: 'dealloc', name: h.name, value: zero, type, declared: type, ...loc }
    after.unshift(...(names.checks ? [free] : [guarded('-='), free]))
  }
  let loop: Stmt = { ...s, body }
  if (tested.length) {
    // with checks on: the loop with them hoisted where the loop runs and none of them can fail,
    // the loop as written elsewhere (where its checks fail as they would)
    const and = (l: Expr, r: Expr): Expr => ({ kind: 'binary', op: '&&', left: l, right: r, type: 'bool', ...loc })
    const tests = tested.map((h) => h.test!)
    const pre = (guard === true ? tests : [guard as Expr, ...tests]).reduce(and)
    const type = (h: Hoisted) => ({ kind: 'scalar' as const, name: h.type })
    loop = {
      kind: 'if',
      pre,
      post: null,
      then: [
        ...tested.map(
          (h): Stmt => ({ kind: 'alloc', name: h.name, value: h.value, type: type(h), declared: type(h), ...loc }),
        ),
        loop,
        {
          kind: 'unchecked',
          body: tested
            .map(
              (h): Stmt => ({
                kind: 'dealloc',
                name: h.name,
                value: h.value,
                type: type(h),
                declared: type(h),
                ...loc,
              }),
            )
            .reverse(),
          ...loc,
        },
      ],
      else: [s],
      ...loc,
    }
    VERSIONED.add(loop)
  }
  if (!hoisted.length) return [loop]
  return [...before, loop, { kind: 'unchecked', body: after, ...loc }]
}

/**
 * The test that evaluating \`e\` cannot fail, where its only nodes that may are element reads:
 * \`0 <= i && i < len(a)\` for each read \`a[i]\` not known in range, inner reads first (so that
 * \`&&\` evaluates a read only where it is in range); undefined where another node may fail (an
 * integer division, a conversion to i32) or nothing may.
 */
export function safetyTest(e: Expr, inRange: (key: string) => boolean = () => false): Expr | undefined {
  const tests: Expr[] = []
  let other = false
  // children before parents, with an explicit stack (see \`analyse\`)
  const order: Expr[] = []
  const todo: Expr[] = [e]
  while (todo.length) {
    const x = todo.pop()!
    order.push(x)
    todo.push(...exprChildren(x))
  }
  // (reversed: every node after the nodes below it)
  for (const x of order.reverse()) {
    if (x.kind === 'index') {
      if (inRange(elementKey(x.array.name, x.index))) continue
      const loc = x.loc ? { loc: x.loc } : {}
      const len: Expr = { kind: 'call', callee: 'len', args: [x.array], type: 'i32', ...loc }
      const zero: Expr = { kind: 'num', value: 0, isFloat: false, type: 'i32' }
      tests.push(
        { kind: 'binary', op: '<=', left: zero, right: x.index, type: 'bool', ...loc },
        { kind: 'binary', op: '<', left: x.index, right: len, type: 'bool', ...loc },
      )
    } else if (mayFailHere(x)) other = true
  }
  if (other || !tests.length) return undefined
  return tests.reduce((l, r): Expr => ({ kind: 'binary', op: '&&', left: l, right: r, type: 'bool' }))
}

/**
 * `body` with the invariants of its loops hoisted (innermost loops first). `known`: the elements
 * known to be in range on entry (see `accessedBy`). Along the block, the elements its statements
 * access join them, and leave them when a statement writes their array other than element by
 * element or a name their index reads; a loop takes those known before it: a read of one of them
 * cannot fail, so it moves from anywhere in the loop without a guard (the loop that adds to
 * `H[(a + j)·w + l]` the product of `x[a + j]` and `t[e·w + l]`, under a test of `a + j`, after
 * the statement that updated `t[e·w + l]`).
 */
function hoistInvariantsBlock(
  body: Stmt[],
  names: Names,
  effectful: ReadonlySet<string>,
  entry: ReadonlyMap<string, Set<string>> = NONE,
): Stmt[] {
  const known: Known = new Map(entry)
  return body.flatMap((s): Stmt[] => {
    let out: Stmt[]
    switch (s.kind) {
      case 'if':
        out = [
          versionOf(s, {
            ...s,
            then: hoistInvariantsBlock(s.then, names, effectful, known),
            else: s.asWritten ? s.else : hoistInvariantsBlock(s.else, names, effectful, known),
          }),
        ]
        break
      case 'while':
      case 'unchecked':
        out = [{ ...s, body: hoistInvariantsBlock(s.body, names, effectful) } as Stmt]
        break
      case 'for':
        out = hoistLoop({ ...s, body: hoistInvariantsBlock(s.body, names, effectful) }, names, effectful, known)
        break
      default:
        out = [s]
    }
    retire(s, known, effectful)
    accessedBy(s, known)
    return out
  })
}

/** Drops from `known` the elements that `s` may move out of range (see `hoistInvariantsBlock`). */
function retire(s: Stmt, known: Known, effectful: ReadonlySet<string>): void {
  if (known.size === 0) return
  const written = writtenNames([s], effectful)
  if (!written) {
    known.clear()
    return
  }
  // an update of an element leaves its array's length as it is
  if (s.kind === 'update') {
    let t = s.target
    while (t.kind === 'neg') t = t.target
    if (t.kind === 'index') written.delete(t.array.name)
  }
  if (written.size === 0) return
  for (const [k, names] of known) for (const n of names) if (written.has(n)) known.delete(k)
}

/**
 * The function with the loop invariants of its `for` loops computed once before each loop.
 * `effectful`: the functions with a host effect (see `effectfulFunctions`); a loop that calls
 * one, or calls the host itself, is left as it is. `checks`: the program is compiled with
 * run-time checks, where `dead-ancillas` does not run: the guarded uncompute (`i$inv0 -= e` under
 * the loop's guard, which evaluates `e` a second time) is left out of the `@unchecked` block, and
 * the ancilla is freed there as it is; no check ever looked at it.
 */
export function hoistInvariants(
  f: FunctionDef,
  effectful: ReadonlySet<string> = new Set(),
  checks = false,
): FunctionDef {
  const taken = new Set<string>(f.params.map((p) => p.name))
  walk(f.body, (s) => {
    if (s.kind === 'alloc') taken.add(s.name)
    if (s.kind === 'for') taken.add(s.variable)
  })
  return { ...f, body: hoistInvariantsBlock(f.body, { next: 0, taken, checks }, effectful) }
}
