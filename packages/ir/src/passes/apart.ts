/**
 * Run-time tests that two array parameters are distinct memory, for the passes that reorder the
 * accesses of different arrays (`interchange`, `jam`).
 *
 * The checker rejects one array named twice in a call, but a host may pass one typed array (or two
 * overlapping views of one buffer) for two parameters of a function, and the reference interpreter
 * then reads and writes one memory through both names. A pass whose dependence test takes distinct
 * names for distinct memory is only right where the arrays it reorders do not overlap: it guards
 * its result with `$apart(a, b)` for each pair of a written array and another array parameter its
 * statements access, and keeps the statements as they were in the other branch:
 *
 *     if (0 < n && $apart(x, theta), ~) { (x and theta reordered) } else { (as written) }
 *
 * `$apart(a, b)` is a reserved call (its name cannot be written in a program): true when the
 * memory of arrays `a` and `b` does not overlap (one of them empty included). It reads neither
 * array's elements, only where they lie, which does not change during a call, so a test that held
 * when a branch was entered still holds where it ends (the `if`'s `~` post-condition holds), and a
 * test made by an enclosing `if` need not be made again inside it (`knownApart`). The backends
 * compute it from the arrays' places (cpu: the typed arrays' buffers and byte ranges; wasm: their
 * byte ranges in linear memory, where one typed array passed twice is one region).
 *
 * An array allocated by the function (an ancilla) is fresh memory: only pairs of parameters are
 * tested. Arrays of different element types are tested too (two views of one buffer).
 *
 * The language forbids such a call (the aliasing rule: an array a function writes shares no memory
 * with another array argument), and every checked entry point raises `call/overlap` for it before
 * anything runs (`overlapGuard` of `@tenet/reversible`: a call and its `.inverse` on every backend,
 * the AD drivers, `gpuMap`). Inside a program the checker rejects one array passed twice. The
 * guards remain for the one entry that checks nothing, a function's `.core` (as it does not check
 * argument types), whose callers may pass aliased arrays: there the guarded passes keep the
 * reference's values (the tests of `aliased-arrays.test.ts` of `@tenet/backend-wasm`).
 */
import type { Arg, Expr, FunctionDef } from '../ast.js'

/** The name of the reserved call `$apart(a, b)`: arrays `a` and `b` share no memory. */
export const APART = '$apart'

/** Pairs of array names already known apart (`'a\u0000b'`, the names sorted). */
export type KnownApart = ReadonlySet<string>

const pairKey = (a: string, b: string): string => (a < b ? `${a}\u0000${b}` : `${b}\u0000${a}`)

/**
 * The names of the arrays an expression accesses: indexed, or passed whole (not as the argument of
 * `len`, which reads only the length, nor of `$apart`).
 */
export function arraysAccessed(e: Expr | Arg, out: Set<string> = new Set()): Set<string> {
  switch (e.kind) {
    case 'index':
      out.add(e.array.name)
      arraysAccessed(e.index, out)
      break
    case 'var':
      if (typeof e.type === 'object' && e.type.kind === 'array') out.add(e.name)
      break
    case 'field':
    case 'neg':
      arraysAccessed(e.target, out)
      break
    case 'unary':
      arraysAccessed(e.arg, out)
      break
    case 'binary':
      arraysAccessed(e.left, out)
      arraysAccessed(e.right, out)
      break
    case 'call':
      if (e.callee !== 'len' && e.callee !== APART) for (const a of e.args) arraysAccessed(a, out)
      break
  }
  return out
}

/**
 * The pairs (written array, other array) of `f`'s array parameters that may be one memory and are
 * not known apart: each array of `written` that is a parameter, with each other parameter of
 * `accessed`. Sorted, each pair once.
 */
export function apartPairs(
  f: FunctionDef,
  written: Iterable<string>,
  accessed: Iterable<string>,
  known: KnownApart = new Set(),
): Array<[string, string]> {
  const params = new Set(f.params.filter((p) => p.type.kind === 'array').map((p) => p.name))
  const others = [...new Set(accessed)].filter((n) => params.has(n))
  const out = new Map<string, [string, string]>()
  for (const w of new Set(written)) {
    if (!params.has(w)) continue
    for (const x of others) {
      if (x === w) continue
      const k = pairKey(w, x)
      if (!known.has(k) && !out.has(k)) out.set(k, w < x ? [w, x] : [x, w])
    }
  }
  return [...out.keys()].sort().map((k) => out.get(k)!)
}

/** `$apart(a, b)` (bool). */
export function apartCall(a: string, b: string, f: FunctionDef): Expr {
  const ref = (n: string): Expr => {
    const p = f.params.find((q) => q.name === n)!
    return { kind: 'var', name: n, type: p.type }
  }
  return { kind: 'call', callee: APART, args: [ref(a), ref(b)], type: 'bool' }
}

/** `c && $apart(a1, b1) && …` for the pairs (c alone where there are none; c undefined: the tests alone). */
export function withApart(c: Expr | undefined, pairs: ReadonlyArray<readonly [string, string]>, f: FunctionDef): Expr {
  let out = c
  for (const [a, b] of pairs) {
    const t = apartCall(a, b, f)
    out = out ? { kind: 'binary', op: '&&', left: out, right: t, type: 'bool' } : t
  }
  if (!out) throw new Error('withApart: no condition')
  return out
}

/** The pairs a condition proves apart where it is true: its `$apart` terms, under `&&` and `&`. */
export function knownApart(c: Expr, known: KnownApart = new Set()): Set<string> {
  const out = new Set(known)
  const visit = (e: Expr): void => {
    if (e.kind === 'binary' && (e.op === '&&' || e.op === '&') && e.type === 'bool') {
      visit(e.left)
      visit(e.right)
    } else if (e.kind === 'call' && e.callee === APART) {
      const [a, b] = e.args
      if (a?.kind === 'var' && b?.kind === 'var') out.add(pairKey(a.name, b.name))
    }
  }
  visit(c)
  return out
}

/** `known` and the pairs. */
export function withKnown(known: KnownApart, pairs: ReadonlyArray<readonly [string, string]>): Set<string> {
  const out = new Set(known)
  for (const [a, b] of pairs) out.add(pairKey(a, b))
  return out
}
