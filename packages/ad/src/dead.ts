/**
 * Dead-update elimination for gradient programs run without checks. The drivers run a fused
 * gradient program (or the tangent of one, for Hessians) on their own copies and read back only
 * the gradients (or their tangents) and the loss value: the values that the adjoint part restores
 * (uncomputes) are never looked at. An update whose target is not read afterwards (by a later
 * statement, a loop condition or a later iteration) therefore does nothing observable and is
 * dropped. The analysis is the usual backward liveness over structured code, with whole variables
 * and whole arrays as the unit (an array element counts as its array), refined in two ways:
 *
 * - **Calls** are specialised: a call of a function of the program gets a copy of the callee
 *   (`<name>$live<n>`) whose observed parameters are those whose arguments are live after the
 *   call, with the callee's own dead updates dropped; the arguments live before the call are those
 *   whose parameters the copy reads. Inverse calls keep everything they touch.
 * - **Loop-private arrays**: in `for i …`, an array whose every access in the body is an element
 *   `a[i·c + k]` (0 ≤ k < c, one c per array; `i·c` possibly held in an integer ancilla that the
 *   body allocates and never changes) touches different elements in different iterations, so an
 *   update in one iteration is never read by another: only reads in the same iteration or after
 *   the loop keep it. `k` may also be an expression d that an enclosing `if 0 <= d && d < c'`
 *   (c' ≤ c) bounds, when that `if`'s branch writes nothing d reads (the unit-seed updates of
 *   the tangent transform, `t$y[j·w + (i − o)]`).
 *
 *   With a symbolic stride, `base + i·n + j` counts too where the base and n are invariant and an
 *   inner loop bounds j to [0, n) (`ranged`).
 * - **Rows of history arrays** (`deadRows`): in a loop counting down (a literal step of either
 *   sign), the updates of an array at the highest row relative to the iteration
 *   (`u[(t + 1) * n + i] -= …`) that nothing but they read, when every other read is at a lower
 *   row, are never read by a later iteration (counting up: the lowest row).
 *
 * Stacks and host effects keep everything they touch. The result is no longer reversible (an
 * ancilla is not back at zero when it is deallocated), so it is only used when run-time checks
 * are off.
 */
import { printExpr, type Arg, type Expr, type FunctionDef, type Registry, type Stmt } from '@tenet/ir'
import { readNames, rootName } from '@tenet/ir/backend'
import { stmtExprs as exprsOf, valueReads as reads } from '@tenet/ir/backend'

type ForStmt = Extract<Stmt, { kind: 'for' }>

/** Index expressions inside a dataview (what writing it reads). */
function addressReads(dv: Expr | Arg, out: Set<string>): void {
  switch (dv.kind) {
    case 'index':
      reads(dv.index, out)
      break
    case 'field':
      addressReads(dv.target, out)
      break
    case 'neg':
      addressReads(dv.target, out)
      break
  }
}

const union = (a: Set<string>, b: Set<string>): Set<string> => {
  const u = new Set(a)
  for (const x of b) u.add(x)
  return u
}
const minus = (a: Set<string>, b: Set<string>): Set<string> => {
  const u = new Set(a)
  for (const x of b) u.delete(x)
  return u
}
const same = (a: Set<string>, b: Set<string>): boolean => a.size === b.size && [...a].every((x) => b.has(x))

function nested(s: Stmt): Stmt[][] {
  switch (s.kind) {
    case 'if':
      return [s.then, s.else]
    case 'while':
    case 'for':
    case 'unchecked':
      return [s.body]
    default:
      return []
  }
}

function eachStmt(body: Stmt[], visit: (s: Stmt) => void): void {
  for (const s of body) {
    visit(s)
    for (const b of nested(s)) eachStmt(b, visit)
  }
}

/** Whether a statement (or one nested in it) names `name` anywhere. */
function mentions(s: Stmt, name: string): boolean {
  if ((s.kind === 'alloc' || s.kind === 'dealloc') && s.name === name) return true
  if (s.kind === 'for' && s.variable === name) return true
  if (exprsOf(s).some((e) => readNames(e).has(name))) return true
  return nested(s).some((b) => b.some((x) => mentions(x, name)))
}

/**
 * Whether the variable `name` is only ever accumulated into in `body`: every statement that names
 * it (at any depth) is `name += e` or `name -= e` with `e` not reading it. Its final value is then
 * its initial value plus terms that do not depend on it, so its derivative with respect to its
 * own initial value is exactly 1 and nothing else depends on that value.
 */
