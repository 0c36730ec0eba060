/**
 * Pass `contract-arrays` (array contraction): an array ancilla allocated as `zeros(n)` whose
 * only use between its allocation and its deallocation is one `for` loop that touches it only at
 * the loop's own index (`keeper[i]`), becomes one scalar ancilla per iteration. Each iteration
 * then finds its element at zero (no earlier iteration touched it) and nothing reads it after
 * the loop (a deallocation reads nothing without checks), so the scalar is allocated as zero at
 * the top of the body and dropped, unchecked, at its end. No array is allocated or cleared, and
 * the element lives in a register; an exact first update (`^=` of a bool, `+=` or `^=` of an i32)
 * becomes the scalar's initial value. A branch keeper that `sink-ancillas` moved into its loop and
 * whose uncompute `dead-ancillas` dropped is such an array. So is a scratch parameter
 * (`Param.scratch`: zeros at entry, nothing read back; the gradient program of a \`grad\` scratch
 * argument and its gradient), whose lifetime is the whole body: its elements become the scalar,
 * its length stays readable.
 *
 * The pass changes no value of a valid program (one whose indices are in range). Without
 * checks an index out of range is not reported either way; the backends run this pass with
 * run-time checks off only, since the array's deallocation check (zero at the end) is gone.
 */
import type { Arg, Expr, FunctionDef, ScalarTypeName, Stmt } from '../ast.js'
import { readNames, walk } from '../check.js'
import { stmtExprs } from '../stmt-exprs.js'
import { callsHost } from './insert-checks.js'
import { mapInnerBlocks, rewriteBlock, rewriteExpr } from './rewrite.js'
import { mentions, writesOf } from './sink-ancillas.js'

/** The element types whose zero the pass can write as a literal. */
const ZERO: Partial<Record<ScalarTypeName, () => Expr>> = {
  f64: () => ({ kind: 'num', value: 0, isFloat: true, type: 'f64' }),
  f32: () => ({ kind: 'num', value: 0, isFloat: true, type: 'f32' }),
  i32: () => ({ kind: 'num', value: 0, isFloat: false, type: 'i32' }),
  bool: () => ({ kind: 'bool', value: false, type: 'bool' }),
}

/** The name of the scalar that replaces array `name` in its loop. */
export const contractedName = (name: string): string => `${name}$ct`

/**
 * Whether every use of array `x` in `body`'s expressions is the element `x[v]` (with `lenOk`, its
 * length `len(x)` too), so that the iterations of loops over v meet in `x` only at equal v. Shared
 * with pass `fuse-loops`.
 */
export function usedOnlyAtIndex(body: Stmt[], x: string, v: string, lenOk = false): boolean {
  let ok = true
  const check = (e: Expr | Arg): void => {
    switch (e.kind) {
      case 'var':
        if (e.name === x) ok = false
        break
      case 'index':
        if (e.array.name === x && !(e.index.kind === 'var' && e.index.name === v)) ok = false
        check(e.index)
        break
      case 'field':
      case 'neg':
        check(e.target)
        break
      case 'unary':
        check(e.arg)
        break
      case 'binary':
        check(e.left)
        check(e.right)
        break
      case 'call':
        if (lenOk && isLenOf(e, x)) break
        for (const a of e.args) check(a)
        break
    }
  }
  walk(body, (s) => {
    for (const e of stmtExprs(s)) check(e)
    if (s.kind === 'update' || s.kind === 'callstmt')
      for (const [a, b] of s.distinct ?? []) {
        check(a)
        check(b)
      }
  })
  return ok
}

/**
 * Whether every use of `x` in `body` is `x[v]` (v the loop variable) and nothing rebinds or writes
 * `v`; with `lenOk` (a parameter, which stays), `len(x)` too.
 */
function onlyAtIndex(body: Stmt[], x: string, v: string, lenOk = false): boolean {
  let ok = usedOnlyAtIndex(body, x, v, lenOk)
  walk(body, (s) => {
    if ((s.kind === 'alloc' || s.kind === 'dealloc') && (s.name === x || s.name === v)) ok = false
    if (s.kind === 'for' && s.variable === v) ok = false
    if (s.kind === 'update' && s.target.kind === 'var' && s.target.name === v) ok = false
  })
  return ok && !body.some((s) => writesOf(s).has(v))
}

/** Whether `e` is `len(x)`. */
const isLenOf = (e: Expr | Arg, x: string): boolean =>
  e.kind === 'call' && e.callee === 'len' && e.args.length === 1 && e.args[0]!.kind === 'var' && e.args[0]!.name === x

/** `e` with every `len(x)` replaced by a literal (what reads only the length of a parameter, which stays). */
const withoutLen = (e: Expr | Arg, x: string): Expr =>
  rewriteExpr(e, (n) => (isLenOf(n, x) ? { kind: 'num', value: 0, isFloat: false, type: 'i32' } : n)) as Expr

