/**
 * `sum-bound` (cpu code generator, run-time checks on): the uncompute loop of a scalar sum of
 * non-negative terms is left out where a bound on its round-off proves that the deallocation check
 * after it passes.
 *
 * Shape (a block, as the checks and the bounds versions leave it; `F` and `U` may each be one loop
 * or an `if` of versions of it, see below):
 *
 * ```
 * y <- 0.0                             // an f64 scalar ancilla, exactly +0
 * …                                    // nothing touches y
 * F: for v in a..b { y += e }          // N = b − a terms t₁ … t_N, each ≥ 0 or NaN
 * …                                    // reads of y; nothing writes y, what e or a..b read, an array parameter; no call
 * U: for v in reverse a..b { y -= e }  // the same terms again, in reverse order
 * …                                    // nothing reads y
 * assert dealloc($near(y, 0.0))        // |y| <= tol
 * ```
 *
 * Then `U` becomes `if ($sumBound(y, a, b), ~) { y -= y } else { U }`: the test is
 * `5 · N · u · y <= tol` (u = 2⁻⁵³; N ≤ 2²⁰; tol ≥ 1e-300; y < ∞). Why it proves the check: F and
 * U are, together, the recursive summation of t₁ … t_N, −t_N … −t₁ from +0 (U recomputes each term
 * bit for bit: the same expression of the same values), whose exact sum is 0, so U leaves at most
 * γ₂ₙ₋₁ · 2 Σtⱼ (Higham, Accuracy and Stability of Numerical Algorithms, (4.4); every tⱼ ≥ 0). And
 * y, the sum F computed of terms of one sign, is at least (1 − γₙ₋₁) Σtⱼ. With N ≤ 2²⁰ the residue
 * is below 4.01 · N · u · y, and the test's product rounds by far less than the margin (a
 * tolerance below 1e-300, where the product could underflow, is never tested). A NaN term makes y
 * NaN and an overflow makes it +∞, and neither passes; U then runs as before. Where the test
 * passes, `y -= y` leaves +0 (y is finite), the check passes as it would have, and nothing reads y
 * before it is deallocated. The checks U would make besides — the bounds of the elements `e`
 * reads (U's only asserts), in every version — are those of the same reads in F, which passed.
 *
 * `F` and `U`: a `for` loop of step 1 whose body is asserts and then the one update of `y`
 * (`U`: `outOfBounds` asserts of elements that `e` reads, nothing else), or an `if` both of whose
 * branches are such a statement, possibly after asserts and allocations of scalars (the loop
 * invariants `hoist-invariants` moves out: `v$inv0 <- ms[C − 1]`) and before `@unchecked`
 * deallocations. U's branches, left out with it, allocate only scalars of built-in types whose
 * values call nothing but `len` (they can neither fail nor have an effect) and deallocate only
 * those. The terms are compared symbolically: each such scalar replaced by its value (an
 * allocation's value, nothing between the allocation and the loop writing what it reads, and no
 * code from outside the program running in between: a host call, a plugin's primitive or bijection
 * run as JavaScript, `@safe`, a call of a function that does one, see `runsOutside`) and U's
 * loop variable by F's; every leaf loop of F and of U must give the same range and term. Neither F
 * nor U nor anything between them runs such code. The term
 * `e` is never negative by its form (the squares, `exp`, `abs`, `sqrt` of such, `+`, `*`, `/` of
 * such, non-negative literals: see `nonNegativeTerm`) and calls no host or runtime function.
 *
 * The softmax cross-entropy's log-sum-exp, `s += exp(z[b·C + i] − m)` uncomputed by `~routine`:
 * the uncompute's C calls of `Math.exp` per row are left out wherever the bound holds.
 */
import type { Arg, Expr, Program, Stmt } from '@tenet/ir'
import { callsHost, exprChildren, key, readNames, rewriteExpr, stmtExprs, walk, writtenNames } from '@tenet/ir/backend'