export function onlyAccumulates(body: Stmt[], name: string): boolean {
  return body.every((s) => {
    if (s.kind === 'update' && (s.op === '+=' || s.op === '-=') && s.target.kind === 'var' && s.target.name === name)
      return !readNames(s.value).has(name)
    if ((s.kind === 'alloc' || s.kind === 'dealloc') && s.name === name) return false
    if (s.kind === 'for' && s.variable === name) return false
    if (exprsOf(s).some((e) => readNames(e).has(name))) return false
    return nested(s).every((b) => onlyAccumulates(b, name))
  })
}

const isInt = (e: Expr, lo: number): e is Extract<Expr, { kind: 'num' }> =>
  e.kind === 'num' && Number.isInteger(e.value) && e.value >= lo

/** (d, c) of a condition `0 <= d && d < c` (c an integer literal ≥ 1), or null. */
function bounded(e: Expr): [Expr, number] | null {
  if (e.kind !== 'binary' || e.op !== '&&') return null
  const lo = e.left,
    hi = e.right
  if (lo.kind !== 'binary' || lo.op !== '<=' || !isInt(lo.left, 0) || lo.left.value !== 0) return null
  if (hi.kind !== 'binary' || hi.op !== '<' || !isInt(hi.right, 1)) return null
  return printExpr(lo.right) === printExpr(hi.left) ? [hi.left, hi.right.value] : null
}

/** Whether a statement of `body` (at any depth) writes a variable or array named in `names`. */
function writesAny(body: Stmt[], names: Set<string>): boolean {
  let hit = false
  eachStmt(body, (s) => {
    const written =
      s.kind === 'update'
        ? [s.target]
        : s.kind === 'callstmt'
          ? s.args
          : s.kind === 'push' || s.kind === 'pop'
            ? [s.value]
            : []
    for (const a of written) if (names.has(rootName(a) ?? '')) hit = true
    if (
      (s.kind === 'alloc' || s.kind === 'dealloc' || s.kind === 'for') &&
      names.has(s.kind === 'for' ? s.variable : s.name)
    )
      hit = true
  })
  return hit
}

/** The names a statement writes itself (not in the statements nested in it). */
function ownWrites(s: Stmt): string[] {
  const args =
    s.kind === 'update'
      ? [s.target]
      : s.kind === 'callstmt'
        ? s.args
        : s.kind === 'push' || s.kind === 'pop'
          ? [s.value]
          : []
  const out = args.map((a) => rootName(a)).filter((r): r is string => r !== undefined)
  if (s.kind === 'alloc' || s.kind === 'dealloc') out.push(s.name)
  if (s.kind === 'for') out.push(s.variable)
  return out
}

/** Whether nothing in `body` but its loops over `v` writes `v` (inside such a loop, v is that loop's). */
function onlyLoopsWrite(body: Stmt[], v: string): boolean {
  let other = false
  eachStmt(body, (s) => {
    if (s.kind !== 'for' && ownWrites(s).includes(v)) other = true
  })
  return !other
}

/**
 * Walks the body of `s`, a loop inside `loop`, with `s`'s variable in `inScope` where nothing in
 * `loop` but its loops over that name writes it (it then bounds the indices in the body, see
 * `ranged`), and puts back what `inScope` held for the name before.
 */
function walkInScope(loop: ForStmt, s: ForStmt, inScope: Map<string, ForStmt>, walk: (body: Stmt[]) => void): void {
  const before = inScope.get(s.variable)
  if (onlyLoopsWrite(loop.body, s.variable)) inScope.set(s.variable, s)
  else inScope.delete(s.variable)
  walk(s.body)
  if (before) inScope.set(s.variable, before)
  else inScope.delete(s.variable)
}

/**
 * The operands of `e` that the element analyses read through, for the kinds other than `index`
 * and `var` (which they handle themselves): the length of an array is not one of its elements.
 */
function operands(e: Expr | Arg): Array<Expr | Arg> {
  switch (e.kind) {
    case 'field':
    case 'neg':
      return [e.target]
    case 'unary':
      return [e.arg]
    case 'binary':
      return [e.left, e.right]
    case 'call':
      return e.args.filter((a) => !(e.callee === 'len' && a.kind === 'var'))
    default:
      return []
  }
}

/** The terms of a sum (`+`, and `-` of an integer literal, which counts negated), or null. */
function sumTerms(e: Expr, out: Array<Expr | number>): boolean {
  if (e.kind === 'binary' && e.op === '+') return sumTerms(e.left, out) && sumTerms(e.right, out)
  if (e.kind === 'binary' && e.op === '-' && isInt(e.right, 0)) {
    out.push(-e.right.value)
    return sumTerms(e.left, out)
  }
  out.push(isInt(e, Number.NEGATIVE_INFINITY) ? e.value : e)
  return true
}

