/**
 * Pass `sink-ancillas`: an array ancilla allocated (`zeros(n)`) before a loop and deallocated
 * after it, which every iteration of the loop leaves as it found it, is allocated afresh in each
 * iteration instead. The typical case is a branch keeper (paper 000's sparse dot product): a bool
 * array that an inner loop fills with its decisions, and that the uncompute written later in the
 * same iteration clears again so that the next iteration finds zeros. Once the array belongs to
 * the iteration, nothing reads what the uncompute restores (a deallocation reads nothing without
 * checks), so `dead-ancillas` drops the uncompute, and `contract-arrays` may turn the array into
 * one scalar per inner iteration.
 *
 * That an iteration leaves the array as it found it is proved from the code, never assumed:
 * every statement of the body that writes the array is a compound statement whose own body (each
 * branch, each iteration) leaves it so, or opens a pair P … Q in one block where Q undoes P on
 * the array. For the pair, the names V that decide the array are closed over both: the slice of
 * a statement keeps the statements (at any depth) that write a name of V, and V grows by every
 * name a kept statement reads or writes until it is stable. The pair qualifies when the slice of
 * Q is, statement by statement, the inverse of the slice of P (as `~{ }` or `~routine` writes
 * it), nothing between P and Q writes a name of V, and the slices use only updates `+=`, `-=`,
 * `^=`, allocations, `if`, `for`, `while` and `@unchecked`, writing only integer and bool values.
 * The statements outside the slices (the loss accumulated beside the decisions, the gradient
 * updates of an adjoint) write no name of V, so they cannot change what the slices compute.
 *
 * Exactness: on integers and booleans an inverse undoes its statement exactly, given that the
 * program is reversible (its branches' post-conditions hold). Run-time checks are what verify
 * that, so the backends run this pass with checks off only, where the program is assumed valid
 * (an invalid one may compute differently with and without the pass, as with `dead-ancillas`).
 */
import type { AllocStmt, Arg, Expr, ForStmt, FunctionDef, Stmt, WhileStmt } from '../ast.js'
import { readNames, rootName, walk } from '../check.js'
import { key } from '../cse.js'
import { stmtExprs } from '../stmt-exprs.js'
import { mapInnerBlocks } from './rewrite.js'

/** How many candidate partners of a statement `restores` tries (a bound on its work in long bodies). */
const MAX_PARTNERS = 8

/** The value types whose updates an inverse undoes exactly. */
const EXACT = new Set(['i32', 'bool'])

/** The names a statement writes at any depth: update and call targets, ancillas, loop variables, stacks. */
export function writesOf(s: Stmt): Set<string> {
  const out = new Set<string>()
  const add = (a: Arg) => {
    const r = rootName(a)
    if (r !== undefined) out.add(r)
  }
  walk([s], (x) => {
    switch (x.kind) {
      case 'update':
        add(x.target)
        break
      case 'callstmt':
        // a function or bijection may write any of its dataview arguments
        for (const a of x.args)
          if (a.kind === 'var' || a.kind === 'index' || a.kind === 'field' || a.kind === 'neg') add(a)
        break
      case 'alloc':
      case 'dealloc':
        out.add(x.name)
        break
      case 'for':
        out.add(x.variable)
        break
      case 'push':
      case 'pop':
        out.add(x.stack.name)
        add(x.value)
        break
    }
  })
  return out
}

/** Whether a statement names `x` anywhere (reads, writes, allocates, `len(x)`). */
export function mentions(s: Stmt, x: string): boolean {
  let yes = false
  walk([s], (t) => {
    if ((t.kind === 'alloc' || t.kind === 'dealloc') && t.name === x) yes = true
    for (const e of stmtExprs(t)) if (readNames(e).has(x)) yes = true
  })
  return yes
}

/** The type name of an update's target, when it is a plain variable or element. */
function targetType(t: Arg): string | undefined {
  if (t.kind !== 'var' && t.kind !== 'index') return undefined
  return typeof t.type === 'string' ? t.type : undefined
}

/**
 * `body` less the statements (at any depth) that write no name of `names`; undefined when a
 * kept statement is not one whose inverse the pass can match, or writes a value that is not exact.
 */
function slice(body: Stmt[], names: ReadonlySet<string>): Stmt[] | undefined {
  const out: Stmt[] = []
  for (const s of body) {
    if (![...writesOf(s)].some((n) => names.has(n))) continue
    switch (s.kind) {
      case 'update': {
        const t = targetType(s.target)
        if ((s.op !== '+=' && s.op !== '-=' && s.op !== '^=') || t === undefined || !EXACT.has(t)) return undefined
        out.push(s)
        break
      }
      case 'alloc':
      case 'dealloc': {
        const t = s.type
        if (!t || t.kind === 'stack' || !EXACT.has(t.kind === 'scalar' ? t.name : t.elem)) return undefined
        out.push(s)
        break
      }
      case 'if': {
        const then = slice(s.then, names),
          els = slice(s.else, names)
        if (!then || !els) return undefined
        out.push({ ...s, then, else: els })
        break
      }
      case 'for':
      case 'while':
      case 'unchecked': {
        const b = slice(s.body, names)
        if (!b) return undefined
        out.push({ ...s, body: b } as Stmt)
        break
      }
      default:
        return undefined
    }
  }
  return out
}

