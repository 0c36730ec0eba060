/**
 * `retrace-loops`: with run-time checks on, the loop `while (p, c) { R }` that runs a loop
 * `while (c, p) { B }` of the same block backwards (the uncompute `~routine` places) runs only
 * over the iterations that it would not retrace exactly; the forward loop finds out which, as it
 * goes. It runs after `insert-checks`, `hoist-bounds` and `implied-checks`, on the placed asserts;
 * the cpu and wasm backends run it, the interpreter (the reference) does not.
 *
 * Why the backward loop is there at all with checks on: its checks (the forward condition `c`
 * after each undone iteration, the deallocation checks after it) verify that the uncompute
 * restores what the forward loop started from. Float arithmetic is not exactly reversible, so in
 * general only running it tells. But an iteration can be undone exactly, and whether it is can be
 * tested at the time it runs: the forward loop applies R to a copy of what its iteration left (the
 * state s_{j+1} = B(s_j), the scalars B and R write), and compares the result, bit for bit, with
 * what the iteration started from (s_j). Where R(s_{j+1}) = s_j, and R's asserts all pass on that
 * copy, the backward loop's step from s_{j+1} reaches s_j and makes no check fail: the same
 * operations on the same values (R reads nothing else that changes in between). By induction from
 * the last iteration down, the backward loop visits s_K, s_{K−1}, … exactly, so it needs to start
 * only at the latest state s_m (the resume state) whose step back was not verified — s_0 when
 * every step was, where its condition p is false (the forward loop's entry check said so) and it
 * runs no iteration. The forward loop keeps the resume state in copies (`rs`), set to s_0 before it
 * and to s_{j+1} after each iteration whose step back failed the test; before the backward loop
 * the state is exchanged with them (`SWAP`, bit for bit), and the backward loop runs from there,
 * unchanged, with every check of its own. So every check that can fail still runs, where it was,
 * with the same condition and message; those left out are the backward loop's checks on states
 * that the test proved they pass on, and the pass changes no value the program computes.
 *
 * Shape (a block, checks placed):
 *
 * ```
 * assert postWhileStart(!p)        // s_0: p false
 * while (c, p) { B; assert postWhileIteration(p) }
 * M                                // writes nothing B or R read or write
 * while (p, c) { R }               // p as the forward loop's post-condition
 * ```
 *
 * becomes
 *
 * ```
 * assert postWhileStart(!p)
 * rs_v <- v  …                     // for each v of the state (scalars B or R write)
 * while (c, p) {
 *   s_v <- v  …
 *   B; assert postWhileIteration(p)
 *   r_v <- v  …; R′                // R on the copies, its asserts' conditions kept in booleans
 *   if (!(ok_1 && … && same(r_v, s_v) && …), ~) { t_v <- v; SWAP(rs_v, t_v) … }
 * }
 * M
 * SWAP(v, rs_v) …
 * while (p, c) { R }
 * ```
 *
 * `same(a, b)` is `$same(a, b)` for floats (equal, neither NaN, and of the same sign: +0 and −0
 * differ) and `a == b` for i32 and bool. R′ evaluates R's statements whatever an earlier assert
 * of it found, so R must be total: scalars only (no array element, nothing that can trap or call
 * out: no integer division or remainder, no conversion to an integer, only the standard
 * primitives of floats), no nested loop, no call but `SWAP` of two scalars at its top level (R′
 * exchanges the names instead, so that pass `unroll-swaps` still unrolls the forward loop). The
 * state must be scalar ancillas of i32, bool, f64 or f32 allocated before the forward loop; B may
 * write nothing else outside itself; M must not write the state or what B and R read, nor have an
 * effect on the host (`@safe`, an effectful call).
 *
 * The Bessel series of paper 001 (the approximate multiplier's term and residue, the sum, the
 * counter): about 90% of z in [0.1, 3] retrace exactly; where a step is not exact (the sum's
 * `out_anc += t; out_anc -= t` rounds), it is one of the first few, and the backward loop runs
 * only those. The test runs beside the forward loop's chain of divisions, not after it.
 */