const isVar = (e: Expr, name: string): boolean => e.kind === 'var' && e.name === name

/** Where an index of `for i …` lies: the block `base + (i + row)·S + [0, S)`, named by `key`. */
export interface RowOf {
  /** the stride S and the base, printed: indices with the same key share S and base */
  key: string
  /** the block relative to the iteration's own (0: its own elements) */
  row: number
}

/**
 * Where an index `base + (i + c)·S + (v + d)` of `for i …` lies (see {@link RowOf}), or null.
 * `S` is an integer literal or an expression that reads nothing the body writes; `base` (any
 * number of terms) reads nothing the body writes, nor `i`, nor an inner loop variable; `c` and `d`
 * are integer literals; `v` is the variable of the innermost enclosing inner loop over it
 * (`for v in L..stop`, L a literal, the step absent or 1; nothing but loops writes v). The values v + d must lie in one
 * block [r·S, (r + 1)·S): with S a literal, v's range from its literal bounds; with S symbolic,
 * r = 0 with L + d ≥ 0 and `stop` `S` or `S − M` (M a literal) whose largest value plus d is below
 * S. Without `v`, S must be a literal. The index then lies in block i + c + r, and an iteration's
 * own elements (block i) are disjoint from every other iteration's (S ≥ 1 wherever an index with
 * a symbolic S is evaluated: v + d lies in [0, S)): the rows `t * n + j` of a history array.
 */
export function ranged(
  e: Expr,
  i: string,
  inner: ReadonlyMap<string, ForStmt>,
  written: (names: Set<string>) => boolean,
): RowOf | null {
  const terms: Array<Expr | number> = []
  if (!sumTerms(e, terms)) return null
  let stride: Expr | number | null = null
  let v: ForStmt | null = null
  let d = 0
  let c = 0
  const base: string[] = []
  const invariant = (x: Expr): boolean => {
    const names = readNames(x)
    return !names.has(i) && !written(names) && ![...names].some((n) => inner.has(n))
  }
  /** c of `i + c` or `c + i`, i alone 0, else null */
  const shifted = (x: Expr): number | null => {
    if (isVar(x, i)) return 0
    if (x.kind === 'binary' && x.op === '+') {
      if (isVar(x.left, i) && isInt(x.right, 0)) return x.right.value
      if (isVar(x.right, i) && isInt(x.left, 0)) return x.left.value
    }
    return null
  }
  for (const t of terms) {
    if (typeof t === 'number') d += t
    else if (isVar(t, i)) {
      if (stride !== null) return null
      stride = 1
    } else if (t.kind === 'binary' && t.op === '*' && (shifted(t.left) !== null || shifted(t.right) !== null)) {
      const left = shifted(t.left) !== null
      const s = left ? t.right : t.left
      if (stride !== null) return null
      c = (left ? shifted(t.left) : shifted(t.right))!
      if (isInt(s, 1)) stride = s.value
      else if (invariant(s)) stride = s
      else return null
    } else if (t.kind === 'var' && inner.has(t.name)) {
      if (v) return null
      v = inner.get(t.name)!
    } else if (invariant(t)) base.push(printExpr(t))
    else return null
  }
  if (stride === null) return null
  const key = `${typeof stride === 'number' ? stride : printExpr(stride)}|${base.sort().join(' + ')}`
  if (typeof stride === 'number') {
    // the range of v + d (d alone without v), in one block of the literal stride
    let lo = d
    let hi = d
    if (v) {
      if (v.step && !(isInt(v.step, 1) && v.step.value === 1)) return null
      if (!isInt(v.start, Number.NEGATIVE_INFINITY) || !isInt(v.stop, Number.NEGATIVE_INFINITY)) return null
      lo = v.start.value + d
      hi = v.stop.value - (v.inclusive ? 0 : 1) + d
    }
    const r = Math.floor(lo / stride)
    return Math.floor(hi / stride) === r ? { key, row: c + r } : null
  }
  if (!v) return null
  if (v.step && !(isInt(v.step, 1) && v.step.value === 1)) return null
  if (!isInt(v.start, Number.NEGATIVE_INFINITY) || v.start.value + d < 0) return null
  const top = v.inclusive ? 0 : 1
  const st = v.stop
  const [sx, m] = st.kind === 'binary' && st.op === '-' && isInt(st.right, 0) ? [st.left, st.right.value] : [st, 0]
  // the largest v + d is S − m − top + d, below S when m + top − d ≥ 1
  return printExpr(sx) === printExpr(stride) && m + top - d >= 1 ? { key, row: c } : null
}

