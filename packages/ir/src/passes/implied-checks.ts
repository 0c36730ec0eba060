/**
 * `implied-checks`: with run-time checks on, the deallocation checks of float ancillas that an
 * earlier check of the same block already decided are left out. It runs after `insert-checks` and
 * `hoist-bounds`; the cpu and wasm backends run it, the interpreter (the reference) does not.
 *
 * After pass `finite-uncompute`, the uncompute of a float ancilla computed once from a literal
 * (`y <- 0.0`, `y += e`) is `y -= y`, and its deallocation check (`$near(y, 0.0)`, or `y == 0.0`
 * when exact) tests the value y − y: 0 when y was finite, NaN when it was ±∞ or NaN. So the check
 * passes exactly when y's value was finite. When another such ancilla z was computed from y
 * (`z += e'` with y unchanged since its own update, until its `y -= y`), and e' is ±∞ or NaN
 * whenever y is — y reached through `+`, `-`, `*`, unary minus, the dividend of `/`, the base of
 * `**` with a literal exponent above zero, and the standard `sqrt` and `abs`, each of which gives
 * ±∞ or NaN from an operand that is ±∞ or NaN,
 * rounded to f32 or not — then z finite means y finite. A check of z that passed before y's check
 * (earlier in the same block) therefore decides y's: it passes too, and it is left out (a
 * conjunct of a `deallocArray` check, an array the pass `scalar-arrays` replaced by scalars, is
 * left out of the conjunction; the assert goes when none is left). What z's value implies, the
 * values it was computed from imply in turn (`r ← sqrt(r2)`, `r2 ← dx₀² + dx₁² + dx₂²`: a passed
 * check of r decides those of r2 and of each dxₖ).
 *
 * No check is weakened and no error changes: a check left out is one that cannot fail where it
 * stands, every other check stays where it was, in the same order, with the same condition and
 * message, and nothing else changes. The n-body acceleration of the leapfrog checks the
 * separation, its squared length and the length of every pair of bodies twice per step (compute
 * and uncompute); only the checks of the length and of the force factor are left.
 *
 * A loop's exit decides a check too: `while (c, p) { … }` ends only where c is false, so a check
 * `!c` after it (the entry check of the same loop run backwards, `while (p, c)`, that a routine's
 * uncompute `~routine` places there: `postWhileStart`) passes while nothing writes a name c reads
 * — c reads only scalars, through arithmetic, comparisons and the standard primitives (no array
 * element, no host call), and the loop's body has no `if` that leaves it early (`exits`) — and it
 * is left out. Between the two, updates of other names, asserts, and allocations and deallocations
 * of other names may stand (the Bessel listing's `out += identity(out_anc)`); anything else ends
 * the fact. (On the Bessel series' forward loop alone, single z on cpu, the check cost about 8 of
 * 45 ns; in the whole function, uncompute included, the gain was within a loaded machine's noise.)
 *
 * What the pass tracks, per block (a straight line of statements; nested blocks on their own):
 * each float scalar allocated in the block from a finite literal goes from "allocated" to
 * "computed" (its first update, `+=` or `-=`, and any further `+=` or `-=` of a value that does
 * not read it, as pass `zero-sums` splits a first update: y ± e is ±∞ or NaN where y or e is), to
 * "spent" (`y -= y`); any other write of it (an update, a call argument, a nested statement that
 * writes it, a host effect) forgets it. The
 * facts are "the computed value of y is finite", recorded when a check that passed tested y, or
 * when a value known finite was computed from y as above; a fact about y holds while y is still
 * its computed value or spent from it.
 */
import type { AssertStmt, Expr, FunctionDef, Stmt } from '../ast.js'
import { readNames, rootName, walk } from '../check.js'
import type { CompileOptions, Program } from '../plugin.js'
import { standardPrimitives } from '../stdlib/index.js'
import { writtenNames } from './hoist-invariants.js'

/** The state of a tracked float ancilla of a block (see the module comment). */
interface Tracked {
  state: 'allocated' | 'computed' | 'spent'
  /** Changes whenever the ancilla is forgotten or allocated again: facts name the version they are about. */
  version: number
  /** Set when computed: the names (and their versions) its value is ±∞ or NaN with (see `strictReads`). */
  from?: Array<[string, number]>
}