import type { Arg, AssertStmt, Expr, FunctionDef, ScalarTypeName, Stmt, Type } from '../ast.js'
import type { CompileOptions, Program } from '../plugin.js'
import { standardPrimitives } from '../stdlib/index.js'
import { writtenNames } from './hoist-invariants.js'
import { sameExpr } from './implied-checks.js'
import { rewriteBlock, rewriteExpr } from './rewrite.js'
import { walk } from '../check.js'

/** The reserved call `$same(a, b)`: floats a and b are equal, not NaN, and of the same sign. */
export const SAME = '$same'

type WhileStmt = Extract<Stmt, { kind: 'while' }>

/** The float primitives of the standard library R′ may evaluate (none can trap or call out). */
const TOTAL_CALLS = new Set([
  'abs',
  'sqrt',
  'exp',
  'log',
  'sin',
  'cos',
  'tan',
  'tanh',
  'sinh',
  'cosh',
  'atan',
  'atan2',
  'asin',
  'acos',
  'identity',
  'min',
  'max',
  'sign',
  'abs2',
])

/** The scalar types whose values the pass compares (bit for bit). */
const STATE_TYPES = new Set<string>(['f64', 'f32', 'i32', 'bool'])

const isFloat = (t: unknown): boolean => t === 'f64' || t === 'f32'
const isView = (a: Arg): boolean => a.kind === 'index' || a.kind === 'field' || a.kind === 'neg'

/** Whether evaluating `e` can neither trap, nor read memory, nor call out (see the module comment). */
function total(e: Expr | Arg, isStandard: (callee: string) => boolean): boolean {
  switch (e.kind) {
    case 'num':
    case 'bool':
      return true
    case 'var':
      return typeof e.type === 'string' && STATE_TYPES.has(e.type)
    case 'unary':
      return total(e.arg, isStandard)
    case 'binary':
      if ((e.op === '/' || e.op === '%' || e.op === '**') && !isFloat(e.left.type)) return false
      return total(e.left, isStandard) && total(e.right, isStandard)
    case 'call': {
      const ok =
        e.callee === '$near' ||
        e.callee === '$factor' ||
        ((e.callee === 'f64' || e.callee === 'f32') && e.args.length === 1) ||
        (TOTAL_CALLS.has(e.callee) && isStandard(e.callee) && e.args.every((a) => isFloat(a.type)))
      return ok && e.args.every((a) => total(a, isStandard))
    }
    default:
      return false
  }
}

/** The two scalar names of a `SWAP` (or `~SWAP`) of two plain variables, else undefined. */
function swapped(s: Stmt): [string, string] | undefined {
  if (s.kind !== 'callstmt' || s.callee !== 'SWAP' || s.target !== 'bijection' || s.args.length !== 2) return undefined
  const [a, b] = s.args as [Arg, Arg]
  if (a.kind !== 'var' || b.kind !== 'var' || typeof a.type !== 'string' || typeof b.type !== 'string') return undefined
  return a.name === b.name ? undefined : [a.name, b.name]
}

/**
 * Whether R's statements (top level `top`) are of the form the copy R′ evaluates: total
 * expressions, scalar targets, `SWAP` only at the top level, no loop, no other call.
 */
function totalBlock(body: Stmt[], top: boolean, isStandard: (callee: string) => boolean): boolean {
  return body.every((s) => {
    switch (s.kind) {
      case 'update':
        return s.target.kind === 'var' && typeof s.target.type === 'string' && total(s.value, isStandard)
      case 'callstmt':
        return top && swapped(s) !== undefined
      case 'alloc':
      case 'dealloc':
        return (
          s.value.kind !== 'emptystack' &&
          typeof (s.type as Type | undefined)?.kind === 'string' &&
          (s.type as Type).kind === 'scalar' &&
          total(s.value, isStandard)
        )
      case 'assert':
        return total(s.cond, isStandard)
      case 'if':
        return (
          total(s.pre, isStandard) &&
          (s.post === null || total(s.post, isStandard)) &&
          totalBlock(s.then, false, isStandard) &&
          totalBlock(s.else, false, isStandard)
        )
      default:
        return false
    }
  })
}