/**
 * The arrays of `for i …` that each iteration accesses only at its own elements `a[i·c + k]`
 * (0 ≤ k < c, the same c for all accesses of a; k a literal or an expression bounded by an
 * enclosing `if`): see the module comment.
 */
export function privateArrays(loop: ForStmt): Set<string> {
  const i = loop.variable
  let ok = true
  // integer ancillas the body allocates as i·c and never changes: name → c
  const bases = new Map<string, number>()
  const spoiled = new Set<string>()
  const stride = (e: Expr): number | null => {
    if (e.kind === 'var') return e.name === i ? 1 : null
    if (e.kind !== 'binary' || e.op !== '*') return null
    if (e.left.kind === 'var' && e.left.name === i && isInt(e.right, 1)) return e.right.value
    if (e.right.kind === 'var' && e.right.name === i && isInt(e.left, 1)) return e.left.value
    return null
  }
  eachStmt(loop.body, (s) => {
    if (s.kind === 'for' && s.variable === i) ok = false
    if (s.kind === 'alloc') {
      const c = s.value.kind === 'emptystack' ? null : stride(s.value as Expr)
      if (c === null || (bases.has(s.name) && bases.get(s.name) !== c)) spoiled.add(s.name)
      else bases.set(s.name, c)
    }
    const written =
      s.kind === 'update'
        ? [s.target]
        : s.kind === 'callstmt'
          ? s.args
          : s.kind === 'push' || s.kind === 'pop'
            ? [s.value]
            : []
    for (const a of written) {
      const r = rootName(a)
      if (r === i) ok = false
      if (r !== undefined) spoiled.add(r)
    }
  })
  if (!ok) return new Set()
  for (const v of spoiled) bases.delete(v)
  // expressions that an enclosing `if` bounds to [0, c), by their printed text → c
  const guarded = new Map<string, number>()
  /** (c, k) of an index of the form i·c + k, or null (k is 0 for a bounded expression). */
  const classify = (e: Expr): [number, number] | null => {
    if (e.kind === 'var' && bases.has(e.name)) return [bases.get(e.name)!, 0]
    const c = stride(e)
    if (c !== null) return [c, 0]
    if (e.kind === 'binary' && e.op === '+') {
      const [x, k] = isInt(e.right, 0)
        ? [e.left, e.right.value]
        : isInt(e.left, 0)
          ? [e.right, e.left.value]
          : [null, 0]
      const b = x ? classify(x) : null
      if (b && b[1] === 0 && k < b[0]) return [b[0], k]
      if (!x) {
        for (const [base, d] of [
          [e.left, e.right],
          [e.right, e.left],
        ] as const) {
          const g = guarded.get(printExpr(d))
          const c = g === undefined ? null : classify(base)
          if (c && c[1] === 0 && g! <= c[0]) return [c[0], 0]
        }
      }
    }
    return null
  }
  // names the body writes (an invariant reads none of them), and its inner loops in scope → range
  const writtenInBody = (names: Set<string>): boolean => names.has(i) || writesAny(loop.body, names)
  const inScope = new Map<string, ForStmt>()
  const strides = new Map<string, string>()
  const bad = new Set<string>()
  /** The key (stride and base) of an index: the literal form of `classify`, else `ranged`. */
  const keyOf = (e: Expr): string | null => {
    const ck = classify(e)
    if (ck) return `${ck[0]}|`
    const r = ranged(e, i, inScope, writtenInBody)
    return r && r.row === 0 ? r.key : null
  }
  const visit = (e: Expr | Arg): void => {
    switch (e.kind) {
      case 'index': {
        const key = keyOf(e.index)
        const prev = strides.get(e.array.name)
        if (key === null || (prev !== undefined && prev !== key)) bad.add(e.array.name)
        else strides.set(e.array.name, key)
        visit(e.index)
        break
      }
      case 'var':
        bad.add(e.name)
        break
      default:
        for (const a of operands(e)) visit(a)
    }
  }
  const walk = (body: Stmt[]): void => {
    for (const s of body) {
      for (const e of exprsOf(s)) visit(e)
      if (s.kind === 'for') {
        // an inner loop's variable bounds the indices in its body (see `ranged`)
        walkInScope(loop, s, inScope, walk)
        continue
      }
      if (s.kind !== 'if') {
        for (const b of nested(s)) walk(b)
        continue
      }
      const g = bounded(s.pre)
      const key = g && !writesAny(s.then, readNames(g[0])) ? printExpr(g[0]) : null
      const before = key === null ? undefined : guarded.get(key)
      if (key !== null) guarded.set(key, Math.min(g![1], before ?? g![1]))
      walk(s.then)
      if (key !== null) {
        if (before === undefined) guarded.delete(key)
        else guarded.set(key, before)
      }
      walk(s.else)
    }
  }
  walk(loop.body)
  return new Set([...strides.keys()].filter((a) => !bad.has(a)))
}