/** Whether `s` names `x`; with `lenOk`, other than in `len(x)`. */
const uses = (s: Stmt, x: string, lenOk: boolean): boolean =>
  lenOk ? mentions(rewriteBlock([s], (n) => (isLenOf(n, x) ? withoutLen(n as Expr, x) : n))[0]!, x) : mentions(s, x)

/** Whether a `for` loop visits each index at most once (its step, if any, a nonzero literal). */
const distinctIndices = (s: Extract<Stmt, { kind: 'for' }>): boolean =>
  s.step === null ||
  (s.step.kind === 'num' && s.step.value !== 0) ||
  (s.step.kind === 'unary' && s.step.arg.kind === 'num' && s.step.arg.value !== 0)

/**
 * The statement that uses array `x` with the array contracted into a scalar, when it is a `for`
 * loop that qualifies, or an `@unchecked` block (no scope) whose one statement naming `x` is.
 */
function contractIn(
  s: Stmt,
  x: string,
  elem: ScalarTypeName,
  zero: () => Expr,
  at: Stmt['loc'],
  lenOk = false,
): Stmt | undefined {
  if (s.kind === 'unchecked') {
    const users = s.body.flatMap((t, k) => (uses(t, x, lenOk) ? [k] : []))
    if (users.length !== 1) return undefined
    const k = users[0]!
    const inner = contractIn(s.body[k]!, x, elem, zero, at, lenOk)
    return inner && { ...s, body: [...s.body.slice(0, k), inner, ...s.body.slice(k + 1)] }
  }
  if (s.kind !== 'for' || !distinctIndices(s)) return undefined
  if (stmtExprs(s).some((e) => readNames(lenOk ? withoutLen(e, x) : e).has(x))) return undefined
  if (!onlyAtIndex(s.body, x, s.variable, lenOk)) return undefined
  const name = contractedName(x)
  const type = { kind: 'scalar' as const, name: elem }
  const loc = at ? { loc: at } : {}
  const replaced = rewriteBlock(s.body, (e) =>
    e.kind === 'index' && e.array.name === x ? { kind: 'var', name, type: elem, ...(e.loc ? { loc: e.loc } : {}) } : e,
  )
  // the first update of the zero element, when exact (`^=` of a bool, `+=`/`^=` of an i32), is
  // its value: the scalar is allocated there with it (no zero to combine with, no extra update)
  const first = replaced.findIndex((t) => mentions(t, name))
  const u = replaced[first]
  const init =
    u?.kind === 'update' &&
    u.target.kind === 'var' &&
    u.target.name === name &&
    (u.op === '^=' || (u.op === '+=' && elem === 'i32')) &&
    (elem === 'bool' || elem === 'i32')
      ? u.value
      : undefined
  const alloc: Stmt = { kind: 'alloc', name, value: init ?? zero(), type, declared: type, ...loc }
  return {
    ...s,
    body: [
      ...(init ? [...replaced.slice(0, first), alloc, ...replaced.slice(first + 1)] : [alloc, ...replaced]),
      // the element holds the iteration's value at the end: dropped unchecked, as nothing reads it
      { kind: 'unchecked', body: [{ kind: 'dealloc', name, value: zero(), type, declared: type, ...loc }] },
    ],
  }
}

/**
 * The last statement that uses array `x` before its deallocation, without the writes of `x[v]`
 * that nothing reads: when it is a `for` loop over `v` (or an `@unchecked` block whose last
 * statement naming `x` is one) that touches `x` only at `x[v]`, an update of `x[v]` that no later
 * statement of the iteration reads is dead — no other iteration touches that element, and
 * nothing after the loop reads the array. (The uncompute of a branch keeper in a reverse sweep.)
 */
function dropDeadElementWrites(s: Stmt, x: string, lenOk = false): Stmt {
  if (s.kind === 'unchecked') {
    let k = s.body.length - 1
    while (k >= 0 && !uses(s.body[k]!, x, lenOk)) k--
    if (k < 0) return s
    const inner = dropDeadElementWrites(s.body[k]!, x, lenOk)
    return inner === s.body[k] ? s : { ...s, body: [...s.body.slice(0, k), inner, ...s.body.slice(k + 1)] }
  }
  if (s.kind !== 'for' || !distinctIndices(s)) return s
  if (
    stmtExprs(s).some((e) => readNames(lenOk ? withoutLen(e, x) : e).has(x)) ||
    !onlyAtIndex(s.body, x, s.variable, lenOk)
  )
    return s
  const body = [...s.body]
  let dropped = false
  for (let k = body.length - 1; k >= 0; k--) {
    const t = body[k]!
    if (!uses(t, x, lenOk)) continue
    // the last statement naming the element: dropped when it only writes it
    if (t.kind !== 'update' || t.target.kind !== 'index' || t.target.array.name !== x || callsHost(t.value)) break
    body.splice(k, 1)
    dropped = true
  }
  return dropped ? { ...s, body } : s
}

