/**
 * `finite-uncompute` — with run-time checks on: the uncompute `y -= e` of an f64 or f32 ancilla
 * that was computed from zero by `y += e` (nothing between writing `y` or anything `e` reads)
 * becomes `y -= y`. The two give the same bits: `y` holds `0 + e` (`e` itself, or +0 for e = −0;
 * for f32, e is already a float32 value, so the rounding of `0 + e` to float32 changes nothing
 * else), so `y − e` is `e − e`, +0 when e is finite and NaN when it is not (exact, so rounded to
 * float32 the same), and so is `y − y`. The
 * deallocation check after it (`y -> 0.0`, `$near`) sees the same value — it fails exactly when e
 * was not finite, as before — and the uncompute no longer evaluates `e` again (the `sqrt`, `cos`,
 * `sin` and divisions of a `~routine`). The bounds checks of `e`'s second evaluation go with it:
 * the first evaluation read the same elements (nothing between writes what `e` reads), so they
 * cannot fail first.
 *
 * Where: in one block (`y += e` … `y -= e`), or in the same branch of two `if (c, ~)` of one
 * block (a routine's `if` and its inverse in `~routine`), when nothing from the first `if` to the
 * second writes what `c` reads, so that both take the same branch. `y` is allocated as `0.0` in
 * the block and nothing on the path from there to `y += e` writes it; `e` calls no host function.
 * In between, an update of one element `a[w]` of an array that `e` reads is no write of what `e`
 * reads where `e` reads `a` only at indices a nonzero constant away from w (as polynomials of the
 * same names: an integrator's stages of `xs[2t]`, `xs[2t + 1]` and the history's next elements
 * `xs[2t + 2]`, `xs[2t + 3]`); a name w reads that e's index does not makes the difference no
 * constant, and one both read is a name `e` reads, which nothing in between may write.
 * With checks off, `dead-ancillas` drops such uncomputes altogether.
 */
import type { Arg, Expr, FunctionDef, ScalarTypeName, Stmt } from '../ast.js'
import { readNames } from '../check.js'
import { key } from '../cse.js'
import { writtenNames } from './hoist-invariants.js'
import { callsHost } from './insert-checks.js'
import { constantDifference, polynomial, type Poly } from './interchange.js'
import { mapInnerBlocks } from './rewrite.js'

type Update = Extract<Stmt, { kind: 'update' }>
type IfStmt = Extract<Stmt, { kind: 'if' }>

/**
 * `f` with every uncompute of an f64 or f32 ancilla that repeats its computation from zero written
 * `y -= y` (see the module comment). `effectful`: the functions with a host effect; `writes`: for
 * each function, which parameters it writes (\`Program.writes\`; without it a call writes every
 * argument).
 */
export function finiteUncompute(
  f: FunctionDef,
  effectful: ReadonlySet<string> = new Set(),
  writes?: ReadonlyMap<string, readonly boolean[]>,
): FunctionDef {
  let changed = false
  const writesAny = (stmts: Stmt[], names: ReadonlySet<string>): boolean => {
    const w = writtenNames(stmts, effectful, writes)
    return w === undefined || [...w].some((n) => names.has(n))
  }
  const block = (body: Stmt[]): Stmt[] => {
    let out = mapInnerBlocks(body, block)
    for (let a = 0; a < out.length; a++) {
      const s = out[a]!
      if (s.kind !== 'alloc' || !zeroFloat(s)) continue
      const next = rewriteUncomputes(out, a, s.name, writesAny)
      if (next !== out) {
        out = next
        changed = true
      }
    }
    return out
  }
  const body = block(f.body)
  return changed ? { ...f, body } : f
}

const zeroFloat = (s: Extract<Stmt, { kind: 'alloc' }>): boolean =>
  s.type?.kind === 'scalar' &&
  (s.type.name === 'f64' || s.type.name === 'f32') &&
  s.value.kind === 'num' &&
  s.value.value === 0

/** Whether the statements may write the names (or anything: a host effect). */
type WritesAny = (stmts: Stmt[], names: ReadonlySet<string>) => boolean

/** Whether `s` is `y += e` with an f64 or f32 target `y` and `e` free of host calls. */
const computes = (s: Stmt, y: string): s is Update =>
  s.kind === 'update' &&
  s.op === '+=' &&
  s.target.kind === 'var' &&
  s.target.name === y &&
  (s.target.type === 'f64' || s.target.type === 'f32') &&
  !s.distinct?.length &&
  !callsHost(s.value)

/** Whether `s` is `y -= e` for the same `e`. */
const uncomputes = (s: Stmt, y: string, e: Expr): s is Update =>
  s.kind === 'update' &&
  s.op === '-=' &&
  s.target.kind === 'var' &&
  s.target.name === y &&
  !s.distinct?.length &&
  key(s.value) === key(e)

/** `u` as `y -= y`. */
const selfUncompute = (u: Update, y: string): Update => ({
  ...u,
  value: {
    kind: 'var',
    name: y,
    type: (u.target as { type?: ScalarTypeName }).type ?? 'f64',
    ...(u.value.loc ? { loc: u.value.loc } : {}),
  },
})

/**
 * `body` (a block where `y` is allocated at `a`) with the uncomputes of `y` that repeat its
 * computation rewritten, or `body` itself.
 */