type UpdateStmt = Extract<Stmt, { kind: 'update' }>

/** The statement kinds `deadRows` reads through. */
const KNOWN = new Set<Stmt['kind']>([
  'update',
  'callstmt',
  'alloc',
  'dealloc',
  'if',
  'while',
  'for',
  'push',
  'pop',
  'safe',
  'unchecked',
])

/**
 * The updates of `loop`'s body that no later statement can read, by the rows of history arrays
 * (see {@link ranged}): in a loop that counts down (`in reverse`), an array that is dead after the
 * loop, accessed only at indices of one stride and base, whose updates at its highest row R
 * (relative to the iteration) are read by nothing but those updates themselves — every other read
 * is at a row below R. Row R of iteration t (block t + R) is then never read again: this
 * iteration's other reads are in blocks below t + R, and a later iteration t′ < t reads blocks
 * below t′ + R ≤ t − 1 + R. A loop that counts up mirrors it (the lowest row, reads above it).
 * This is the adjoint sweep's uncompute of a history `u[(t + 1) * n + i] -= …` (the heat stencil,
 * an integrator's trajectory `xs[2 * t + 2]`): its values are restored but never read. The step
 * is a literal of either sign (a loop `by -1` counts down, `in reverse … by -1` counts up: the
 * adjoint sweep of Horner's `acc[k] += acc[k + 1] * x + c[k]`, whose uncompute `acc[k] -= …`
 * nothing reads again).
 */
export function deadRows(
  loop: ForStmt,
  after: ReadonlySet<string>,
  readOnly: (call: Extract<Stmt, { kind: 'callstmt' }>, k: number) => boolean = () => false,
): Set<UpdateStmt> {
  const out = new Set<UpdateStmt>()
  // a literal step of either sign: the loop counts down when exactly one of a negative step and
  // `in reverse` holds
  const step = !loop.step ? 1 : loop.step.kind === 'num' && Number.isInteger(loop.step.value) ? loop.step.value : 0
  if (step === 0) return out
  const down = step < 0 !== (loop.reverse === true)
  const i = loop.variable
  const writtenInBody = (names: Set<string>): boolean => names.has(i) || writesAny(loop.body, names)
  const inScope = new Map<string, ForStmt>()
  const bad = new Set<string>()
  const keys = new Map<string, string>()
  // where an access is: the innermost block holding it, the position of its statement there, its index
  interface At {
    block: Stmt[]
    pos: number
    index: string
    names: Set<string>
  }
  let here: { block: Stmt[]; pos: number } = { block: loop.body, pos: 0 }
  const at = (index: Expr): At => ({ ...here, index: printExpr(index), names: readNames(index) })
  // every read of an array element: its array, row and the update whose value or address reads it
  const readsOf: Array<{ array: string; row: number; owner: UpdateStmt | null; at: At }> = []
  const targets: Array<{ array: string; row: number; s: UpdateStmt; at: At }> = []
  const place = (array: string, index: Expr): number | null => {
    const r = ranged(index, i, inScope, writtenInBody)
    const prev = keys.get(array)
    if (!r || (prev !== undefined && prev !== r.key)) {
      bad.add(array)
      return null
    }
    keys.set(array, r.key)
    return r.row
  }
  const visit = (e: Expr | Arg, owner: UpdateStmt | null): void => {
    switch (e.kind) {
      case 'index': {
        const row = place(e.array.name, e.index)
        if (row !== null) readsOf.push({ array: e.array.name, row, owner, at: at(e.index) })
        visit(e.index, owner)
        break
      }
      case 'var':
        bad.add(e.name)
        break
      default:
        for (const a of operands(e)) visit(a, owner)
    }
  }
  let unknown = false
  const walk = (body: Stmt[]): void => {
    const outer = here
    for (const [pos, s] of body.entries()) {
      here = { block: body, pos }
      // statements the preprocessor expands (routines, inverse blocks) or assertions: not analysed
      if (!KNOWN.has(s.kind)) unknown = true
      if (s.kind === 'update' && s.target.kind === 'index') {
        const row = place(s.target.array.name, s.target.index)
        if (row !== null) targets.push({ array: s.target.array.name, row, s, at: at(s.target.index) })
        visit(s.target.index, s)
        visit(s.value, s)
        continue
      }
      if (s.kind === 'callstmt') {
        // an element passed where the callee only reads it is a read; anything else spoils its array
        s.args.forEach((a, k) => {
          if (a.kind === 'index' && readOnly(s, k)) visit(a, null)
          else {
            const r = rootName(a)
            if (r !== undefined) bad.add(r)
            visit(a, null)
          }
        })
        // (and whatever else the call reads: the table elements of a tabulated bijection)
        for (const e of exprsOf(s).slice(s.args.length)) visit(e, null)
        continue
      }
      // anything else that writes an array (a stack operation, a whole-array update) spoils it
      for (const w of ownWrites(s)) bad.add(w)
      for (const e of exprsOf(s)) visit(e, null)
      if (s.kind === 'for') {
        walkInScope(loop, s, inScope, walk)
        continue
      }
      for (const b of nested(s)) walk(b)
    }
    here = outer
  }
  walk(loop.body)
  if (unknown) return out
  // the blocks run once per iteration for each value of their index: the loop's body, and the body
  // of a loop at its top level whose variable the index reads (an inner loop bounds it: `ranged`)
  const oncePerElement = (x: At): boolean =>
    x.block === loop.body || loop.body.some((f) => f.kind === 'for' && f.body === x.block && x.names.has(f.variable))
  const arrays = new Set(targets.map((t) => t.array))
  for (const a of arrays) {
    if (bad.has(a) || after.has(a)) continue
    const rows = targets.filter((t) => t.array === a).map((t) => t.row)
    const R = down ? Math.max(...rows) : Math.min(...rows)
    const deadTargets = targets.filter((t) => t.array === a && t.row === R)
    const dead = new Set(deadTargets.map((t) => t.s))
    // a read of row R before the updates, in their block, of the one element they all write (a
    // value holder's read, see value-holders.ts): no dropped update wrote that element before it
    const first = deadTargets[0]!.at
    const oneElement =
      deadTargets.every((t) => t.at.block === first.block && t.at.index === first.index) && oncePerElement(first)
    const firstPos = Math.min(...deadTargets.map((t) => t.at.pos))
    const readBefore = (r: (typeof readsOf)[number]): boolean =>
      oneElement && r.at.block === first.block && r.at.index === first.index && r.at.pos < firstPos
    const ok = readsOf.every(
      (r) =>
        r.array !== a || (r.owner !== null && dead.has(r.owner)) || (down ? r.row < R : r.row > R) || readBefore(r),
    )
    if (ok) for (const s of dead) out.add(s)
  }
  return out
}