/** The runtime test of a bound left in the program (see the module's comment): `$sumBound(y, a, b)`. */
export const SUM_BOUND = '$sumBound'

/** Most statements from a sum's allocation to its deallocation that the analysis looks at. */
const MAX_SPAN = 256

/** Most terms the bound is tested for (so that 2N·u <= 2⁻³²). */
const MAX_TERMS = 1048576

/** A leaf loop of F or U: its range and its term, each with the scalars replaced by their values. */
interface Leaf {
  loop: Extract<Stmt, { kind: 'for' }>
  start: string
  stop: string
  term: string
  /** The term with the scalars replaced, as an expression (for the names it reads). */
  value: Expr
}

/** `e` with the variables of `env` replaced by their values. */
function substitute(e: Expr, env: ReadonlyMap<string, Expr>): Expr {
  if (env.size === 0) return e
  return rewriteExpr(e, (x) => (x.kind === 'var' && env.has(x.name) ? env.get(x.name)! : x)) as Expr
}

/**
 * Whether \`e\` is NaN, +0, positive or +∞ whatever its operands, by its form: a literal that is;
 * the square \`x * x\` of one name or element; \`x ** n\` for an even literal n; \`+\`, \`*\`, \`/\` of two
 * such values; the standard \`exp\` and \`abs\` of anything, \`sqrt\` of such a value. f64 only.
 */
export function nonNegativeTerm(e: Expr, program: Program): boolean {
  if (e.type !== 'f64') return false
  switch (e.kind) {
    case 'num':
      return !(e.value < 0) && !Object.is(e.value, -0)
    case 'binary': {
      if (e.op === '*' && (e.left.kind === 'var' || e.left.kind === 'index') && key(e.left) === key(e.right))
        return true
      if (e.op === '**') return e.right.kind === 'num' && Number.isInteger(e.right.value) && e.right.value % 2 === 0
      if (e.op === '+' || e.op === '*' || e.op === '/')
        return nonNegativeTerm(e.left, program) && nonNegativeTerm(e.right, program)
      return false
    }
    case 'call': {
      if (e.args.length !== 1 || e.callee.startsWith('$')) return false
      const spec = program.registry.findPrimitive(e.callee)
      const emit = spec?.kind === 'pure' ? spec.emit?.cpu?.('x') : undefined
      if (emit === 'Math.abs(x)' || emit === 'Math.exp(x)') return true
      return emit === 'Math.sqrt(x)' && nonNegativeTerm(e.args[0]!, program)
    }
    default:
      return false
  }
}

/** Whether `e` calls a runtime (`$…`) or host function anywhere. */
function callsOut(e: Expr): boolean {
  if (e.kind === 'call' && e.callee.startsWith('$')) return true
  return callsHost(e) || exprChildren(e).some((c) => callsOut(c as Expr))
}

/**
 * Whether \`e\` runs JavaScript code from outside the program, which may change any array or call
 * anything: a host function (\`$host…\`), or a plugin's pure primitive that has no cpu emitter
 * (called through \`rt.prims\`).
 */
function callsJs(e: Expr | Arg, program: Program): boolean {
  if (e.kind === 'call') {
    if (callsHost(e)) return true
    const spec = program.registry.findPrimitive(e.callee)
    if (spec?.kind === 'pure' && !spec.emit?.cpu) return true
  }
  return exprChildren(e as Expr).some((c) => callsJs(c as Expr, program))
}

/** The functions of each program that may run outside code (see \`runsOutside\`), found once. */
const outsideFunctions = new WeakMap<Program, Map<string, boolean>>()

/**
 * Whether \`s\` (its nested statements included) may run code from outside the program, which may
 * write any array (so that a value read before it is not the value read after it): \`@safe\`, a
 * host or plugin call in any expression it evaluates (asserts' messages included, see
 * \`callsJs\`), a plugin bijection run as JavaScript (no cpu emitter, \`rt.bijections\`), or a call
 * of a function of the program that does any of these (its uncall runs the same calls).
 */
