/**
 * `cancel-uncompute` — inside `@unchecked`, with run-time checks on: a `for` loop X followed by a
 * loop Y that is the exact inverse of the part of X writing what Y writes (a merge loop that
 * steers two index counters with a branch keeper, then the uncompute of the keeper and the
 * counters: `~{ for … }`) leaves those names as they were before X. X then runs on copies of
 * them, and Y goes:
 *
 * ```
 * @unchecked {                                   @unchecked {
 *   for i in a..b {                                ia$cu0 <- ia
 *     if (ia < ea && …, ~) { r += … }               for i in a..b {
 *     keeper[i] ^= e(ia, ib)              ⟶          keeper$cu1 <- keeper[i]
 *     if (keeper[i], ~) { ib += 1 }                   if (ia$cu0 < ea && …, ~) { r += … }
 *     else { ia += 1 }                                keeper$cu1 ^= e(ia$cu0, …)
 *   }                                                 if (keeper$cu1, ~) { … } else { ia$cu0 += 1 }
 *   for i in a..b reverse {                           @unchecked { keeper$cu1 -> false }
 *     if (keeper[i], ~) { ib -= 1 }                 }
 *     else { ia -= 1 }                              @unchecked { ia$cu0 -> 0 }
 *     keeper[i] ^= e(ia, ib)                      }
 *   }
 * }
 * ```
 *
 * With checks off, `sink-ancillas` and `dead-ancillas` drop such an uncompute; with checks on
 * the deallocation checks after it (`ia -> acolptr[j]`, `keeper -> zeros(2m)`) read what it
 * restores, so it ran in full. What it restores is known without running it when it is exact:
 * its statements are `^=` of a bool or i32 and `+=`/`-=` of an i32 (wrapping: each undone bit for
 * bit), each value reading neither its target nor a host function, and `if (c, ~)` whose branches
 * leave c alone; Y is, statement for statement, the inverse of the part P of X that writes what Y
 * writes (`invertBody`, run in reverse order over the same range), and the rest of X writes
 * nothing P reads or writes; the range reads nothing X writes. Then each iteration of Y meets the
 * state the matching iteration of X left, and undoes it exactly: after Y every name it writes
 * holds what it held before X, which is what X's copies leave them holding. The checks after Y see
 * the same values (every check that fires without the pass fires with it, and no other), and
 * inside `@unchecked` there is no check to keep in X or Y. An array Y writes must be used only at
 * the loop's index (`keeper[i]`): each iteration reads its element into a scalar copy.
 */
import type { Dataview, Expr, FunctionDef, IndexExpr, ScalarTypeName, Stmt, VarRef } from '../ast.js'
import { readNames, rootName, walk } from '../check.js'
import { key } from '../cse.js'
import { stmtExprs } from '../stmt-exprs.js'
import { usedOnlyAtIndex } from './contract-arrays.js'
import { writtenNames } from './hoist-invariants.js'
import { callsHost } from './insert-checks.js'
import { rewriteBlock } from './rewrite.js'

type ForStmt = Extract<Stmt, { kind: 'for' }>

/** The suffix of the copies the pass makes (a user name has no `$`). */
const SUFFIX = '$cu'

/**
 * `f` with every `for` loop inside `@unchecked` that the next loop exactly uncomputes (see the
 * module comment) run on copies of what the uncompute restores, and the uncompute gone.
 * `effectful`: the functions with a host effect (see `effectfulFunctions`).
 */