/** The standard primitives that give ±∞ or NaN from an argument that is ±∞ or NaN. */
const STRICT_CALLS = new Set(['sqrt', 'abs'])

/** A literal's value as an expression of type f32 (either the operation's or the literal's) evaluates it. */
function literalAsEvaluated(value: number, ...at: Expr[]): number {
  return at.some((x) => x.type === 'f32') ? Math.fround(value) : value
}

/**
 * The names read by `e` in positions where a value ±∞ or NaN makes `e` ±∞ or NaN: through `+`,
 * `-`, `*`, unary minus, the dividend of `/`, the base of `**` with a literal exponent above zero,
 * and the standard `sqrt` and `abs` (`isStandard`).
 */
export function strictReads(
  e: Expr,
  isStandard: (callee: string) => boolean,
  out: Set<string> = new Set(),
): Set<string> {
  switch (e.kind) {
    case 'var':
      out.add(e.name)
      break
    case 'unary':
      if (e.op === '-') strictReads(e.arg, isStandard, out)
      break
    case 'binary':
      if (e.type !== 'f64' && e.type !== 'f32') break
      if (e.op === '+' || e.op === '-' || e.op === '*') {
        strictReads(e.left, isStandard, out)
        strictReads(e.right, isStandard, out)
      } else if (e.op === '/') strictReads(e.left, isStandard, out)
      // x ** c for a literal c > 0: ±∞ ** c is ±∞ or +∞, NaN ** c is NaN (c = 0 or c < 0 are not
      // strict: ∞ ** 0 = 1, ∞ ** −1 = 0); c as its type rounds it (an f32 1e-50 is 0)
      else if (e.op === '**' && e.right.kind === 'num' && literalAsEvaluated(e.right.value, e, e.right) > 0)
        strictReads(e.left, isStandard, out)
      break
    case 'call':
      if (
        STRICT_CALLS.has(e.callee) &&
        e.args.length === 1 &&
        (e.type === 'f64' || e.type === 'f32') &&
        e.args[0]!.type === e.type &&
        isStandard(e.callee)
      )
        strictReads(e.args[0]!, isStandard, out)
      break
  }
  return out
}

/** The scalar tested by a deallocation conjunct `$near(y, 0)` or `y == 0` (a number literal zero), else undefined. */
function testedScalar(e: Expr): string | undefined {
  const zero = (z: Expr) => z.kind === 'num' && z.value === 0
  if (e.kind === 'call' && e.callee === '$near' && e.args.length === 2 && e.args[0]!.kind === 'var' && zero(e.args[1]!))
    return e.args[0]!.name
  if (e.kind === 'binary' && e.op === '==' && e.left.kind === 'var' && zero(e.right)) return e.left.name
  return undefined
}

/** The conjuncts of `a && b && …`. */
function conjuncts(e: Expr, out: Expr[] = []): Expr[] {
  if (e.kind === 'binary' && e.op === '&&') {
    conjuncts(e.left, out)
    conjuncts(e.right, out)
  } else out.push(e)
  return out
}

const isFloat = (t: unknown) =>
  typeof t === 'object' && t !== null && (t as { kind?: string }).kind === 'scalar'
    ? ['f64', 'f32'].includes((t as { name: string }).name)
    : false

/**
 * The names `e` reads, where it reads only scalars through arithmetic, comparisons, conversions and
 * the standard primitives (`isStandard`); undefined where it reads anything else (an element, a
 * field, a host function): such a condition is not tracked (see the module comment).
 */
function scalarReads(
  e: Expr,
  isStandard: (callee: string) => boolean,
  out: Set<string> = new Set(),
): Set<string> | undefined {
  switch (e.kind) {
    case 'num':
    case 'bool':
      return out
    case 'var':
      if (typeof e.type === 'object' && e.type.kind !== 'scalar') return undefined
      out.add(e.name)
      return out
    case 'unary':
      return scalarReads(e.arg, isStandard, out)
    case 'binary':
      return scalarReads(e.left, isStandard, out) && scalarReads(e.right, isStandard, out)
    case 'call':
      if (!isStandard(e.callee) && !CONVERSIONS.has(e.callee)) return undefined
      for (const a of e.args) if (!scalarReads(a, isStandard, out)) return undefined
      return out
    default:
      return undefined
  }
}

/** The scalar conversions a condition may apply (`f64(k)`): pure, exact or rounded alike each time. */
const CONVERSIONS = new Set(['f64', 'f32', 'i32'])