/** `body` without the statements in `drop` (at any depth). */
function without(body: Stmt[], drop: ReadonlySet<Stmt>): Stmt[] {
  const out: Stmt[] = []
  for (const s of body) {
    if (drop.has(s)) continue
    switch (s.kind) {
      case 'if':
        out.push({ ...s, then: without(s.then, drop), else: without(s.else, drop) })
        break
      case 'while':
      case 'for':
      case 'unchecked':
        out.push({ ...s, body: without(s.body, drop) } as Stmt)
        break
      default:
        out.push(s)
    }
  }
  return out
}

/**
 * Whether `body` only updates variables outside `live` (and its own ancillas): no calls, stack
 * operations or host effects.
 */
function onlyWritesDead(body: Stmt[], live: ReadonlySet<string>): boolean {
  return body.every((s) => {
    switch (s.kind) {
      case 'update': {
        const r = rootName(s.target)
        return r !== undefined && !live.has(r)
      }
      case 'alloc':
      case 'dealloc':
        return s.value.kind !== 'emptystack'
      case 'if':
        return onlyWritesDead(s.then, live) && onlyWritesDead(s.else, live)
      case 'while':
      case 'for':
      case 'unchecked':
        return onlyWritesDead(s.body, live)
      default:
        return false
    }
  })
}

/** Liveness and dead-update elimination over one program (a set of functions that call each other). */
class DeadUpdates {
  private readonly specialised = new Map<string, { name: string; liveIn: boolean[]; empty: boolean }>()
  readonly out: FunctionDef[] = []

  constructor(
    private readonly functions: ReadonlyMap<string, FunctionDef>,
    private readonly isBijection: (name: string) => boolean,
  ) {}

  /**
   * Whether the call passes its argument `k` to a parameter that the callee (a function of the
   * program, called forwards or inverted) never writes: no update, call or stack operation names it.
   */
  private readsOnly(call: Extract<Stmt, { kind: 'callstmt' }>, k: number): boolean {
    const callee = this.functions.get(call.callee)
    const p = callee?.params[k]
    return !!callee && callee.params.length === call.args.length && !!p && !writesAny(callee.body, new Set([p.name]))
  }