/**
 * `out` with array `x` contracted where its uses among `out[from..to)` (its lifetime: between its
 * allocation and deallocation, or a scratch parameter's whole body) are one qualifying loop; else
 * with the writes that nothing reads dropped from its last use. Null when nothing changed.
 */
function contractUses(
  out: Stmt[],
  x: string,
  elem: ScalarTypeName,
  zero: () => Expr,
  at: Stmt['loc'],
  from: number,
  to: number,
  lenOk = false,
): { out: Stmt[]; contracted: boolean } | null {
  const users = []
  for (let k = from; k < to; k++) if (uses(out[k]!, x, lenOk)) users.push(k)
  if (!users.length) return null
  const l = users[users.length - 1]!
  const contracted = users.length === 1 ? contractIn(out[l]!, x, elem, zero, at, lenOk) : undefined
  if (contracted) return { out: [...out.slice(0, l), contracted, ...out.slice(l + 1)], contracted: true }
  // not the only use: the last one may still drop the writes that nothing reads
  const last = dropDeadElementWrites(out[l]!, x, lenOk)
  return last === out[l] ? null : { out: [...out.slice(0, l), last, ...out.slice(l + 1)], contracted: false }
}

/** `body` with its loop-index array ancillas contracted to scalars (nested blocks too). */
export function contractArraysBlock(body: Stmt[]): Stmt[] {
  let out = mapInnerBlocks(body, contractArraysBlock)
  for (let i = 0; i < out.length; i++) {
    const a = out[i]!
    if (a.kind !== 'alloc' || a.type?.kind !== 'array' || a.value.kind !== 'call' || a.value.callee !== 'zeros')
      continue
    const zero = ZERO[a.type.elem]
    if (!zero) continue
    const d = out.findIndex((s, k) => k > i && s.kind === 'dealloc' && s.name === a.name)
    if (d < 0) continue
    const r = contractUses(out, a.name, a.type.elem, zero, a.loc, i + 1, d)
    if (!r) continue
    out = r.out
    if (r.contracted) {
      // the allocation and deallocation go with the array
      out = [...out.slice(0, i), ...out.slice(i + 1, d), ...out.slice(d + 1)]
      i--
    }
  }
  return out
}

/**
 * `body` with the first write of each element of scratch parameter `x` marked \`init\` (see
 * \`UpdateStmt.init\`: the element holds zero there, a backend may add the value to a literal
 * zero instead of loading it), where the first statement that uses the elements is a loop that
 * touches them only at its own index, each index once, and the first statement of its body that
 * names `x` is an update of `x[v]` by a value that calls no host function.
 */
function markFirstWrites(body: Stmt[], x: string): Stmt[] {
  const k = body.findIndex((s) => uses(s, x, true))
  const s = body[k]
  if (s?.kind !== 'for' || !distinctIndices(s)) return body
  if (stmtExprs(s).some((e) => readNames(withoutLen(e, x)).has(x)) || !onlyAtIndex(s.body, x, s.variable, true))
    return body
  const j = s.body.findIndex((t) => uses(t, x, true))
  const u = s.body[j]
  if (
    u?.kind !== 'update' ||
    (u.op !== '+=' && u.op !== '-=') ||
    u.target.kind !== 'index' ||
    u.target.array.name !== x ||
    callsHost(u.value)
  )
    return body
  const loop = { ...s, body: [...s.body.slice(0, j), { ...u, init: true }, ...s.body.slice(j + 1)] }
  return [...body.slice(0, k), loop, ...body.slice(k + 1)]
}

/**
 * The function with its loop-index array ancillas contracted to scalars (see the module comment),
 * and, with \`scratch\`, its scratch parameters too (see \`Param.scratch\`): each holds zeros at
 * entry and nothing reads it after the body, as an ancilla allocated before the body and
 * deallocated, unchecked, after it. Pass \`scratch: false\` for an inverse (its entry is the
 * function's exit).
 */
export function contractArrays(f: FunctionDef, scratch = false): FunctionDef {
  let body = contractArraysBlock(f.body)
  if (scratch)
    for (const p of f.params) {
      if (!p.scratch || p.type.kind !== 'array') continue
      const zero = ZERO[p.type.elem]
      if (!zero) continue
      // (its length stays readable: the parameter stays, only its elements become a scalar)
      const r = contractUses(body, p.name, p.type.elem, zero, p.loc, 0, body.length, true)
      if (r) body = r.out
      if (!r?.contracted) body = markFirstWrites(body, p.name)
    }
  return body === f.body ? f : { ...f, body }
}