export function cancelUncompute(f: FunctionDef, effectful: ReadonlySet<string> = new Set()): FunctionDef {
  let counter = 0
  const fresh = (name: string) => `${name}${SUFFIX}${counter++}`
  const block = (body: Stmt[], unchecked: boolean): Stmt[] => {
    const out: Stmt[] = []
    for (let k = 0; k < body.length; k++) {
      const s = body[k]!
      const next = body[k + 1]
      if (unchecked && s.kind === 'for' && next?.kind === 'for') {
        const done = cancel(s, next, effectful, fresh)
        if (done) {
          out.push(...done)
          k++
          continue
        }
      }
      out.push(nested(s, unchecked))
    }
    return out
  }
  const nested = (s: Stmt, unchecked: boolean): Stmt => {
    switch (s.kind) {
      case 'unchecked':
        return { ...s, body: block(s.body, true) }
      case 'for':
      case 'while':
        return { ...s, body: block(s.body, unchecked) } as Stmt
      case 'if':
        return { ...s, then: block(s.then, unchecked), else: block(s.else, unchecked) }
      default:
        return s
    }
  }
  const body = block(f.body, false)
  return counter ? { ...f, body } : f
}

/** The replacement of loops `x`, `y` when `y` exactly uncomputes part of `x` (see the module comment). */
function cancel(
  x: ForStmt,
  y: ForStmt,
  effectful: ReadonlySet<string>,
  fresh: (name: string) => string,
): Stmt[] | undefined {
  if (!!x.reverse === !!y.reverse || x.inclusive !== y.inclusive || x.each || y.each) return undefined
  const k = (e: Expr | null) => (e ? key(e) : '')
  if (k(x.start) !== k(y.start) || k(x.stop) !== k(y.stop) || k(x.step) !== k(y.step)) return undefined
  const v = x.variable
  const yBody =
    y.variable === v
      ? y.body
      : rewriteBlock(y.body, (e) => (e.kind === 'var' && e.name === y.variable ? { ...e, name: v } : e))
  const wx = writtenNames(x.body, effectful)
  const wyOrAll = writtenNames(yBody, effectful)
  if (!wx || !wyOrAll || wyOrAll.size === 0 || wyOrAll.has(v) || wx.has(v)) return undefined
  const wy: ReadonlySet<string> = wyOrAll
  // the range reads nothing the loop writes
  for (const e of [x.start, x.stop, x.step]) if (e && [...readNames(e)].some((n) => wx.has(n))) return undefined
  // P: the statements of x that write what y writes; the rest writes nothing P reads or writes
  const writes = (s: Stmt) => writtenNames([s], effectful)
  const part: Stmt[] = []
  const rest: Stmt[] = []
  for (const s of x.body) {
    const w = writes(s)
    if (!w) return undefined
    if ([...w].some((n) => wy.has(n))) part.push(s)
    else rest.push(s)
  }
  const partNames = new Set([...wy, ...namesRead(part)])
  for (const s of rest) if ([...writes(s)!].some((n) => partNames.has(n))) return undefined
  if (!part.every((s) => exact(s, effectful)) || !sameBlock(invertBody(part), yBody)) return undefined
  // what y restores: scalars, and arrays used only at the loop's index
  const scalars = new Map<string, VarRef>()
  const arrays = new Map<string, IndexExpr>()
  let ok = true
  walk(x.body, (s) => {
    if ((s.kind === 'alloc' || s.kind === 'dealloc') && wy.has(s.name)) ok = false
    for (const e of stmtExprs(s)) visit(e as Expr)
  })
  function visit(e: Expr | Dataview): void {
    if (e.kind === 'var' && wy.has(e.name) && typeof e.type === 'string') scalars.set(e.name, e)
    if (e.kind === 'index' && wy.has(e.array.name) && !arrays.has(e.array.name)) arrays.set(e.array.name, e)
    if (e.kind === 'index') visit(e.index)
    else if (e.kind === 'unary') visit(e.arg)
    else if (e.kind === 'binary') {
      visit(e.left)
      visit(e.right)
    } else if (e.kind === 'call') for (const a of e.args) visit(a)
    else if (e.kind === 'field' || e.kind === 'neg') visit(e.target as Expr)
  }
  if (!ok || scalars.size + arrays.size !== wy.size) return undefined
  for (const [a, e] of arrays) {
    if (scalars.has(a) || !ELEMENT_TYPES.has(e.type as string)) return undefined
    if (!usedOnlyAtIndex(x.body, a, v) || !usedOnlyAtIndex(yBody, a, v)) return undefined
    // the copy is read at the top of each iteration: the loop must read or write the element
    // there in every iteration anyway (not only in a branch), or the copy could read past the end
    if (!x.body.some((st) => unconditionalExprs(st).some((x1) => readsElementOf(x1, a)))) return undefined
  }
  // two array parameters may be one array: with arrays copied, the loop may not read another array
  // of the same element type, nor pass an array whole
  if (arrays.size) {
    const copied = new Set([...arrays.values()].map((e) => e.type as string))
    let other = false
    walk(x.body, (st) => {
      for (const x1 of stmtExprs(st)) {
        const seen = (e: Expr | Dataview): void => {
          if (e.kind === 'index' && !arrays.has(e.array.name) && copied.has(e.type as string)) other = true
          if (e.kind === 'var' && typeof e.type === 'object' && e.type.kind === 'array') other = true
          if (e.kind === 'index') seen(e.index)
          else if (e.kind === 'unary') seen(e.arg)
          else if (e.kind === 'binary') {
            seen(e.left)
            seen(e.right)
          } else if (e.kind === 'call') for (const c of e.args) seen(c)
          else if (e.kind === 'field' || e.kind === 'neg') seen(e.target as Expr)
        }
        seen(x1 as Expr)
      }
    })
    if (other) return undefined
  }
  for (const [, r] of scalars) if (!ELEMENT_TYPES.has(r.type as string)) return undefined
  const names = new Map<string, string>()
  for (const n of [...scalars.keys(), ...arrays.keys()]) names.set(n, fresh(n))
  const renamed = rewriteBlock(x.body, (e) => {
    if (e.kind === 'var' && scalars.has(e.name)) return { ...e, name: names.get(e.name)! }
    if (e.kind === 'index' && arrays.has(e.array.name))
      return { kind: 'var', name: names.get(e.array.name)!, type: e.type, ...(e.loc ? { loc: e.loc } : {}) }
    return e
  })
  const at = x.loc ? { loc: x.loc } : {}
  const scalar = (name: string) => ({ kind: 'scalar' as const, name: name as ScalarTypeName })
  const alloc = (name: string, t: string, value: Expr): Stmt => ({
    kind: 'alloc',
    name,
    value,
    type: scalar(t),
    declared: scalar(t),
    ...at,
  })
  // (dropped unchecked: nothing reads a copy after its loop, and no check looks at it)
  const drop = (name: string, t: string): Stmt => ({
    kind: 'unchecked',
    body: [{ kind: 'dealloc', name, value: zero(t), type: scalar(t), declared: scalar(t), ...at }],
  })
  const body: Stmt[] = [
    ...[...arrays].map(([a, e]) => alloc(names.get(a)!, e.type as string, e)),
    ...renamed,
    ...[...arrays].map(([a, e]) => drop(names.get(a)!, e.type as string)),
  ]
  return [
    ...[...scalars].map(([n, r]) => alloc(names.get(n)!, r.type as string, r)),
    { ...x, body },
    ...[...scalars].map(([n, r]) => drop(names.get(n)!, r.type as string)),
  ]
}

