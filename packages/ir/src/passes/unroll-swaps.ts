/**
 * Pass `unroll-swaps`: a `while` loop whose body exchanges scalar variables with top-level
 * `SWAP`s (the approximate multiplier `anc += out·x; out -= anc/x; SWAP(out, anc)` of paper 001)
 * runs two iterations per pass, the second with the exchanged names renamed, so that neither
 * copy moves a value:
 *
 *     while (pre, post) { A; SWAP(a, b); B }
 *
 * becomes (σ the exchange a ↔ b, applied to every name a statement mentions)
 *
 *     while (pre, post) {
 *       A; σB
 *       if (σpre) { σA; B } else { SWAP(a, b) }
 *     }
 *
 * After `A; σB` variable b holds what the loop calls a, and a what it calls b: the second copy
 * reads and writes them under σ, and ends with every name back where the loop expects it. When
 * the loop stops after the first copy, the `else` arm does the one exchange left, and `pre`, on the
 * names as they were, is false again at the top. The `if` is marked `exits` (see `IfStmt.exits`):
 * a backend may leave the loop after the `else` arm without testing `pre` (the cpu and wasm code
 * generators do), and may run `A; σB` and the `else` arm as the loop's body, the loop as it was
 * (wasm's lanes do, where the `if` on a condition that differs between lanes runs both arms).
 * Several top-level swaps compose to one
 * permutation of names; the pass applies when that permutation undoes itself (disjoint
 * exchanges), otherwise (a cycle of three, say) it leaves the loop as it is.
 *
 * Why: a swap at the end of a loop body is a cycle of moves at the loop's back edge, which a
 * register allocator resolves with a scratch register (V8 on x64: xmm15, for doubles). The same
 * scratch register is the merge operand of V8's int → double conversion (`vcvtlsi2sd
 * xmm, xmm15, r`), so the conversion of the next iteration's counter waits for the swap, i.e.
 * for the end of the previous iteration's chain of divisions: iterations that could overlap run
 * one after the other. Unrolled, the back edge carries every value in its own register.
 *
 * Exactness: the same operations on the same values in the same order, only held under other
 * names: the result is the same to the last bit. The loop's condition is evaluated once more at
 * its exit (a pure expression; a loop whose condition calls the host is left as it is). The inner
 * `if` has no post-condition that holds in general (it would have to tell the arms apart), so
 * with run-time checks on the pass runs only after the checks are placed (`unrollCheckedSwaps`
 * in `index.ts`, cpu backend): each copy of the body then carries its iteration's asserts, and
 * the `if` gets none (its `~` is never evaluated).
 * A loop whose body binds an exchanged name again (an ancilla, a loop variable) is left as it is.
 */
import type { Arg, CallStmt, Expr, FunctionDef, Stmt } from '../ast.js'
import { walk } from '../check.js'
import { callsHost } from './insert-checks.js'
import { rewriteBlock, rewriteExpr } from './rewrite.js'

type WhileStmt = Extract<Stmt, { kind: 'while' }>
/** A renaming of variables (names absent map to themselves). */
type Renaming = ReadonlyMap<string, string>

/** The two scalar variables a top-level `SWAP` of plain variables exchanges, else undefined. */
function exchanged(s: Stmt): [string, string] | undefined {
  if (s.kind !== 'callstmt' || s.callee !== 'SWAP' || s.target !== 'bijection' || s.args.length !== 2) return undefined
  const [a, b] = s.args as [Arg, Arg]
  const scalar = (x: Arg) => x.kind === 'var' && typeof x.type === 'string'
  if (!scalar(a) || !scalar(b)) return undefined
  const [x, y] = [(a as { name: string }).name, (b as { name: string }).name]
  return x === y ? undefined : [x, y]
}

const rename = (r: Renaming, name: string): string => r.get(name) ?? name

/** `r` followed by the exchange of the variables named `x` and `y` (as `r` names them now). */
function thenExchange(r: Renaming, x: string, y: string): Map<string, string> {
  // before: the loop's name n is held in variable r(n); after the swap of variables x and y,
  // what was held in x is held in y and the other way round
  const out = new Map<string, string>()
  const names = new Set([...r.keys(), x, y])
  for (const n of names) {
    const held = rename(r, n)
    out.set(n, held === x ? y : held === y ? x : held)
  }
  for (const [n, v] of out) if (n === v) out.delete(n)
  return out
}

/** `body` with every variable named under `r`. */
function renamed(body: Stmt[], r: Renaming): Stmt[] {
  if (r.size === 0) return body
  return rewriteBlock(body, (e) => (e.kind === 'var' && r.has(e.name) ? { ...e, name: r.get(e.name)! } : e))
}

/**
 * One copy of the loop's body run with the names held under `r` on entry: its top-level swaps of
 * plain variables dropped, every other statement renamed. Returns the statements and the renaming
 * in force at the end.
 */
function copy(body: Stmt[], r: Renaming): { stmts: Stmt[]; end: Renaming } {
  const stmts: Stmt[] = []
  let now: Renaming = r
  for (const s of body) {
    const x = exchanged(s)
    if (x) now = thenExchange(now, rename(now, x[0]), rename(now, x[1]))
    else stmts.push(...renamed([s], now))
  }
  return { stmts, end: now }
}

