/**
 * Sine–cosine pairs: within a straight-line run of statements (the runs whose common
 * subexpressions the code generator shares, see `forEachStatement` of `@tenet/ir`), `sin(e)` and
 * `cos(e)` of the same value — the same expression, none of the names it reads written between
 * the two — are computed by one call of the module's `__sincos`, which reduces the argument once
 * for both. Its results are those of the `sin` and `cos` routines bit for bit (see `math/trig.ts`),
 * so the program's results do not change. A rotation's forward run and its adjoint are where such
 * pairs occur (bundle adjustment's Rodrigues formula reads sin θ and cos θ, and its adjoint both
 * again).
 *
 * This module only plans: `sincosPairs` finds the pairs; the code generator computes both values
 * at the first of the two calls it emits and reads the other from a local.
 */
import type { Expr, Stmt } from '@tenet/ir'
import { key, readNames, rootName } from '@tenet/ir/backend'

/** One sin/cos pair: the locals of its values once the first of its calls has been emitted. */
export interface SincosPair {
  locals?: { sin: number; cos: number }
}

/** The children of a node that are always evaluated with it (not the right operand of && and ||). */
function evaluated(e: Expr): Expr[] {
  switch (e.kind) {
    case 'index':
      return [e.index]
    case 'field':
      return [e.target]
    case 'unary':
      return [e.arg]
    case 'binary':
      return e.op === '&&' || e.op === '||' ? [e.left] : [e.left, e.right]
    case 'call':
      return e.args
    default:
      return []
  }
}

const trig = (e: Expr): e is Extract<Expr, { kind: 'call' }> =>
  e.kind === 'call' &&
  (e.callee === 'sin' || e.callee === 'cos') &&
  e.args.length === 1 &&
  e.type === 'f64' &&
  e.args[0]!.type === 'f64'

/**
 * The sin and cos calls of `run` (straight-line statements, in order) that pair up: each maps to
 * its pair, shared by both calls (and by later calls of the same value). Only calls in what every
 * run of the statement evaluates count (not under the right operand of && or ||, not in a failed
 * check's message). `isStandard(name)`: whether `sin`/`cos` are the standard primitives computed
 * in the module (not a user's override, not imported).
 */
export function sincosPairs(run: readonly Stmt[], isStandard: (name: 'sin' | 'cos') => boolean): Map<Expr, SincosPair> {
  const out = new Map<Expr, SincosPair>()
  if (!isStandard('sin') || !isStandard('cos')) return out
  const versions = new Map<string, number>()
  // per value (the argument's structure and the versions of the names it reads): its calls
  const byValue = new Map<string, { sin: Expr[]; cos: Expr[] }>()
  const visit = (root: Expr): void => {
    const todo: Expr[] = [root]
    while (todo.length) {
      const e = todo.pop()!
      if (trig(e)) {
        const arg = e.args[0]!
        const names = [...readNames(arg)].sort()
        const k = `${key(arg)}|${names.map((n) => `${n}#${versions.get(n) ?? 0}`).join(',')}`
        let calls = byValue.get(k)
        if (!calls) byValue.set(k, (calls = { sin: [], cos: [] }))
        calls[e.callee as 'sin' | 'cos'].push(e)
      }
      todo.push(...evaluated(e))
    }
  }
  for (const s of run) {
    if (s.kind === 'update') {
      if (s.target.kind === 'index') visit(s.target.index)
      visit(s.value)
    } else if (s.kind === 'alloc' && s.value.kind !== 'emptystack') visit(s.value)
    else if (s.kind === 'assert') visit(s.cond)
    // what the statement writes starts a new version of the name
    const written =
      s.kind === 'update'
        ? [rootName(s.target)]
        : s.kind === 'callstmt'
          ? s.args.map((a) => rootName(a))
          : s.kind === 'alloc' || s.kind === 'dealloc'
            ? [s.name]
            : []
    for (const w of written) if (w !== undefined) versions.set(w, (versions.get(w) ?? 0) + 1)
  }
  for (const { sin, cos } of byValue.values()) {
    if (!sin.length || !cos.length) continue
    const pair: SincosPair = {}
    for (const e of [...sin, ...cos]) out.set(e, pair)
  }
  return out
}