/** Types whose updates this pass undoes exactly (and whose copies it makes). */
const ELEMENT_TYPES: ReadonlySet<string> = new Set(['i32', 'bool'])

const zero = (t: string): Expr =>
  t === 'bool' ? { kind: 'bool', value: false, type: 'bool' } : { kind: 'num', value: 0, isFloat: false, type: 'i32' }

/** Every name the statements read (their expressions, at any depth). */
function namesRead(body: Stmt[]): Set<string> {
  const out = new Set<string>()
  walk(body, (s) => {
    for (const e of stmtExprs(s)) readNames(e, out)
  })
  return out
}

/**
 * Whether a statement is undone bit for bit by its inverse run right after it: `^=` of a bool or
 * i32, `+=`/`-=` of an i32, whose value reads neither the target nor a host function (nor does
 * the target's index read it); `if (c, ~)` of such statements whose branches write nothing c reads.
 */
function exact(s: Stmt, effectful: ReadonlySet<string>): boolean {
  switch (s.kind) {
    case 'update': {
      if (s.distinct?.length) return false
      const t = s.target
      if (t.kind !== 'var' && t.kind !== 'index') return false
      const type = t.type as string | undefined
      if (!(s.op === '^=' ? type === 'bool' || type === 'i32' : (s.op === '+=' || s.op === '-=') && type === 'i32'))
        return false
      const root = rootName(t)
      if (root === undefined || callsHost(s.value) || readNames(s.value).has(root)) return false
      return !(t.kind === 'index' && (readNames(t.index).has(root) || callsHost(t.index)))
    }
    case 'if': {
      if (s.post || callsHost(s.pre)) return false
      const branches = [...s.then, ...s.else]
      if (!branches.every((b) => exact(b, effectful))) return false
      const w = writtenNames(branches, effectful)
      return w !== undefined && ![...readNames(s.pre)].some((n) => w.has(n))
    }
    default:
      return false
  }
}