/** The names a block allocates, at any depth. */
function allocated(body: Stmt[], out: Set<string> = new Set()): Set<string> {
  for (const s of body) {
    if (s.kind === 'alloc') out.add(s.name)
    if (s.kind === 'if') {
      allocated(s.then, out)
      allocated(s.else, out)
    }
    if (s.kind === 'while' || s.kind === 'for' || s.kind === 'unchecked') allocated(s.body, out)
  }
  return out
}

/** The names a block reads (expressions, dataview roots of updates' values, conditions), at any depth. */
function readsOf(body: Stmt[], out: Set<string> = new Set()): Set<string> {
  const add = (e: Expr | Arg) =>
    rewriteExpr(e, (x) => {
      if (x.kind === 'var') out.add(x.name)
      if (x.kind === 'index') out.add(x.array.name)
      return x
    })
  rewriteBlock(body, (x) => {
    add(x)
    return x
  })
  return out
}

const variable = (name: string, type: ScalarTypeName): Expr => ({ kind: 'var', name, type })
const alloc = (name: string, value: Expr, type: ScalarTypeName): Stmt => ({
  kind: 'alloc',
  name,
  declared: { kind: 'scalar', name: type },
  value,
  type: { kind: 'scalar', name: type },
})
const swap = (a: string, b: string, type: ScalarTypeName): Stmt => ({
  kind: 'callstmt',
  callee: 'SWAP',
  args: [variable(a, type), variable(b, type)],
  inverse: false,
  target: 'bijection',
})
const and = (a: Expr, b: Expr): Expr => ({ kind: 'binary', op: '&&', left: a, right: b, type: 'bool' })

/** The per-function counter of the fresh names (`name$rt<n>`). */
interface Names {
  n: number
}

/** The test that `a` and `b` hold the same bits (see the module comment). */
function same(a: string, b: string, type: ScalarTypeName): Expr {
  const [x, y] = [variable(a, type), variable(b, type)]
  if (isFloat(type)) return { kind: 'call', callee: SAME, args: [x, y], type: 'bool' }
  return { kind: 'binary', op: '==', left: x, right: y, type: 'bool' }
}

/**
 * R′: R's statements on fresh copies of the names it writes (`rename` maps each state name to its
 * copy, and is updated in place as top-level swaps exchange them), its asserts' conditions kept in
 * fresh booleans (returned in `oks`).
 */
function copyOfR(body: Stmt[], rename: Map<string, string>, names: Names, oks: string[], out: Stmt[]): void {
  const renamed = (e: Expr): Expr =>
    rewriteExpr(e, (x) => (x.kind === 'var' && rename.has(x.name) ? { ...x, name: rename.get(x.name)! } : x)) as Expr
  for (const s of body) {
    switch (s.kind) {
      case 'callstmt': {
        // (a top-level SWAP: the copies exchange names instead of values)
        const [a, b] = swapped(s)!
        const [ra, rb] = [rename.get(a)!, rename.get(b)!]
        rename.set(a, rb)
        rename.set(b, ra)
        break
      }
      case 'assert': {
        // (true before R′ runs; the assert's condition where it stands: each assert runs once at most)
        const ok = `ok$rt${names.n++}`
        oks.push(ok)
        out.push({
          kind: 'update',
          op: '^=',
          target: variable(ok, 'bool') as Extract<Expr, { kind: 'var' }>,
          value: { kind: 'unary', op: '!', arg: renamed(s.cond), type: 'bool' },
        })
        break
      }
      case 'alloc': {
        const fresh = `${s.name}$rt${names.n++}`
        const value = renamed(s.value as Expr)
        rename.set(s.name, fresh)
        out.push({ ...s, name: fresh, value })
        break
      }
      case 'dealloc':
        // (its check is the assert before it; the copy needs no deallocation)
        break
      case 'update':
        out.push({ ...s, target: renamed(s.target as Expr) as typeof s.target, value: renamed(s.value) })
        break
      case 'if': {
        const arm = (b: Stmt[]): Stmt[] => {
          const inner: Stmt[] = []
          copyOfR(b, new Map(rename), names, oks, inner)
          return inner
        }
        out.push({ ...s, pre: renamed(s.pre), post: s.post ? renamed(s.post) : null, then: arm(s.then), else: arm(s.else) })
        break
      }
      default:
        throw new Error(`retrace-loops: unexpected statement ${s.kind} in a backward loop`)
    }
  }
}

