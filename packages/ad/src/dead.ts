/**
 * Dead-update elimination for fused gradient programs. The gradient driver runs a fused program
 * on its own copies and reads back only the gradients and the loss value: the values that the
 * adjoint part restores (uncomputes) are never looked at. An update whose target is not read
 * afterwards (by a later statement, a loop condition or a later iteration) therefore does
 * nothing observable and is dropped. The analysis is the usual backward liveness over
 * structured code, with whole variables and whole arrays as the unit (an array element counts as
 * its array); calls, stacks and host effects keep everything they touch.
 *
 * The result is no longer reversible (an ancilla is not back at zero when it is deallocated), so
 * it is only used when run-time checks are off.
 */
import { readNames, rootName, type Arg, type Expr, type FunctionDef, type Stmt } from '@tenet/ir'

/** Index expressions inside a dataview (what writing it reads). */
function addressReads(dv: Expr | Arg, out: Set<string>): void {
  switch (dv.kind) {
    case 'index': readNames(dv.index, out); break
    case 'field': addressReads(dv.target, out); break
    case 'neg': addressReads(dv.target, out); break
  }
}

const union = (a: Set<string>, b: Set<string>): Set<string> => { const u = new Set(a); for (const x of b) u.add(x); return u }
const same = (a: Set<string>, b: Set<string>): boolean => a.size === b.size && [...a].every((x) => b.has(x))

/**
 * Liveness before `body` given liveness after it; with `drop`, returns the body without its dead
 * updates too.
 */
function sweep(body: Stmt[], after: Set<string>, drop: boolean): { live: Set<string>; body: Stmt[] } {
  let live = after
  const kept: Stmt[] = []
  for (let i = body.length - 1; i >= 0; i--) {
    const s = body[i]!
    const r = stmt(s, live, drop)
    live = r.live
    if (r.stmt) kept.push(r.stmt)
  }
  return { live, body: kept.reverse() }
}

function stmt(s: Stmt, after: Set<string>, drop: boolean): { live: Set<string>; stmt: Stmt | null } {
  switch (s.kind) {
    case 'update': {
      const root = rootName(s.target)
      if (root !== undefined && !after.has(root)) return { live: after, stmt: null }
      const live = new Set(after)
      readNames(s.value, live)
      addressReads(s.target, live)
      return { live, stmt: s }
    }
    case 'alloc': {
      const live = new Set(after)
      live.delete(s.name)
      if (s.value.kind !== 'emptystack') readNames(s.value, live)
      return { live, stmt: s }
    }
    // without run-time checks a deallocation reads nothing
    case 'dealloc': return { live: after, stmt: s }
    case 'callstmt': {
      // a bijection whose written arguments are all dead is dropped; any other call keeps all it touches
      if (s.target === 'bijection' && s.args.every((a) => { const r = rootName(a); return r !== undefined && !after.has(r) })) return { live: after, stmt: null }
      const live = new Set(after)
      for (const a of s.args) readNames(a, live)
      return { live, stmt: s }
    }
    case 'if': {
      const t = sweep(s.then, after, drop), e = sweep(s.else, after, drop)
      const live = union(t.live, e.live)
      readNames(s.pre, live)
      return { live, stmt: drop ? { ...s, then: t.body, else: e.body } : s }
    }
    case 'while': case 'for': {
      // the loop head: live after the loop, or at the start of another iteration
      const control = new Set<string>()
      if (s.kind === 'while') readNames(s.pre, control)
      else { readNames(s.start, control); readNames(s.stop, control); if (s.step) readNames(s.step, control) }
      let head = union(after, control)
      for (;;) {
        const next = union(union(after, control), sweep(s.body, head, false).live)
        if (s.kind === 'for') next.delete(s.variable)
        const merged = union(head, next)
        if (same(merged, head)) break
        head = merged
      }
      const body = drop ? sweep(s.body, head, true).body : s.body
      const live = new Set(head)
      if (s.kind === 'for') { live.delete(s.variable); readNames(s.start, live); readNames(s.stop, live); if (s.step) readNames(s.step, live) }
      return { live, stmt: drop ? { ...s, body } as Stmt : s }
    }
    case 'unchecked': {
      const r = sweep(s.body, after, drop)
      return { live: r.live, stmt: drop ? { ...s, body: r.body } : s }
    }
    default: {
      // push, pop, @safe: keep, and everything they mention is live
      const live = new Set(after)
      const visit = (e: Expr | Arg | undefined) => { if (e) readNames(e, live) }
      if (s.kind === 'push' || s.kind === 'pop') { live.add(s.stack.name); visit(s.value) }
      else if (s.kind === 'safe') visit(s.expr)
      return { live, stmt: s }
    }
  }
}

/**
 * `f` without the updates whose results nothing reads before the end, where only the
 * parameters named in `observed` are read after the end.
 */
export function dropDeadUpdates(f: FunctionDef, observed: ReadonlySet<string>): FunctionDef {
  return { ...f, body: sweep(f.body, new Set(observed), true).body }
}