/** The inverse of an exact statement (see `exact`): `+=` and `-=` swapped, branches inverted. */
function invert(s: Stmt): Stmt {
  if (s.kind === 'update') return { ...s, op: s.op === '+=' ? '-=' : s.op === '-=' ? '+=' : s.op }
  if (s.kind === 'if') return { ...s, then: invertBody(s.then), else: invertBody(s.else) }
  return s
}

/** The inverse of a block of exact statements: each inverted, in reverse order. */
function invertBody(body: Stmt[]): Stmt[] {
  return body.map(invert).reverse()
}

/** Whether two blocks are the same statements (source locations aside). */
function sameBlock(a: Stmt[], b: Stmt[]): boolean {
  return a.length === b.length && a.every((s, i) => sameStmt(s, b[i]!))
}

function sameStmt(a: Stmt, b: Stmt): boolean {
  if (a.kind === 'update' && b.kind === 'update') {
    return (
      a.op === b.op &&
      !b.distinct?.length &&
      (b.target.kind === 'var' || b.target.kind === 'index') &&
      key(a.target as Expr) === key(b.target as Expr) &&
      key(a.value) === key(b.value)
    )
  }
  if (a.kind === 'if' && b.kind === 'if') {
    return !a.post && !b.post && key(a.pre) === key(b.pre) && sameBlock(a.then, b.then) && sameBlock(a.else, b.else)
  }
  return false
}

/**
 * The expressions a statement evaluates whenever it runs: an update's, an allocation's, a call's
 * arguments, an \`if\`'s condition (not its branches); the left side only of \`&&\` and \`||\`.
 */
function unconditionalExprs(s: Stmt): Array<Expr | Dataview> {
  const left = (e: Expr): Expr => (e.kind === 'binary' && (e.op === '&&' || e.op === '||') ? left(e.left) : e)
  switch (s.kind) {
    case 'update':
      return [s.target, left(s.value)]
    case 'alloc':
      return s.value.kind === 'emptystack' ? [] : [left(s.value)]
    case 'callstmt':
      return s.args.map((a) => (a.kind === 'neg' ? a.target : left(a)))
    case 'if':
      return [left(s.pre)]
    default:
      return []
  }
}

/** Whether an expression reads or names an element of array \`a\` outside a short-circuit's right side. */
function readsElementOf(e: Expr | Dataview, a: string): boolean {
  switch (e.kind) {
    case 'index':
      return e.array.name === a || readsElementOf(e.index, a)
    case 'unary':
      return readsElementOf(e.arg, a)
    case 'binary':
      return readsElementOf(e.left, a) || (e.op !== '&&' && e.op !== '||' && readsElementOf(e.right, a))
    case 'call':
      return e.args.some((c) => readsElementOf(c, a))
    case 'field':
    case 'neg':
      return readsElementOf(e.target as Expr, a)
    default:
      return false
  }
}