/** The types of the scalar names a block mentions (from its expressions' annotations). */
function typesOf(body: Stmt[], out: Map<string, string> = new Map()): Map<string, string> {
  rewriteBlock(body, (x) => {
    if (x.kind === 'var' && typeof x.type === 'string') out.set(x.name, x.type)
    return x
  })
  return out
}

/** The rewrite of the forward loop at `i` and the backward loop at `r` of `block`, or undefined. */
function retrace(
  block: Stmt[],
  i: number,
  r: number,
  scope: ReadonlySet<string>,
  names: Names,
  isStandard: (callee: string) => boolean,
): Stmt[] | undefined {
  const L = block[i] as WhileStmt
  const R = block[r] as WhileStmt
  // the forward loop's entry check (p false at s_0) and post-iteration check (p true after each)
  const entry = block[i - 1]
  if (
    entry?.kind !== 'assert' ||
    entry.check !== 'postWhileStart' ||
    entry.cond.kind !== 'unary' ||
    entry.cond.op !== '!' ||
    !sameExpr(entry.cond.arg, L.post)
  )
    return undefined
  const last = L.body[L.body.length - 1]
  if (last?.kind !== 'assert' || last.check !== 'postWhileIteration' || !sameExpr(last.cond, L.post)) return undefined
  if (!totalBlock(R.body, true, isStandard)) return undefined
  // the state: what B and R write, except their own ancillas
  const wb = writtenNames(L.body)
  const wr = writtenNames(R.body)
  if (!wb || !wr) return undefined
  const locals = allocated([...L.body, ...R.body])
  walk([...L.body, ...R.body], (t) => {
    if (t.kind === 'for') locals.add(t.variable)
  })
  const state = [...new Set([...wb, ...wr])].filter((n) => !locals.has(n))
  const types = typesOf([...L.body, ...R.body])
  if (state.length === 0 || state.some((n) => !scope.has(n) || !STATE_TYPES.has(types.get(n) ?? ''))) return undefined
  // B writes whole scalars only (no element, no field, no call but a bijection's, no host effect)
  let plain = true
  walk(L.body, (t) => {
    if (t.kind === 'update' && t.target.kind !== 'var') plain = false
    if (t.kind === 'callstmt' && (t.target !== 'bijection' || t.args.some((a) => a.kind !== 'var' && isView(a))))
      plain = false
    if (t.kind === 'push' || t.kind === 'pop' || t.kind === 'safe') plain = false
  })
  if (!plain) return undefined
  // M: nothing it writes is read or written by B or R, no host effect
  const middle = block.slice(i + 1, r)
  const wm = writtenNames(middle)
  if (!wm) return undefined
  const touched = readsOf([...L.body, ...R.body], new Set(state))
  for (const n of readsOf([{ kind: 'assert', check: 'x', cond: R.pre, args: [] } as AssertStmt])) touched.add(n)
  if ([...wm].some((n) => touched.has(n))) return undefined
  if (middle.some((s) => s.kind === 'safe')) return undefined

  const type = (n: string) => types.get(n) as ScalarTypeName
  const id = names.n++
  const rs = new Map(state.map((n) => [n, `${n}$rs${id}`]))
  const saved = new Map(state.map((n) => [n, `${n}$s${id}`]))
  const copies = new Map(state.map((n) => [n, `${n}$r${id}`]))
  const body: Stmt[] = state.map((n) => alloc(saved.get(n)!, variable(n, type(n)), type(n)))
  body.push(...L.body)
  body.push(...state.map((n) => alloc(copies.get(n)!, variable(n, type(n)), type(n))))
  const rename = new Map(copies)
  const oks: string[] = []
  const copy: Stmt[] = []
  copyOfR(R.body, rename, names, oks, copy)
  body.push(...oks.map((ok) => alloc(ok, { kind: 'bool', value: true, type: 'bool' }, 'bool')), ...copy)
  const tests = [
    ...oks.map((ok) => variable(ok, 'bool')),
    ...state.map((n) => same(rename.get(n)!, saved.get(n)!, type(n))),
  ]
  const verified = tests.reduce((a, b) => and(a, b))
  const resume: Stmt[] = []
  for (const n of state) {
    const t = `${n}$t${id}`
    resume.push(alloc(t, variable(n, type(n)), type(n)), swap(rs.get(n)!, t, type(n)))
  }
  body.push({ kind: 'if', pre: { kind: 'unary', op: '!', arg: verified, type: 'bool' }, post: null, then: resume, else: [] })
  return [
    ...state.map((n) => alloc(rs.get(n)!, variable(n, type(n)), type(n))),
    { ...L, body },
    ...middle,
    ...state.map((n) => swap(n, rs.get(n)!, type(n))),
    R,
  ]
}