  /** `f` without its dead updates when only the parameters named in `observed` are read after it. */
  run(f: FunctionDef, observed: ReadonlySet<string>): FunctionDef {
    return { ...f, body: this.sweep(f.body, new Set(observed), true).body }
  }

  /** The copy of `name` specialised for the observed parameters (memoised); its live-in parameters. */
  private specialise(name: string, observed: boolean[]): { name: string; liveIn: boolean[]; empty: boolean } {
    const key = `${name}|${observed.map((b) => (b ? 1 : 0)).join('')}`
    const hit = this.specialised.get(key)
    if (hit) return hit
    const f = this.functions.get(name)!
    // while its body is analysed (recursion), the copy counts as reading every parameter
    const entry = { name: `${name}$live${this.specialised.size}`, liveIn: f.params.map(() => true), empty: false }
    this.specialised.set(key, entry)
    const r = this.sweep(f.body, new Set(f.params.filter((_, i) => observed[i]).map((p) => p.name)), true)
    entry.liveIn = f.params.map((p) => r.live.has(p.name))
    // a copy that does nothing observable: its calls are dropped
    entry.empty = r.body.length === 0
    this.out.push({ ...f, name: entry.name, body: r.body })
    return entry
  }

  /**
   * Liveness before `body` given liveness after it; with `drop`, returns the body without its dead
   * updates too.
   */
  private sweep(body: Stmt[], after: Set<string>, drop: boolean): { live: Set<string>; body: Stmt[] } {
    // the deallocation that ends each scalar ancilla of this body: dropped with a dead allocation
    const ends = new Map<number, number>()
    const open = new Map<string, number>()
    body.forEach((s, i) => {
      if (
        s.kind === 'alloc' &&
        s.value.kind !== 'emptystack' &&
        !(s.value.kind === 'call' && s.value.callee === 'zeros')
      )
        open.set(s.name, i)
      else if (s.kind === 'dealloc' && open.has(s.name)) {
        ends.set(open.get(s.name)!, i)
        open.delete(s.name)
      }
    })
    let live = after
    const kept: Array<Stmt | null> = []
    const keptAt = new Map<number, number>()
    for (let i = body.length - 1; i >= 0; i--) {
      const s = body[i]!
      const end = ends.get(i)
      // (deallocations are always kept: `kept` holds this ancilla's, then the statements of its scope)
      const at = end === undefined ? undefined : keptAt.get(end)
      if (
        s.kind === 'alloc' &&
        at !== undefined &&
        !live.has(s.name) &&
        !kept.slice(at + 1).some((k) => k && mentions(k, s.name))
      ) {
        // an ancilla nothing reads (and no kept statement passes): neither it nor its deallocation is needed
        kept[at] = null
        continue
      }
      const r = this.stmt(s, live, drop)
      live = r.live
      if (r.stmt) {
        keptAt.set(i, kept.length)
        kept.push(r.stmt)
      }
    }
    return { live, body: kept.filter((x): x is Stmt => x !== null).reverse() }
  }