/** Whether `a` and `b` are the same expression (the same operations on the same names and literals). */
export function sameExpr(a: Expr, b: Expr): boolean {
  switch (a.kind) {
    case 'num':
      return b.kind === 'num' && Object.is(a.value, b.value) && a.type === b.type && a.isFloat === b.isFloat
    case 'bool':
      return b.kind === 'bool' && a.value === b.value
    case 'var':
      return b.kind === 'var' && a.name === b.name
    case 'unary':
      return b.kind === 'unary' && a.op === b.op && a.type === b.type && sameExpr(a.arg, b.arg)
    case 'binary':
      return (
        b.kind === 'binary' &&
        a.op === b.op &&
        a.type === b.type &&
        sameExpr(a.left, b.left) &&
        sameExpr(a.right, b.right)
      )
    case 'call':
      return (
        b.kind === 'call' &&
        a.callee === b.callee &&
        a.type === b.type &&
        a.args.length === b.args.length &&
        a.args.every((x, i) => sameExpr(x, b.args[i]!))
      )
    default:
      return false
  }
}

/** `!c`, as `insert-checks` writes the entry check of a loop whose condition run backwards is c. */
const negation = (c: Expr): Expr =>
  c.kind === 'unary' && c.op === '!' ? c.arg : { kind: 'unary', op: '!', arg: c, type: 'bool' }

/** Whether `body` has an `if` that leaves its loop early (`exits`, pass `unroll-swaps`). */
function leavesEarly(body: Stmt[]): boolean {
  let found = false
  walk(body, (s) => {
    if (s.kind === 'if' && s.exits) found = true
  })
  return found
}

/** A block without the deallocation checks that earlier checks of it decided (see the module comment), and how many conjuncts went. */
export function impliedChecksBlock(
  body: Stmt[],
  isStandard: (callee: string) => boolean,
): { body: Stmt[]; removed: number } {
  let removed = 0
  const tracked = new Map<string, Tracked>()
  /** name → version of its computed value known finite */
  const finite = new Map<string, number>()
  let versions = 0
  const forget = (n: string) => {
    const t = tracked.get(n)
    if (t) {
      tracked.delete(n)
      finite.delete(n)
    }
  }
  const known = (n: string) => {
    const t = tracked.get(n)
    return t !== undefined && t.state === 'spent' && finite.get(n) === t.version
  }
  // y's computed value is finite: so are those of the values it was computed from (still the same)
  const learn = (n: string, version: number) => {
    const t = tracked.get(n)
    if (!t || t.version !== version || t.state === 'allocated' || finite.get(n) === version) return
    finite.set(n, version)
    for (const [w, v] of t.from ?? []) learn(w, v)
  }
  /** the condition of the loop last left and the names it reads, while none of them was written since */
  let exited: { cond: Expr; reads: Set<string> } | undefined
  const out: Stmt[] = []
  for (const s of body) {
    // (a loop's exit condition holds until a name it reads is written: see the module comment)
    if (exited) {
      const reads = exited.reads
      const written =
        s.kind === 'assert'
          ? undefined
          : s.kind === 'update'
            ? rootName(s.target)
            : s.kind === 'alloc' || s.kind === 'dealloc'
              ? s.name
              : ''
      if (written === '' || (written !== undefined && reads.has(written))) exited = undefined
    }
    if (s.kind === 'assert' && exited && sameExpr(s.cond, negation(exited.cond))) {
      removed++
      continue
    }
    switch (s.kind) {
      case 'alloc': {
        forget(s.name)
        const v = s.value
        if (isFloat(s.type ?? s.declared) && v.kind === 'num' && Number.isFinite(v.value))
          tracked.set(s.name, { state: 'allocated', version: ++versions })
        out.push(s)
        continue
      }
      case 'dealloc':
        forget(s.name)
        out.push(s)
        continue
      case 'update': {
        const t = s.target.kind === 'var' ? tracked.get(s.target.name) : undefined
        if (t && s.target.kind === 'var') {
          const name = s.target.name
          if (t.state === 'allocated' && (s.op === '+=' || s.op === '-=')) {
            t.state = 'computed'
            t.from = [...strictReads(s.value, isStandard)]
              .filter((w) => tracked.get(w)?.state === 'computed')
              .map((w) => [w, tracked.get(w)!.version] as [string, number])
          } else if (t.state === 'computed' && s.op === '-=' && s.value.kind === 'var' && s.value.name === name) {
            t.state = 'spent'
          } else if (
            t.state === 'computed' &&
            (s.op === '+=' || s.op === '-=') &&
            finite.get(name) !== t.version &&
            !readNames(s.value).has(name)
          ) {
            // (a first update that pass \`zero-sums\` split: y ± e is ±∞ or NaN where y or e is, so
            // y stays computed, from what e reads too; a new version, so that what was computed
            // from the value it had, before this update, decides nothing about it)
            t.version = ++versions
            for (const w of strictReads(s.value, isStandard))
              if (tracked.get(w)?.state === 'computed') t.from!.push([w, tracked.get(w)!.version])
          } else forget(name)
        } else if (s.target.kind !== 'var') {
          // (an element update writes an array; a view of a scalar, \`-y\` or \`y.re\`, writes y)
          const r = rootName(s.target)
          if (r !== undefined) forget(r)
        }
        out.push(s)
        continue
      }
      case 'assert': {
        const parts = conjuncts(s.cond)
        const tested = parts.map(testedScalar)
        const kept = parts.filter((_, k) => !(tested[k] !== undefined && known(tested[k]!)))
        // it passed: the values its conjuncts tested (spent from their computed values) were finite
        for (const n of tested)
          if (n !== undefined && tracked.get(n)?.state === 'spent') learn(n, tracked.get(n)!.version)
        removed += parts.length - kept.length
        if (kept.length === 0) continue
        if (kept.length === parts.length) {
          out.push(s)
          continue
        }
        const cond = kept.reduce(
          (l, r) => ({ kind: 'binary', op: '&&', left: l, right: r, type: 'bool', loc: s.cond.loc }) as Expr,
        )
        out.push({ ...s, cond } as AssertStmt)
        continue
      }
      default: {
        // nested blocks on their own; what the statement writes is forgotten here
        const inner = nested(s, isStandard)
        removed += inner.removed
        const written = writtenNames([s])
        if (written === undefined) for (const n of [...tracked.keys()]) forget(n)
        else for (const n of written) forget(n)
        out.push(inner.stmt)
        if (s.kind === 'while' && !leavesEarly(s.body)) {
          const reads = scalarReads(s.pre, isStandard)
          if (reads) exited = { cond: s.pre, reads }
        }
      }
    }
  }
  return { body: removed ? out : body, removed }
}