export function runsOutside(s: Stmt, program: Program): boolean {
  let memo = outsideFunctions.get(program)
  if (!memo) outsideFunctions.set(program, (memo = new Map()))
  const fn = (name: string): boolean => {
    const known = memo!.get(name)
    if (known !== undefined) return known
    const f = program.functions.get(name)
    if (!f) return true
    memo!.set(name, false) // (a recursive call: decided by the rest of the body)
    const yes = f.body.some((b) => runsOutside(b, program))
    memo!.set(name, yes)
    return yes
  }
  let yes = false
  walk([s], (x) => {
    if (yes) return
    if (x.kind === 'safe') yes = true
    else if (stmtExprs(x).some((e) => callsJs(e, program))) yes = true
    else if (x.kind === 'assert' && [x.cond, ...x.args].some((a) => typeof a !== 'string' && callsJs(a, program)))
      yes = true
    else if (x.kind === 'callstmt') {
      if (x.target === 'function') yes = fn(x.callee)
      else {
        let spec = program.registry.findPrimitive(x.callee)
        if (spec?.kind === 'bijection' && x.inverse && spec.inverse !== 'self')
          spec = program.registry.findPrimitive(spec.inverse)
        yes = spec?.kind !== 'bijection' || !spec.emit?.cpu
      }
    }
  })
  return yes
}

/**
 * Whether the uncompute side may leave out allocation \`s\` of a version branch, and its value is
 * kept in the table of values: a scalar of a built-in type whose value calls nothing but \`len\`
 * (so that computing it can neither fail nor have an effect, see \`branchLeaves\`).
 */
function quietAlloc(s: Extract<Stmt, { kind: 'alloc' }>): boolean {
  const t = s.type
  if (t?.kind !== 'scalar' || !['f64', 'f32', 'i32', 'bool'].includes(t.name)) return false
  return s.value.kind !== 'emptystack' && !callsAny(s.value as Expr)
}

/** Whether \`e\` calls anything but \`len\` (a primitive, a conversion, the runtime, the host). */
function callsAny(e: Expr): boolean {
  return (e.kind === 'call' && e.callee !== 'len') || exprChildren(e).some((c) => callsAny(c as Expr))
}

/** Whether `name` occurs in `s` at all (read, written, allocated). */
function mentions(s: Stmt, name: string): boolean {
  let found = false
  walk([s], (x) => {
    if ((x.kind === 'alloc' || x.kind === 'dealloc') && x.name === name) found = true
    if (x.kind === 'for' && x.variable === name) found = true
    const exprs: Expr[] = []
    if (x.kind === 'update') exprs.push(x.target as Expr, x.value)
    else if (x.kind === 'assert') exprs.push(x.cond, ...x.args.filter((a): a is Expr => typeof a !== 'string'))
    else if (x.kind === 'alloc' || x.kind === 'dealloc') {
      if (x.value.kind !== 'emptystack') exprs.push(x.value as Expr)
    } else if (x.kind === 'if') exprs.push(x.pre, ...(x.post ? [x.post] : []))
    else if (x.kind === 'for') exprs.push(x.start, x.stop, ...(x.step ? [x.step] : []))
    else if (x.kind !== 'unchecked') found = true // (anything else: assume it does)
    if (exprs.some((e) => readNames(e).has(name))) found = true
  })
  return found
}

/**
 * The leaf loops of `s` as F (`op` '+=') or U ('-='), or undefined where `s` is not of that shape.
 * `env`: the scalars whose values replace them (allocations before `s` still valid).
 */
