/**
 * `exact-uncompute` — with run-time checks on: the uncall `~f(y, x…)` of an exact function `f`
 * (integer bookkeeping: see {@link exactFunctions}) that undoes an earlier call `f(y, x…)` of the
 * same block, where every argument `f` writes was a zero integer ancilla before that call, becomes
 * `y -= y` for each of them (0: the value the uncall restores), so the uncall's loop and divisions
 * no longer run a second time. A factorial `ifactorial(fact, nu)` computed in a routine and
 * uncomputed by `~routine` is the typical case (paper 001's Bessel function, once per call, or
 * once per element of a batch).
 *
 * Why it is exact, checks included. Every statement of an exact function is a bijection of its
 * integer state that its inverse undoes bit for bit: `i += e`, `i -= e`, `b ^= e` on i32 or bool
 * targets (wrapping arithmetic; `e` does not read the target and is evaluated on the same values
 * in both directions), `SWAP`, integer allocations and deallocations, and `if`, `for`, `while`
 * whose conditions and ranges are pure. Nothing between the call and the uncall writes what the
 * call reads or writes, so the uncall starts from the exact state the call left and, step by step,
 * passes through the call's states in reverse order: it restores every written argument to its
 * value before the call (here 0), and each check it evaluates holds, because it tests, on one of
 * those states, what a check of the call already tested (a deallocation in the uncall is an
 * allocation of the call, at its allocated value; the loop asserts of `while (post, pre)` are the
 * call's loop conditions, true while it iterated and false when it left; a loop's range is the
 * call's). The call ran with its checks on (an `@unchecked` block in an exact function is not
 * allowed: a deallocation that nobody checked could have dropped a value, and the uncall would
 * not restore it; nor is a call inside an `@unchecked` block of the caller rewritten), so the checks the pass leaves out could not fail, and no other check moves:
 * the pass changes neither a value nor which check fails first, or where. A host call or `@safe`
 * effect would run again in the uncall; an exact function has none. The call's arguments are
 * scalars (no array element, which a write through another name for its memory could change in
 * between: see `apart.ts`). With checks off,
 * `dead-ancillas` drops such uncomputes altogether.
 */
import type { Arg, CallStmt, Expr, FunctionDef, ScalarTypeName, Stmt, Type, UpdateStmt } from '../ast.js'
import { readNames, walk } from '../check.js'
import { key } from '../cse.js'
import { stmtExprs } from '../stmt-exprs.js'
import { callsHost } from './insert-checks.js'
import { writtenNames } from './hoist-invariants.js'
import { mapInnerBlocks } from './rewrite.js'

/** The integer scalar types whose updates `+=`, `-=`, `^=` are exact bijections (wrapping i32, bool). */
const EXACT_TYPES: ReadonlySet<string> = new Set(['i32', 'bool'])

const exactScalar = (t: { kind: string; name?: string } | undefined): boolean =>
  t?.kind === 'scalar' && EXACT_TYPES.has(t.name ?? '')

/** The scalar type name of a node's `type` (a name, or a scalar `Type`), or undefined. */
const scalarName = (t: ScalarTypeName | Type | undefined): string | undefined =>
  typeof t === 'string' ? t : t?.kind === 'scalar' ? t.name : undefined

/**
 * Whether statement `s` itself (its nested bodies aside) is exact, given the functions `exact`
 * holds: see the module comment.
 */
function exactStmt(s: Stmt, exact: ReadonlySet<string>): boolean {
  if (stmtExprs(s).some(callsHost)) return false
  switch (s.kind) {
    case 'update':
      return (s.op === '+=' || s.op === '-=' || s.op === '^=') && EXACT_TYPES.has(scalarName(s.target.type) ?? '')
    case 'callstmt':
      return s.target === 'bijection' ? s.callee === 'SWAP' : exact.has(s.callee)
    case 'alloc':
    case 'dealloc':
      return exactScalar(s.type)
    case 'if':
    case 'while':
    case 'for':
      return true
    default:
      // (`@unchecked`, `@safe`, stacks, asserts, surface sugar)
      return false
  }
}

/**
 * The functions of `functions` that are exact: every statement, at any depth, an exact integer
 * bijection (see the module comment), every function they call exact too (a greatest fixed point,
 * so recursion is allowed).
 */
export function exactFunctions(functions: Iterable<FunctionDef>): Set<string> {
  const defs = [...functions]
  const exact = new Set(defs.map((f) => f.name))
  for (let changed = true; changed; ) {
    changed = false
    for (const f of defs) {
      if (!exact.has(f.name)) continue
      let ok = true
      walk(f.body, (s) => {
        if (ok && !exactStmt(s, exact)) ok = false
      })
      if (!ok) {
        exact.delete(f.name)
        changed = true
      }
    }
  }
  return exact
}

/** The names \`stmts\` may write (see \`writtenNames\` of hoist-invariants), by the callees' \`writes\`. */
const written = (
  stmts: Stmt[],
  writes: ReadonlyMap<string, readonly boolean[]>,
  effectful: ReadonlySet<string>,
): Set<string> | undefined => writtenNames(stmts, effectful, writes)