/** Adds every name the statements read or write (their own expressions and nested ones). */
function addNames(body: Stmt[], out: Set<string>): void {
  walk(body, (s) => {
    for (const n of writesOf(s)) out.add(n)
    for (const e of stmtExprs(s)) readNames(e, out)
  })
}

const INVERSE_OP = { '+=': '-=', '-=': '+=', '^=': '^=' } as const

/** The inverse of a slice (only the statement kinds `slice` keeps). */
function invert(body: Stmt[]): Stmt[] {
  const out: Stmt[] = []
  for (let k = body.length - 1; k >= 0; k--) {
    const s = body[k]!
    switch (s.kind) {
      case 'update':
        out.push({ ...s, op: INVERSE_OP[s.op as keyof typeof INVERSE_OP] })
        break
      case 'alloc':
        out.push({ ...s, kind: 'dealloc' } as Stmt)
        break
      case 'dealloc':
        out.push({ ...s, kind: 'alloc' } as Stmt)
        break
      case 'if':
        out.push({
          ...s,
          pre: s.post ?? s.pre,
          post: s.post ? s.pre : null,
          then: invert(s.then),
          else: invert(s.else),
        })
        break
      case 'for':
        out.push({ ...s, reverse: !s.reverse, body: invert(s.body) })
        break
      case 'while':
        out.push({ ...s, pre: s.post, post: s.pre, body: invert(s.body) })
        break
      case 'unchecked':
        out.push({ ...s, body: invert(s.body) })
        break
      default:
        throw new Error(`sink-ancillas: cannot invert \`${s.kind}\``)
    }
  }
  return out
}

/** A structural key of an expression or dataview (undefined for a negated view: never equal). */
const exprKey = (e: Expr | Arg): string | undefined => (e.kind === 'neg' ? undefined : key(e))
const sameExpr = (a: Expr | Arg | null, b: Expr | Arg | null): boolean =>
  a === null || b === null ? a === b : exprKey(a) !== undefined && exprKey(a) === exprKey(b)

/** Whether two slices are the same statements (source locations and annotations aside). */
function sameBlock(a: Stmt[], b: Stmt[]): boolean {
  return a.length === b.length && a.every((s, k) => sameStmt(s, b[k]!))
}

function sameStmt(a: Stmt, b: Stmt): boolean {
  if (a.kind !== b.kind) return false
  switch (a.kind) {
    case 'update': {
      const c = b as typeof a
      return a.op === c.op && sameExpr(a.target, c.target) && sameExpr(a.value, c.value)
    }
    case 'alloc':
    case 'dealloc': {
      const c = b as typeof a
      if (a.name !== c.name) return false
      if (a.value.kind === 'emptystack' || c.value.kind === 'emptystack') return a.value.kind === c.value.kind
      return sameExpr(a.value, c.value)
    }
    case 'if': {
      const c = b as typeof a
      return (
        sameExpr(a.pre, c.pre) && sameExpr(a.post, c.post) && sameBlock(a.then, c.then) && sameBlock(a.else, c.else)
      )
    }
    case 'for': {
      const c = b as typeof a
      return (
        a.variable === c.variable &&
        a.inclusive === c.inclusive &&
        !!a.reverse === !!c.reverse &&
        sameExpr(a.start, c.start) &&
        sameExpr(a.stop, c.stop) &&
        sameExpr(a.step, c.step) &&
        sameBlock(a.body, c.body)
      )
    }
    case 'while': {
      const c = b as typeof a
      return sameExpr(a.pre, c.pre) && sameExpr(a.post, c.post) && sameBlock(a.body, c.body)
    }
    case 'unchecked':
      return sameBlock(a.body, (b as typeof a).body)
    default:
      return false
  }
}

/** Whether `body[q]` undoes `body[p]` on `x` (see the module comment). */
function undoes(body: Stmt[], p: number, q: number, x: string): boolean {
  const P = body[p]!,
    Q = body[q]!
  const names = new Set([x])
  let sp: Stmt[] | undefined, sq: Stmt[] | undefined
  for (;;) {
    sp = slice([P], names)
    sq = slice([Q], names)
    if (!sp || !sq) return false
    const size = names.size
    addNames(sp, names)
    addNames(sq, names)
    if (names.size === size) break
  }
  if (!sp.length || !sameBlock(sq, invert(sp))) return false
  for (let k = p + 1; k < q; k++) if ([...writesOf(body[k]!)].some((n) => names.has(n))) return false
  return true
}