/** The forward loop (at or after `from`) and its backward loop in `block`, rewritten; nested blocks on their own. */
function retraceBlock(
  block: Stmt[],
  outer: ReadonlySet<string>,
  names: Names,
  isStandard: (callee: string) => boolean,
): { body: Stmt[]; count: number } {
  let count = 0
  const scope = new Set(outer)
  const out: Stmt[] = []
  for (let i = 0; i < block.length; i++) {
    const s = block[i]!
    if (s.kind === 'alloc') scope.add(s.name)
    if (s.kind === 'while') {
      const r = block.findIndex(
        (t, k) => k > i && t.kind === 'while' && sameExpr(t.pre, s.post) && sameExpr(t.post, s.pre),
      )
      const done = r > i ? retrace(block, i, r, scope, names, isStandard) : undefined
      if (done) {
        out.push(...done)
        // (the statements between were copied with the loops: go on after the backward loop)
        i = r
        count++
        continue
      }
    }
    switch (s.kind) {
      case 'if': {
        const a = retraceBlock(s.then, scope, names, isStandard)
        const b = retraceBlock(s.else, scope, names, isStandard)
        count += a.count + b.count
        out.push(a.count + b.count ? { ...s, then: a.body, else: b.body } : s)
        break
      }
      case 'for':
      case 'while':
      case 'unchecked': {
        const a = retraceBlock(s.body, scope, names, isStandard)
        count += a.count
        out.push(a.count ? ({ ...s, body: a.body } as Stmt) : s)
        break
      }
      default:
        out.push(s)
    }
  }
  return { body: count ? out : block, count }
}

/** {@link retraceBlock} on a function's body. */
export function retraceLoopsFunction(f: FunctionDef, program: Program): FunctionDef {
  const standard = new Map(standardPrimitives.map((p) => [p.name, p]))
  const isStandard = (callee: string) => {
    const spec = standard.get(callee)
    return spec !== undefined && program.registry.findPrimitive(callee) === spec
  }
  const out = retraceBlock(f.body, new Set(), { n: 0 }, isStandard)
  return out.count ? { ...f, body: out.body } : f
}

/**
 * The program and its inverses with the backward loops that retrace a forward loop run only
 * over the steps the forward loop could not verify (only with checks on; see the module comment).
 */
export function retraceLoops(
  program: Program,
  inverses: Map<string, FunctionDef>,
  options: CompileOptions,
): { program: Program; inverses: Map<string, FunctionDef> } {
  if (!options.checks) return { program, inverses }
  return {
    program: {
      ...program,
      functions: new Map([...program.functions].map(([n, d]) => [n, retraceLoopsFunction(d, program)])),
    },
    inverses: new Map([...inverses].map(([n, d]) => [n, retraceLoopsFunction(d, program)])),
  }
}