/** The names a body binds (ancillas, loop variables) or whose bijection calls read tables. */
function bindsOrTabulates(body: Stmt[], names: Set<string>): boolean {
  let found = false
  walk(body, (s) => {
    if ((s.kind === 'alloc' || s.kind === 'dealloc') && names.has(s.name)) found = true
    if (s.kind === 'for' && names.has(s.variable)) found = true
    if (s.kind === 'callstmt' && (s as CallStmt).tabulated?.length) found = true
  })
  return found
}

/** The loop unrolled by two as in the module comment, or undefined when the pass does not apply. */
function unrolled(s: WhileStmt): Stmt[] | undefined {
  const first = copy(s.body, new Map())
  const pi = first.end
  if (pi.size === 0) return undefined
  // the permutation must undo itself: a pair of copies ends with every name in place
  const second = copy(s.body, pi)
  if (second.end.size !== 0) return undefined
  if (bindsOrTabulates(s.body, new Set(pi.keys())) || callsHost(s.pre)) return undefined
  const pre = rewriteExpr(s.pre, (e) => (e.kind === 'var' && pi.has(e.name) ? { ...e, name: pi.get(e.name)! } : e))
  // the exchanges left when the loop stops after the first copy: one SWAP per pair of names
  const restore: Stmt[] = []
  const done = new Set<string>()
  const template = s.body.find((x) => exchanged(x)) as CallStmt
  for (const [n, held] of pi) {
    if (done.has(n)) continue
    done.add(n)
    done.add(held)
    const arg = (name: string) => ({ kind: 'var', name, ...typeOf(s.body, name) }) as Expr
    restore.push({ ...template, args: [arg(n), arg(held)], inverse: false })
  }
  const branch: Stmt = {
    kind: 'if',
    pre: pre as Expr,
    post: null,
    then: second.stmts,
    else: restore,
    exits: true,
    ...(s.loc ? { loc: s.loc } : {}),
  }
  return [{ ...s, body: [...first.stmts, branch] }]
}

/** The type a body's references give the variable `name` (a swap of it names it, typed). */
function typeOf(body: Stmt[], name: string): { type?: string } {
  let type: string | undefined
  walk(body, (s) => {
    if (type !== undefined || s.kind !== 'callstmt') return
    for (const a of s.args) if (a.kind === 'var' && a.name === name && typeof a.type === 'string') type = a.type
  })
  return type === undefined ? {} : { type }
}

/**
 * `body` with its swap loops unrolled by two (innermost first), except inside a counting loop
 * (`inFor`): there the loop is one of many (a batch of z, each a series), whose independent runs
 * the processor overlaps anyway, and the unrolled copy only adds code (the Bessel batch's tangent
 * measured 2.66× → 2.96× the objective unrolled, where the single series went 3.86× → 3.54×).
 */
export function unrollSwapsBlock(body: Stmt[], inFor = false): Stmt[] {
  return body.flatMap((s): Stmt[] => {
    switch (s.kind) {
      case 'if':
        return [{ ...s, then: unrollSwapsBlock(s.then, inFor), else: unrollSwapsBlock(s.else, inFor) }]
      case 'for':
        return [{ ...s, body: unrollSwapsBlock(s.body, true) }]
      case 'unchecked':
        return [{ ...s, body: unrollSwapsBlock(s.body, inFor) }]
      case 'while': {
        const inner = { ...s, body: unrollSwapsBlock(s.body, inFor) }
        return inFor ? [inner] : (unrolled(inner) ?? [inner])
      }
      default:
        return [s]
    }
  })
}

/**
 * The function with every `while` loop whose body exchanges names by `SWAP` unrolled by two,
 * outside counting loops; none at all where `inFor` (a function some counting loop calls, see
 * `calledInCountingLoops`).
 */
export function unrollSwaps(f: FunctionDef, inFor = false): FunctionDef {
  return { ...f, body: unrollSwapsBlock(f.body, inFor) }
}

/**
 * The functions of a program that a counting loop calls, directly or through other functions
 * (called or uncalled: a function and its inverse share the name): their swap loops run once
 * per iteration of a batch, where `unrollSwaps` leaves them alone.
 */
export function calledInCountingLoops(functions: Iterable<FunctionDef>): Set<string> {
  const defs = [...functions]
  const callees = new Map<string, { all: Set<string>; inFor: Set<string> }>()
  for (const f of defs) {
    const all = new Set<string>(),
      inFor = new Set<string>()
    const visit = (body: Stmt[], nested: boolean): void => {
      for (const s of body) {
        if (s.kind === 'callstmt' && s.target !== 'bijection') {
          all.add(s.callee)
          if (nested) inFor.add(s.callee)
        }
        if (s.kind === 'for') visit(s.body, true)
        else if (s.kind === 'if') {
          visit(s.then, nested)
          visit(s.else, nested)
        } else if ('body' in s && Array.isArray(s.body)) visit(s.body as Stmt[], nested)
      }
    }
    visit(f.body, false)
    callees.set(f.name, { all, inFor })
  }
  const out = new Set<string>()
  const add = (n: string): void => {
    if (out.has(n)) return
    out.add(n)
    for (const c of callees.get(n)?.all ?? []) add(c)
  }
  for (const { inFor } of callees.values()) for (const n of inFor) add(n)
  return out
}