  private stmt(s: Stmt, after: Set<string>, drop: boolean): { live: Set<string>; stmt: Stmt | null } {
    switch (s.kind) {
      case 'update': {
        const root = rootName(s.target)
        if (root !== undefined && !after.has(root)) return { live: after, stmt: null }
        const live = new Set(after)
        reads(s.value, live)
        addressReads(s.target, live)
        return { live, stmt: s }
      }
      case 'alloc': {
        const live = new Set(after)
        live.delete(s.name)
        if (s.value.kind !== 'emptystack') reads(s.value, live)
        return { live, stmt: s }
      }
      // without run-time checks a deallocation reads nothing
      case 'dealloc':
        return { live: after, stmt: s }
      case 'callstmt': {
        // generated IR that the checker has not seen yet has no \`target\`
        const bijection =
          s.target === 'bijection' ||
          (s.target === undefined && !this.functions.has(s.callee) && this.isBijection(s.callee))
        if (bijection) {
          // a bijection whose written arguments are all dead is dropped
          if (
            s.args.every((a) => {
              const r = rootName(a)
              return r !== undefined && !after.has(r)
            })
          )
            return { live: after, stmt: null }
        } else if (!s.inverse && this.functions.has(s.callee)) {
          const callee = this.functions.get(s.callee)!
          const observed = s.args.map((a) => {
            const r = rootName(a)
            return r !== undefined && after.has(r)
          })
          if (callee.params.length === s.args.length) {
            const spec = this.specialise(s.callee, observed)
            if (spec.empty) return { live: after, stmt: null }
            const live = new Set(after)
            s.args.forEach((a, i) => {
              const r = rootName(a)
              if (r === undefined || a.kind === 'unary') reads(a, live)
              else {
                addressReads(a, live)
                if (spec.liveIn[i]) live.add(r)
              }
            })
            return { live, stmt: drop ? { ...s, callee: spec.name } : s }
          }
        }
        // any other call keeps everything it touches
        const live = new Set(after)
        for (const a of s.args) reads(a, live)
        return { live, stmt: s }
      }
      case 'if': {
        const t = this.sweep(s.then, after, drop),
          e = this.sweep(s.else, after, drop)
        // without checks the conditions only choose a branch: with nothing in either, nothing is left
        if (t.body.length === 0 && e.body.length === 0 && drop) return { live: after, stmt: null }
        const live = union(t.live, e.live)
        reads(s.pre, live)
        return { live, stmt: drop ? { ...s, then: t.body, else: e.body } : s }
      }
      case 'while':
      case 'for': {
        if (s.kind === 'for') {
          // the rows of history arrays that no later iteration reads (see `deadRows`)
          const rows = deadRows(s, after, (call, k) => this.readsOnly(call, k))
          if (rows.size) s = { ...s, body: without(s.body, rows) }
        }
        // the loop head: live after the loop, or at the start of another iteration (where the
        // loop-private arrays of a `for` are other elements, see `privateArrays`)
        const control = new Set<string>()
        if (s.kind === 'while') reads(s.pre, control)
        else {
          reads(s.start, control)
          reads(s.stop, control)
          if (s.step) reads(s.step, control)
        }
        const priv = s.kind === 'for' ? privateArrays(s) : new Set<string>()
        let head = union(after, control)
        for (;;) {
          const next = union(union(after, control), minus(this.sweep(s.body, head, false).live, priv))
          if (s.kind === 'for') next.delete(s.variable)
          const merged = union(head, next)
          if (same(merged, head)) break
          head = merged
        }
        const r = this.sweep(s.body, head, drop)
        // a loop left updating only what is dead after it (a counting loop with nothing left, the
        // countdown of an uncompute loop whose body went) does nothing observable. Its control
        // values are live, so computed as f computes them: it ends when f's own loop does.
        if (drop && onlyWritesDead(r.body, after)) return { live: after, stmt: null }
        const live = union(head, r.live)
        if (s.kind === 'for') {
          live.delete(s.variable)
          for (const x of control) live.add(x)
        }
        return { live, stmt: drop ? ({ ...s, body: r.body } as Stmt) : s }
      }
      case 'unchecked': {
        const r = this.sweep(s.body, after, drop)
        return { live: r.live, stmt: drop ? (r.body.length ? { ...s, body: r.body } : null) : s }
      }
      default: {
        // push, pop, @safe: keep, and everything they mention is live
        const live = new Set(after)
        const visit = (e: Expr | Arg | undefined) => {
          if (e) reads(e, live)
        }
        if (s.kind === 'push' || s.kind === 'pop') {
          live.add(s.stack.name)
          visit(s.value)
        } else if (s.kind === 'safe') visit(s.expr)
        return { live, stmt: s }
      }
    }
  }
}

/**
 * `f` without the updates whose results nothing reads before the end, where only the
 * parameters named in `observed` are read after the end. Calls keep everything they touch.
 */
export function dropDeadUpdates(f: FunctionDef, observed: ReadonlySet<string>): FunctionDef {
  return new DeadUpdates(new Map(), () => false).run(f, observed)
}

/**
 * Dead-update elimination over a program: `entry` (one of `functions`) without its dead updates
 * when only the parameters named in `observed` are read after it, its calls of functions in
 * `functions` redirected to copies specialised the same way (see the module comment). Returns the
 * new entry and every function it may call: `functions` (inverse calls use them) plus the copies.
 * `registry` tells the bijections among the callees of calls the checker has not resolved yet
 * (generated IR).
 */
export function dropDeadUpdatesIn(
  functions: FunctionDef[],
  entry: FunctionDef,
  observed: ReadonlySet<string>,
  registry?: Registry,
): { entry: FunctionDef; functions: FunctionDef[] } {
  const du = new DeadUpdates(
    new Map(functions.map((g) => [g.name, g])),
    (n) => registry?.findPrimitive(n)?.kind === 'bijection',
  )
  const e = du.run(entry, observed)
  return { entry: e, functions: [...functions.filter((g) => g.name !== entry.name), ...du.out, e] }
}