function leaves(
  s: Stmt,
  y: string,
  op: '+=' | '-=',
  env: ReadonlyMap<string, Expr>,
  program: Program,
): Leaf[] | undefined {
  if (s.kind === 'for') {
    if (s.step !== null && !(s.step.kind === 'num' && s.step.value === 1)) return undefined
    if (s.each || (s.reverse ?? false) !== (op === '-=')) return undefined
    const last = s.body[s.body.length - 1]
    if (last?.kind !== 'update' || last.op !== op || last.target.kind !== 'var' || last.target.name !== y)
      return undefined
    if (last.target.type !== 'f64' || readNames(last.value).has(y)) return undefined
    const inner = new Map(env)
    inner.delete(s.variable)
    const value = substitute(last.value, inner)
    const reads = new Set<string>()
    collectElements(value, reads)
    for (const a of s.body.slice(0, -1)) {
      if (a.kind !== 'assert') return undefined
      // (U: only the bounds checks of the elements its term reads, which F's reads passed)
      if (op === '-=') {
        const c = a.cond
        if (a.check !== 'outOfBounds' || c.kind !== 'call' || c.callee !== '$inrange') return undefined
        const [i, n] = c.args as Expr[]
        if (n?.kind !== 'call' || n.callee !== 'len' || n.args[0]?.kind !== 'var') return undefined
        const arr = (n.args[0] as { name: string }).name
        if (!reads.has(`${arr}[${key(substitute(i!, inner))}]`)) return undefined
      }
    }
    if (!nonNegativeTerm(last.value, program) || callsOut(last.value)) return undefined
    return [
      {
        loop: s,
        start: key(substitute(s.start, env)),
        stop: key(substitute(s.stop, env)) + (s.inclusive ? '=' : ''),
        term: key(value),
        value,
      },
    ]
  }
  if (s.kind === 'if') {
    if (readNames(s.pre).has(y)) return undefined
    const a = branchLeaves(s.then, y, op, env, program)
    const b = a && branchLeaves(s.else, y, op, env, program)
    return a && b ? [...a, ...b] : undefined
  }
  return undefined
}

/** The element reads of `e` (`array[index key]`). */
function collectElements(e: Expr, out: Set<string>): void {
  if (e.kind === 'index') out.add(`${e.array.name}[${key(e.index)}]`)
  for (const c of exprChildren(e)) collectElements(c as Expr, out)
}

/**
 * A branch of a version `if`: asserts and scalar allocations (kept as values where nothing before
 * the leaf statement writes what they read), one leaf statement, then `@unchecked` deallocations.
 * On the uncompute side (`-=`), which may be left out with its allocations, no assert, and only
 * allocations that can neither fail nor have an effect (\`quietAlloc\`), deallocated there.
 */
function branchLeaves(
  body: Stmt[],
  y: string,
  op: '+=' | '-=',
  env: ReadonlyMap<string, Expr>,
  program: Program,
): Leaf[] | undefined {
  const inner = new Map(env)
  const allocated = new Set<string>()
  let k = 0
  for (; k < body.length; k++) {
    const s = body[k]!
    // (code from outside the program may write what the values read: none is kept past it)
    if (runsOutside(s, program)) inner.clear()
    // (asserts of U's versions would be left out with U: none is taken)
    if (s.kind === 'assert' && op === '+=') continue
    if (s.kind === 'alloc' && s.value.kind !== 'emptystack' && s.name !== y && !readNames(s.value as Expr).has(y)) {
      // (U's allocations are left out with it: only those that cannot fail nor call anything)
      if (op === '-=' && !quietAlloc(s)) return undefined
      allocated.add(s.name)
      if (s.type?.kind === 'scalar' && !runsOutside(s, program)) inner.set(s.name, substitute(s.value as Expr, inner))
      else inner.delete(s.name)
      continue
    }
    break
  }
  const leaf = body[k]
  if (!leaf) return undefined
  const leftOut = (d: Stmt) =>
    op === '+=' ||
    (d.kind === 'dealloc' && allocated.has(d.name) && (d.value.kind === 'emptystack' || !callsAny(d.value as Expr)))
  for (const s of body.slice(k + 1))
    if (s.kind !== 'unchecked' || !s.body.every((d) => d.kind === 'dealloc' && d.name !== y && leftOut(d)))
      return undefined
  return leaves(leaf, y, op, inner, program)
}