/** Whether `stmts` may write one of `names`. */
function writesAny(
  stmts: Stmt[],
  names: ReadonlySet<string>,
  writes: ReadonlyMap<string, readonly boolean[]>,
  effectful: ReadonlySet<string>,
): boolean {
  const w = written(stmts, writes, effectful)
  return w === undefined || [...w].some((n) => names.has(n))
}

/** Whether an argument reads no array: no element, no array variable (`len(a)` included). */
function scalarOnly(a: Arg): boolean {
  switch (a.kind) {
    case 'num':
    case 'bool':
      return true
    case 'var':
      return typeof a.type === 'string' || a.type?.kind === 'scalar'
    case 'neg':
      return scalarOnly(a.target)
    case 'unary':
      return scalarOnly(a.arg)
    case 'binary':
      return scalarOnly(a.left) && scalarOnly(a.right)
    case 'call':
      return a.args.every(scalarOnly)
    default:
      return false
  }
}

/** A call argument's value-numbering key (a negated view as `-(…)`). */
const argKey = (a: Arg): string => (a.kind === 'neg' ? `-(${argKey(a.target)})` : key(a as Expr))

const sameArgs = (a: Arg[], b: Arg[]): boolean =>
  a.length === b.length && a.every((x, i) => argKey(x) === argKey(b[i]!))

/** `y -= y` for the integer ancilla `y` (what an exact uncall restores it to: 0). */
function zeroed(y: Extract<Arg, { kind: 'var' }>, at: CallStmt): UpdateStmt {
  const t = scalarName(y.type)
  const v = { kind: 'var' as const, name: y.name, ...(t ? { type: t } : {}) }
  return {
    kind: 'update',
    op: t === 'bool' ? '^=' : '-=',
    target: v,
    value: { ...v },
    ...(at.loc ? { loc: at.loc } : {}),
  }
}

/**
 * `f` with every uncall of an exact function that undoes a call of the same block from zero
 * ancillas written as those ancillas' `y -= y` (see the module comment). `exact`: the exact
 * functions ({@link exactFunctions}); `writes`: which parameters each function writes
 * (`Program.writes`); `effectful`: the functions with a host effect.
 */
export function exactUncompute(
  f: FunctionDef,
  exact: ReadonlySet<string>,
  writes: ReadonlyMap<string, readonly boolean[]>,
  effectful: ReadonlySet<string> = new Set(),
): FunctionDef {
  let changed = false
  const block = (body: Stmt[]): Stmt[] => {
    // (not inside `@unchecked`: the argument rests on the call's checks)
    let out = mapInnerBlocks(body, block, false)
    for (let k = 0; k < out.length; k++) {
      const next = rewriteUncall(out, k, exact, writes, effectful)
      if (next) {
        out = next
        changed = true
      }
    }
    return out
  }
  const body = block(f.body)
  return changed ? { ...f, body } : f
}

/**
 * `body` with the uncall that undoes the call at `k` rewritten, or undefined where `k` is no such
 * call (not of an exact function, a written argument not a zero integer ancilla of this block, or
 * what the call reads or writes changed before its uncall).
 */
function rewriteUncall(
  body: Stmt[],
  k: number,
  exact: ReadonlySet<string>,
  writes: ReadonlyMap<string, readonly boolean[]>,
  effectful: ReadonlySet<string>,
): Stmt[] | undefined {
  const call = body[k]!
  if (call.kind !== 'callstmt' || call.target === 'bijection' || !exact.has(call.callee)) return undefined
  const w = writes.get(call.callee)
  // (scalars only: a value read from an array could change through another name for its memory)
  if (!w || call.args.some((a) => callsHost(a) || !scalarOnly(a))) return undefined
  const targets: Array<Extract<Arg, { kind: 'var' }>> = []
  for (let i = 0; i < call.args.length; i++) {
    if (!w[i]) continue
    const a = call.args[i]!
    if (a.kind !== 'var' || !EXACT_TYPES.has(scalarName(a.type) ?? '')) return undefined
    targets.push(a)
  }
  if (!targets.length) return undefined
  // each written argument: allocated as 0 earlier in this block, nothing writing it since
  for (const y of targets) {
    const Y = new Set([y.name])
    let a = k - 1
    while (a >= 0 && !writesAny([body[a]!], Y, writes, effectful)) a--
    const alloc = body[a]
    if (alloc?.kind !== 'alloc' || alloc.name !== y.name || !exactScalar(alloc.type)) return undefined
    const v = alloc.value
    if (!(v.kind === 'num' && v.value === 0) && !(v.kind === 'bool' && v.value === false)) return undefined
  }
  // the uncall: the same callee and arguments, the other direction, nothing in between writing
  // what the call reads or writes
  const kept = new Set<string>()
  for (const a of call.args) readNames(a, kept)
  for (let j = k + 1; j < body.length; j++) {
    const s = body[j]!
    if (
      s.kind === 'callstmt' &&
      s.target !== 'bijection' &&
      s.callee === call.callee &&
      s.inverse !== call.inverse &&
      sameArgs(s.args, call.args)
    ) {
      return [...body.slice(0, j), ...targets.map((y) => zeroed(y, s)), ...body.slice(j + 1)]
    }
    if (writesAny([s], kept, writes, effectful)) return undefined
  }
  return undefined
}