/** Whether running `body` leaves `x` as it was before (see the module comment). */
export function restores(body: Stmt[], x: string): boolean {
  for (let k = 0; k < body.length; k++) {
    const s = body[k]!
    if (!writesOf(s).has(x)) continue
    if ((s.kind === 'for' || s.kind === 'while' || s.kind === 'unchecked') && restores(s.body, x)) continue
    if (s.kind === 'if' && restores(s.then, x) && restores(s.else, x)) continue
    // the partner is a statement of the same kind that writes x (the first few such are tried)
    let partner = -1
    for (let q = k + 1, tries = 0; q < body.length && tries < MAX_PARTNERS && partner < 0; q++) {
      const t = body[q]!
      if (t.kind !== s.kind || !writesOf(t).has(x)) continue
      tries++
      if (undoes(body, k, q, x)) partner = q
    }
    if (partner < 0) return false
    k = partner
  }
  return true
}

/**
 * `body` with each ancilla allocated in it (at any depth) that `candidate` accepts moved into the
 * one loop that uses it between its allocation and deallocation, when that loop's own
 * expressions (range, condition) do not read it and `sinkable(a, loop, between)` holds (`between`:
 * the statements from the allocation to the deallocation, excluded). The allocation becomes the
 * loop body's first statement and the deallocation its last. The shared walk of `sink-ancillas`
 * (arrays) and `sink-scalars` (scalars).
 *
 * With `everyLoop`, an ancilla used by several statements between its allocation and deallocation
 * is sunk into each of them when every one is such a loop (`sinkable` holds for each): a caller
 * passes it when `sinkable` proves that a loop leaves the ancilla at the value it is allocated
 * with, so that the next loop finds that value as a fresh allocation would give it (a `routine`
 * whose loop computes into an ancilla, and the `~routine` that runs the loop backwards).
 */
export function sinkIntoLoops(
  body: Stmt[],
  candidate: (a: AllocStmt) => boolean,
  sinkable: (a: AllocStmt, loop: ForStmt | WhileStmt, between: Stmt[]) => boolean,
  everyLoop = false,
): Stmt[] {
  let out = body
  for (let i = 0; i < out.length; i++) {
    const a = out[i]!
    if (a.kind !== 'alloc' || !candidate(a)) continue
    const d = out.findIndex((s, k) => k > i && s.kind === 'dealloc' && s.name === a.name)
    if (d < 0) continue
    const users: number[] = []
    for (let k = i + 1; k < d; k++) if (mentions(out[k]!, a.name)) users.push(k)
    if (users.length === 0 || (users.length > 1 && !everyLoop)) continue
    const between = out.slice(i + 1, d)
    const fits = (s: Stmt): s is ForStmt | WhileStmt =>
      (s.kind === 'for' || s.kind === 'while') &&
      !stmtExprs(s).some((e) => readNames(e).has(a.name)) &&
      sinkable(a, s, between)
    if (!users.every((l) => fits(out[l]!))) continue
    const dealloc = out[d]!
    const sunk = out.map((s, k) =>
      users.includes(k) ? ({ ...s, body: [a, ...(s as ForStmt | WhileStmt).body, dealloc] } as Stmt) : s,
    )
    out = [...sunk.slice(0, i), ...sunk.slice(i + 1, d), ...sunk.slice(d + 1)]
    i--
  }
  const inner = (b: Stmt[]) => sinkIntoLoops(b, candidate, sinkable, everyLoop)
  return mapInnerBlocks(out, inner)
}

/**
 * Whether a loop nested in `body` (at any depth), or a call, writes `x`. A sunk array is allocated and zeroed
 * whole in every iteration, so it is sunk only where the iteration itself runs a loop over it (a
 * keeper filled by an inner merge): an iteration that writes `x` only in straight-line statements
 * (at its own index, say), or never, would pay the array's length per iteration for an uncompute
 * of a few updates, and an array the loop only reads gains nothing at all (the loop over 10⁵
 * elements that read such an array ran 10⁵ allocations of 10⁵ elements: quadratic).
 */
export function writtenInInnerLoop(body: Stmt[], x: string): boolean {
  let yes = false
  walk(body, (s) => {
    if (yes) return
    if ((s.kind === 'for' || s.kind === 'while') && s.body.some((t) => writesOf(t).has(x))) yes = true
    // (a call that writes x may loop over it: counted as such)
    if (s.kind === 'callstmt' && writesOf(s).has(x)) yes = true
  })
  return yes
}

/** `body` with the array ancillas that a loop restores on every iteration allocated inside it. */
export function sinkAncillasBlock(body: Stmt[]): Stmt[] {
  return sinkIntoLoops(
    body,
    (a) => a.type?.kind === 'array' && a.value.kind === 'call' && a.value.callee === 'zeros',
    (a, loop, between) => {
      // the length must be the same in every iteration
      const length = a.value.kind === 'emptystack' ? new Set<string>() : readNames(a.value)
      if (loop.kind === 'for' && length.has(loop.variable)) return false
      if (between.some((s) => [...writesOf(s)].some((n) => length.has(n)))) return false
      return writtenInInnerLoop(loop.body, a.name) && restores(loop.body, a.name)
    },
  )
}

/** The function with its loop-restored array ancillas allocated per iteration (see the module comment). */
export function sinkAncillas(f: FunctionDef): FunctionDef {
  return { ...f, body: sinkAncillasBlock(f.body) }
}