/**
 * The uncompute statements of `body` (its own, not those of nested blocks) that may be left out
 * where the bound passes, each with the test that replaces them (see the module's comment): the
 * statement to emit instead, an `if` of the test over `y -= y` and the statement itself.
 */
export function sumBounds(body: Stmt[], program: Program, arrayParams: ReadonlySet<string>): Map<Stmt, Stmt> {
  const out = new Map<Stmt, Stmt>()
  // (the deallocations of the block by name, found once: the first after each allocation)
  const deallocs = new Map<string, number[]>()
  body.forEach((s, k) => {
    if (s.kind === 'dealloc') deallocs.set(s.name, [...(deallocs.get(s.name) ?? []), k])
  })
  body.forEach((alloc, c) => {
    if (alloc.kind !== 'alloc' || alloc.value.kind !== 'num' || !Object.is(alloc.value.value, 0)) return
    const y = alloc.name
    if (alloc.type?.kind !== 'scalar' || (alloc.type as { name?: string }).name !== 'f64') return
    // the deallocation check of y, and its deallocation after it
    const d = deallocs.get(y)?.find((k) => k > c) ?? -1
    // (a span of at most MAX_SPAN statements: the analysis below walks it a few times)
    if (d < 0 || d - c > MAX_SPAN) return
    const check = body[d - 1]
    if (
      check?.kind !== 'assert' ||
      check.check !== 'dealloc' ||
      check.cond.kind !== 'call' ||
      check.cond.callee !== '$near' ||
      check.cond.args[0]?.kind !== 'var' ||
      (check.cond.args[0] as { name: string }).name !== y ||
      check.cond.args[1]?.kind !== 'num' ||
      (check.cond.args[1] as { value: number }).value !== 0
    )
      return
    // the statements between that mention y: F, then reads of y, then U
    const touching: number[] = []
    for (let k = c + 1; k < d - 1; k++) if (mentions(body[k]!, y)) touching.push(k)
    // the scalars allocated at this level before a statement, with their values, still valid there
    const envAt = (k: number): Map<string, Expr> => {
      const env = new Map<string, Expr>()
      for (let j = c + 1; j < k; j++) {
        const s = body[j]!
        const w = writtenNames([s])
        // (code from outside the program may write any array: no value read before it is kept)
        if (!w || runsOutside(s, program)) {
          env.clear()
          continue
        }
        for (const [n, v] of [...env]) if (w.has(n) || [...readNames(v)].some((r) => w.has(r))) env.delete(n)
        if (s.kind === 'alloc' && s.value.kind !== 'emptystack' && s.name !== y && s.type?.kind === 'scalar')
          env.set(s.name, s.value as Expr)
      }
      return env
    }
    const fi = touching[0]
    const ui = touching[touching.length - 1]
    if (fi === undefined || ui === undefined || fi === ui) return
    // (F and U call nothing from outside the program: F's terms are read with nothing changing
    // them in between, F's version \`if\` asserts nothing after the sum that could, and U, left
    // out, would have no effect)
    if (runsOutside(body[fi]!, program) || runsOutside(body[ui]!, program)) return
    const F = leaves(body[fi]!, y, '+=', envAt(fi), program)
    const U = F && leaves(body[ui]!, y, '-=', envAt(ui), program)
    if (!F || !U || F.length === 0 || U.length === 0) return
    // U's loop variable named as F's (the terms compared with it renamed)
    const v = F[0]!.loop.variable
    const same = (l: Leaf) => {
      const renamed =
        l.loop.variable === v
          ? l.term
          : key(substitute(l.value, new Map([[l.loop.variable, { kind: 'var', name: v, type: 'i32' } as Expr]])))
      return l.start === F[0]!.start && l.stop === F[0]!.stop && renamed === F[0]!.term
    }
    if (
      !F.every(
        (l) => l.loop.variable === v && l.start === F[0]!.start && l.stop === F[0]!.stop && l.term === F[0]!.term,
      )
    )
      return
    if (!U.every(same)) return
    // between F and U: only reads of y, nothing writing what the terms or the range read, nor an
    // array parameter, nor y; no call (of the program, a bijection or the host) at all
    const reads = new Set<string>()
    readNames(F[0]!.value, reads)
    readNames(substitute(F[0]!.loop.start, envAt(fi)), reads)
    readNames(substitute(F[0]!.loop.stop, envAt(fi)), reads)
    reads.delete(v)
    const between = body.slice(fi + 1, ui)
    const w = writtenNames(between)
    if (!w || w.has(y) || [...reads].some((n) => w.has(n)) || [...arrayParams].some((n) => w.has(n))) return
    let calls = false
    walk([...between, body[ui]!], (s) => {
      if (s.kind !== 'update' && s.kind !== 'assert' && s.kind !== 'alloc' && s.kind !== 'dealloc')
        if (s.kind !== 'if' && s.kind !== 'for' && s.kind !== 'unchecked') calls = true
      const exprs: Expr[] = []
      if (s.kind === 'update') exprs.push(s.value, s.target as Expr)
      else if (s.kind === 'assert') exprs.push(s.cond)
      else if ((s.kind === 'alloc' || s.kind === 'dealloc') && s.value.kind !== 'emptystack')
        exprs.push(s.value as Expr)
      else if (s.kind === 'if') exprs.push(s.pre, ...(s.post ? [s.post] : []))
      else if (s.kind === 'for') exprs.push(s.start, s.stop, ...(s.step ? [s.step] : []))
      if (exprs.some((e) => callsHost(e))) calls = true
    })
    if (calls || between.some((s) => runsOutside(s, program))) return
    // y not written between its allocation and F, nor read between U and its check
    const stmtU = body[ui]!
    if (touching.some((k) => k !== fi && k !== ui && writtenNames([body[k]!])?.has(y) !== false)) return
    const loop = U[0]!.loop
    // (the test reads the range where U starts: not a name that U itself allocates)
    const inner = new Set<string>()
    walk([stmtU], (x) => {
      if (x.kind === 'alloc') inner.add(x.name)
    })
    const range = readNames(loop.start)
    readNames(loop.stop, range)
    if ([...range].some((n) => inner.has(n))) return
    const test: Expr = {
      kind: 'call',
      callee: SUM_BOUND,
      args: [
        { kind: 'var', name: y, type: 'f64' } as Expr,
        loop.start,
        loop.stop,
        { kind: 'num', value: loop.inclusive ? 1 : 0, type: 'i32' } as Expr,
      ],
      type: 'bool',
    } as Expr
    out.set(stmtU, {
      kind: 'if',
      pre: test,
      post: null,
      then: [
        {
          kind: 'update',
          op: '-=',
          target: { kind: 'var', name: y, type: 'f64' },
          value: { kind: 'var', name: y, type: 'f64' },
          loc: stmtU.loc,
        } as Stmt,
      ],
      else: [stmtU],
      loc: stmtU.loc,
    } as Stmt)
  })
  return out
}

/**
 * The JavaScript of the test \`$sumBound(y, a, b, inclusive)\` (see the module's comment): \`y\` the
 * sum, \`a\` and \`b\` the loop's start and stop as i32 values, \`inclusive\` 1 where the loop runs
 * through \`b\` (else 0), \`tolerance\` the module constant.
 */
export function sumBoundTest(y: string, a: string, b: string, inclusive: number, tolerance: string): string {
  // (N as a double: b − a (+ 1) of two i32 values is exact; N <= 0 where the loop runs no term)
  const n = `((+(${b})) - (+(${a}))${inclusive ? ' + 1' : ''})`
  // (\`y <= 2^1023\`, not only finite: no sum of the uncompute can then overflow, as in replay-bound.ts)
  return `(${n} <= ${MAX_TERMS} && ${tolerance} >= 1e-300 && ${y} <= ${2 ** 1023} && 5 * ${n} * ${2 ** -53} * ${y} <= ${tolerance})`
}