function rewriteUncomputes(body: Stmt[], a: number, y: string, writesAny: WritesAny): Stmt[] {
  const Y = new Set([y])
  let out = body
  for (let k = a + 1; k < out.length; k++) {
    const s = out[k]!
    if (computes(s, y)) {
      const done = inBlock(out, k, y, s.value, writesAny)
      if (done) out = done
      // (after y += e, y is no longer zero: nothing further up to a rewrite)
      return out
    }
    if (s.kind === 'if' && !s.post) {
      // y computed in a branch of this if (each branch, from its start)
      let next = out
      for (const branch of ['then', 'else'] as const) {
        const arm = s[branch]
        const m = arm.findIndex((t) => writesAny([t], Y))
        if (m < 0 || !computes(arm[m]!, y)) continue
        const done = fromBranch(next, k, branch, m, y, (arm[m] as Update).value, writesAny)
        if (done) next = done
      }
      if (next !== out) return next
    }
    if (writesAny([s], Y)) return out
  }
  return out
}

/** `y += e` at `k` of `body`, its uncompute later in the same block. */
function inBlock(body: Stmt[], k: number, y: string, e: Expr, writesAny: WritesAny): Stmt[] | undefined {
  const kept = new Set([y, ...readNames(e)])
  const elements = elementReads(e)
  for (let j = k + 1; j < body.length; j++) {
    const s = body[j]!
    if (uncomputes(s, y, e)) return [...body.slice(0, j), selfUncompute(s, y), ...body.slice(j + 1)]
    if (writesAny([s], kept) && !writesOtherElement(s, y, elements)) return undefined
  }
  return undefined
}

/**
 * The elements `e` reads, per array: the polynomials of their indices (see `polynomial`); null
 * for an array that `e` reads otherwise too (at an index that is no polynomial, whole as a call's
 * argument). `len(a)` reads no element.
 */
function elementReads(e: Expr): Map<string, Poly[] | null> {
  const out = new Map<string, Poly[] | null>()
  const visit = (x: Expr | Arg): void => {
    switch (x.kind) {
      case 'index': {
        const p = polynomial(x.index)
        const have = out.get(x.array.name)
        if (!p || have === null) out.set(x.array.name, null)
        else out.set(x.array.name, [...(have ?? []), p])
        visit(x.index)
        return
      }
      case 'var':
        if (typeof x.type === 'object' && x.type.kind === 'array') out.set(x.name, null)
        return
      case 'field':
      case 'neg':
        visit(x.target)
        return
      case 'unary':
        visit(x.arg)
        return
      case 'binary':
        visit(x.left)
        visit(x.right)
        return
      case 'call':
        if (x.callee === 'len') return
        for (const a of x.args) visit(a)
        return
      default:
        return
    }
  }
  visit(e)
  return out
}

/**
 * Whether `s` is an update of one element `a[w]` of an array whose elements `e` reads (`elements`,
 * of {@link elementReads}) only at indices a nonzero constant away from w: such an update changes
 * nothing `e` reads. (A name that w reads but e's index does not makes the difference no
 * constant; one that both read is one that `e` reads, which nothing between may write.)
 */
function writesOtherElement(s: Stmt, y: string, elements: ReadonlyMap<string, Poly[] | null>): boolean {
  if (s.kind !== 'update' || s.target.kind !== 'index' || s.target.array.name === y) return false
  if (callsHost(s.value) || callsHost(s.target.index)) return false
  const reads = elements.get(s.target.array.name)
  const w = polynomial(s.target.index)
  if (!reads || !w) return false
  return reads.every((r) => {
    const d = constantDifference(w, r)
    return d !== undefined && d !== 0
  })
}

/**
 * `y += e` at `m` of branch `branch` of the `if` at `k` of `body`; its uncompute in the same
 * branch after it, or in that branch of a later `if` with the same condition.
 */
function fromBranch(
  body: Stmt[],
  k: number,
  branch: 'then' | 'else',
  m: number,
  y: string,
  e: Expr,
  writesAny: WritesAny,
): Stmt[] | undefined {
  const F = body[k] as IfStmt
  const arm = F[branch]
  const replace = (j: number, s: Stmt) => [...body.slice(0, j), s, ...body.slice(j + 1)]
  const inArm = inBlock(arm, m, y, e, writesAny)
  if (inArm) return replace(k, { ...F, [branch]: inArm })
  const kept = new Set([y, ...readNames(e)])
  if (writesAny(arm.slice(m + 1), kept)) return undefined
  // the condition keeps its value from F to G: F's branches and what lies between write nothing it reads
  if (callsHost(F.pre)) return undefined
  const cond = readNames(F.pre)
  if (writesAny([...F.then, ...F.else], cond)) return undefined
  for (let j = k + 1; j < body.length; j++) {
    const G = body[j]!
    if (G.kind === 'if' && !G.post && key(G.pre) === key(F.pre)) {
      const garm = G[branch]
      for (let n = 0; n < garm.length; n++) {
        const s = garm[n]!
        if (uncomputes(s, y, e)) {
          const arm2 = [...garm.slice(0, n), selfUncompute(s, y), ...garm.slice(n + 1)]
          return replace(j, { ...G, [branch]: arm2 })
        }
        if (writesAny([s], kept)) return undefined
      }
      return undefined
    }
    if (writesAny([G], new Set([...kept, ...cond]))) return undefined
  }
  return undefined
}