function nested(s: Stmt, isStandard: (callee: string) => boolean): { stmt: Stmt; removed: number } {
  switch (s.kind) {
    case 'if': {
      const a = impliedChecksBlock(s.then, isStandard)
      const b = impliedChecksBlock(s.else, isStandard)
      return { stmt: a.removed + b.removed ? { ...s, then: a.body, else: b.body } : s, removed: a.removed + b.removed }
    }
    case 'for':
    case 'while':
    case 'unchecked': {
      const a = impliedChecksBlock(s.body, isStandard)
      return { stmt: a.removed ? ({ ...s, body: a.body } as Stmt) : s, removed: a.removed }
    }
    default:
      return { stmt: s, removed: 0 }
  }
}

/** {@link impliedChecksBlock} on a function's body. */
export function impliedChecksFunction(f: FunctionDef, program: Program): FunctionDef {
  const standard = new Map(standardPrimitives.map((p) => [p.name, p]))
  const isStandard = (callee: string) => {
    const spec = standard.get(callee)
    return spec !== undefined && program.registry.findPrimitive(callee) === spec
  }
  const out = impliedChecksBlock(f.body, isStandard)
  return out.removed ? { ...f, body: out.body } : f
}

/**
 * The program and its inverses without the deallocation checks that earlier checks decided (only
 * with checks on: there are none otherwise; see the module comment).
 */
export function impliedChecks(
  program: Program,
  inverses: Map<string, FunctionDef>,
  options: CompileOptions,
): { program: Program; inverses: Map<string, FunctionDef> } {
  if (!options.checks) return { program, inverses }
  return {
    program: {
      ...program,
      functions: new Map([...program.functions].map(([n, d]) => [n, impliedChecksFunction(d, program)])),
    },
    inverses: new Map([...inverses].map(([n, d]) => [n, impliedChecksFunction(d, program)])),
  }
}
