/**
 * `proven-bounds`: with run-time checks on, the bounds asserts (`outOfBounds`) and alias asserts
 * (`alias`) that cannot fail are left out: a bounds check whose index provably lies in the array's
 * range, by the loop ranges around it and the lengths of the arrays; an alias check `i != j` whose
 * indices provably differ. It runs after `insert-checks` and before `hoist-bounds`; the cpu backend
 * runs it, the wasm backend its alias proofs only (with the bounds proofs, Horner's checked loop ran
 * about 13% slower there, for a reason not yet found), the interpreter (the reference) neither.
 *
 * What it proves: `$inrange(e, len(a))` (alone, or as the right of `!guard || …`) where
 * - `e` is linear in the loop variables of the enclosing `for` loops of step 1 or −1 (coefficients
 *   integer literals) and in one atom X, an i32 value the function never changes: `len(b)` of a
 *   parameter array `b` the function never allocates or deallocates, or an i32 parameter the
 *   function never writes;
 * - `len(a)` is such a form too: `a` a parameter array of fixed length (`len(a)` itself), or an
 *   ancilla `a <- zeros(n)` allocated before in the same block or an enclosing one, with `n` a
 *   form over X computed exactly (see below) and `a` not deallocated, nor allocated or deallocated
 *   in a loop or branch between there and the assert;
 * - the smallest value of `e` over the loops' ranges is ≥ 0 and its largest ≤ len(a) − 1, for
 *   every value of X the facts allow: X ≥ 0 (a length, or a parameter that is the length of a live
 *   ancilla: its allocation succeeded), and lo ≤ hi for every enclosing loop whose visited range
 *   [lo, hi] is a form of X alone (the body runs only if the loop does).
 * A loop `for v in s..t` visits [s, t − 1] (`..=`: [s, t]); `by -1` visits [t + 1, s] (`..=`:
 * [t, s]); `reverse` the same values. The ends `s` and `t` and the length `n` are i32 values the
 * program computes; they are used as exact integers only where their exact value provably lies in
 * i32 (X in [0, 2³¹ − 1] for a length or a nonnegative parameter, [−2³¹, 2³¹ − 1] otherwise), so
 * that i32 arithmetic (modulo 2³²) gives that very value. The index itself needs no such bound:
 * its exact value is proven in [0, len(a)), so its i32 value is that value. (A length lies in
 * [0, 2³¹ − 1] because the host boundary refuses longer arrays, `call/length`; through the
 * unchecked `.core` entry that is the caller's promise, as the aliasing rule is.)
 *
 * Alias checks: `i != j` (two indices of one array, an update reading the element it writes) where
 * i − j, products of symbols cancelled as i32 arithmetic (modulo 2³²) cancels them, is a constant
 * k ≠ 0, or ±X + k for one atom X and no loop variable: the i32 indices are equal exactly when
 * i − j ≡ 0 modulo 2³², that is never, or only at X = x₀ = ∓k; the check is left out when X ≥ 0
 * is known and x₀ < 0, or when at X = x₀ an enclosing loop whose ends are forms of X alone runs no
 * iteration (its ends evaluated at x₀ as the program computes them, wrapping included). A heat
 * stencil's `u[(t + 1) * n + i] += u[t * n + i] + r * (u[t * n + i - 1] - … + u[t * n + i + 1])`
 * over `for i in 1..n - 1`: i − j is n, n + 1 and n − 1, and 1..n − 1 runs no iteration at n = 0,
 * −1 or 1: its four checks per element are left out.
 *
 * No check is weakened and no error changes: an assert left out is one that cannot fail where it
 * stands; every other assert stays, in the same order, with the same condition and message. The
 * accesses keep their `inBounds` mark (the assert before them proved them before; now the ranges
 * do). Horner's `acc[k] += acc[k + 1] * x + c[k]` over `for k in len(c) - 2..=0 by -1` with
 * `acc <- zeros(len(c))`, a softmax's `ms[i] += max(ms[i - 1], …)` over `for i in 1..C` with
 * `ms <- zeros(C)`: every check of `acc`, `c` and `ms` there is left out.
 */
import type { AssertStmt, Expr, FunctionDef, Stmt } from '../ast.js'
import { walk } from '../check.js'
import type { CompileOptions, Program } from '../plugin.js'
import { writtenNames } from './hoist-invariants.js'
import { effectfulFunctions } from './dead-ancillas.js'

/** A linear form: a coefficient per symbol (`v:` loop variable, `len:` or `var:` atom) and a constant. */
interface Form {
  terms: Map<string, number>
  k: number
}

/** A loop's start and stop as forms (as the program computes them, modulo 2³²), its step ±1. */
interface Ends {
  start: Form
  stop: Form
  step: 1 | -1
  inclusive: boolean
}

/** What the pass knows at a statement. */
interface Scope {
  /** Parameter arrays of fixed length. */
  fixed: ReadonlySet<string>
  /** i32 parameters the function never writes. */
  constants: ReadonlySet<string>
  /** Loop variables in scope: their visited range [lo, hi] (forms, where exact), innermost last. */
  loops: Array<{ name: string; lo?: Form; hi?: Form; ends?: Ends }>
  /** Ancillas of known length: name → the form of the length. */
  lengths: Map<string, Form>
  /** Which checks to prove: the bounds checks too, or the alias checks only. */
  bounds: boolean
}

const I32_MIN = -(2 ** 31)
const I32_MAX = 2 ** 31 - 1
/** The largest |coefficient| or |constant| a form keeps (larger: not a form). */
const MAX_LITERAL = 2 ** 20

const constant = (k: number): Form => ({ terms: new Map(), k })
const single = (symbol: string): Form => ({ terms: new Map([[symbol, 1]]), k: 0 })

function add(a: Form, b: Form, sign = 1): Form {
  const terms = new Map(a.terms)
  for (const [s, c] of b.terms) {
    const v = (terms.get(s) ?? 0) + sign * c
    if (v === 0) terms.delete(s)
    else terms.set(s, v)
  }
  return { terms, k: a.k + sign * b.k }
}

function scale(a: Form, c: number): Form {
  if (c === 0) return constant(0)
  return { terms: new Map([...a.terms].map(([s, x]) => [s, x * c])), k: a.k * c }
}

/** A monomial: symbols joined by `*`, sorted (a symbol alone is a monomial of one). */
const monomial = (a: string, b: string): string => [...a.split('*'), ...b.split('*')].sort().join('*')

/** `a · b`, a product of two symbols a monomial of its own (see {@link nonlinear}). */
function multiply(a: Form, b: Form): Form {
  let out = scale(a, b.k)
  for (const [s, c] of b.terms) {
    out = add(out, { terms: new Map([...a.terms].map(([t, x]) => [monomial(t, s), x * c])), k: 0 })
    out = add(out, scale(single(s), a.k * c))
  }
  return out
}

/** Whether a form has a product of symbols (the bounds proofs take linear forms only; a difference may cancel them). */
const nonlinear = (f: Form): boolean => [...f.terms.keys()].some((s) => s.includes('*'))

const bounded = (f: Form): boolean =>
  Math.abs(f.k) <= MAX_LITERAL && [...f.terms.values()].every((c) => Math.abs(c) <= MAX_LITERAL)

/** `e` as a form over the loop variables in scope and the atoms, if it is one. */
function form(e: Expr, scope: Scope): Form | undefined {
  let out: Form | undefined
  switch (e.kind) {
    case 'num':
      out = e.isFloat || !Number.isInteger(e.value) ? undefined : constant(e.value)
      break
    case 'var':
      if (e.type !== 'i32') return undefined
      if (scope.loops.some((l) => l.name === e.name)) out = single(`v:${e.name}`)
      else if (scope.constants.has(e.name)) out = single(`var:${e.name}`)
      break
    case 'call':
      if (e.callee === 'len' && e.args.length === 1 && e.args[0]!.kind === 'var' && scope.fixed.has(e.args[0]!.name))
        out = single(`len:${e.args[0]!.name}`)
      break
    case 'unary':
      if (e.op === '-' && e.type === 'i32') {
        const a = form(e.arg, scope)
        out = a && scale(a, -1)
      }
      break
    case 'binary': {
      if (e.type !== 'i32' || (e.op !== '+' && e.op !== '-' && e.op !== '*')) return undefined
      const l = form(e.left, scope)
      const r = form(e.right, scope)
      if (!l || !r) return undefined
      out = e.op === '*' ? multiply(l, r) : add(l, r, e.op === '+' ? 1 : -1)
      break
    }
  }
  return out && bounded(out) ? out : undefined
}

/** The one atom a form without loop variables reads (`null`: none; `undefined`: several, or a loop variable). */
function atomOf(f: Form): string | null | undefined {
  let atom: string | null = null
  for (const s of f.terms.keys()) {
    if (s.startsWith('v:') || s.includes('*') || (atom !== null && atom !== s)) return undefined
    atom = s
  }
  return atom
}

/** Whether atom `a` is known ≥ 0 in `scope`: a length, or a parameter that is the length of a live ancilla. */
function nonnegative(a: string, scope: Scope): boolean {
  if (a.startsWith('len:')) return true
  return [...scope.lengths.values()].some((n) => n.k === 0 && n.terms.size === 1 && n.terms.get(a) === 1)
}

/** The bounds the facts give atom `a`. */
function atomBounds(a: string, scope: Scope): { min: number; max: number } {
  let min = nonnegative(a, scope) ? 0 : I32_MIN
  let max = I32_MAX
  for (const l of scope.loops) {
    // the loop's body runs: lo ≤ hi, that is (hi − lo) = d·a + m ≥ 0
    if (!l.lo || !l.hi) continue
    const diff = add(l.hi, l.lo, -1)
    if (atomOf(diff) !== a) continue
    const d = diff.terms.get(a)!
    if (d > 0) min = Math.max(min, Math.ceil(-diff.k / d))
    else max = Math.min(max, Math.floor(diff.k / -d))
  }
  return { min, max }
}

/** Whether `f` (a form over at most one atom, no loop variables) is ≥ 0 whatever the atom's value the facts allow. */
function provedNonnegative(f: Form, scope: Scope): boolean {
  const atom = atomOf(f)
  if (atom === undefined) return false
  if (atom === null) return f.k >= 0
  const d = f.terms.get(atom)!
  const { min, max } = atomBounds(atom, scope)
  return d > 0 ? d * min + f.k >= 0 : d * max + f.k >= 0
}

/** Whether the exact value of `f` lies in i32 (so that the i32 value the program computes is that value). */
function exact(f: Form, scope: Scope): boolean {
  const atom = atomOf(f)
  if (atom === undefined) return false
  if (atom === null) return f.k >= I32_MIN && f.k <= I32_MAX
  const d = f.terms.get(atom)!
  const { min, max } = atomBounds(atom, scope)
  const ends = [d * min + f.k, d * max + f.k]
  return Math.min(...ends) >= I32_MIN && Math.max(...ends) <= I32_MAX
}

/** The least (`low`) or greatest value of `f` over the loops' ranges: a form without loop variables, if one. */
function extreme(f: Form, scope: Scope, low: boolean): Form | undefined {
  if (nonlinear(f)) return undefined
  let out = f
  for (let i = scope.loops.length - 1; i >= 0; i--) {
    const l = scope.loops[i]!
    const c = out.terms.get(`v:${l.name}`)
    if (!c) continue
    if (!l.lo || !l.hi) return undefined
    const rest = add(out, scale(single(`v:${l.name}`), c), -1)
    out = add(rest, scale(c > 0 === low ? l.lo : l.hi, c))
  }
  return [...out.terms.keys()].some((s) => s.startsWith('v:')) ? undefined : out
}

/** The form of `len(a)`, if known. */
function lengthOf(a: string, scope: Scope): Form | undefined {
  return scope.fixed.has(a) ? single(`len:${a}`) : scope.lengths.get(a)
}

/** The i32 value of a form of at most atom \`a\` at a = x (the program's arithmetic, modulo 2³²). */
function valueAt(f: Form, a: string | null, x: number): number | undefined {
  const atom = atomOf(f)
  if (atom === undefined || (atom !== null && atom !== a)) return undefined
  return Number((BigInt(f.k) + (atom === null ? 0n : BigInt(f.terms.get(atom)!) * BigInt(x))) % 2n ** 32n) | 0
}

/** Whether, at a = x, some enclosing loop whose ends are forms of \`a\` alone runs no iteration. */
function unreachedAt(a: string | null, x: number, scope: Scope): boolean {
  return scope.loops.some(({ ends }) => {
    if (!ends) return false
    const start = valueAt(ends.start, a, x)
    const stop = valueAt(ends.stop, a, x)
    if (start === undefined || stop === undefined) return false
    if (ends.step === 1) return ends.inclusive ? start > stop : start >= stop
    return ends.inclusive ? start < stop : start <= stop
  })
}

/**
 * Whether the assert is an alias check \`i != j\` that cannot fail. i − j, as forms (products of
 * symbols cancelled, as i32 arithmetic modulo 2³² cancels them), is a constant k or ±X + k for
 * one atom X, no loop variable: i32 \`i\` and \`j\` are equal exactly when i − j ≡ 0 modulo 2³²,
 * that is never (k ≠ 0, |k| ≤ 2²⁰) or only at X = x₀ = ∓k. The check cannot fail when X ≥ 0 is
 * known and x₀ < 0, or when at X = x₀ an enclosing loop whose ends are forms of X runs no
 * iteration (its ends evaluated as the program computes them, wrapping included).
 */
function distinctProven(s: AssertStmt, scope: Scope): boolean {
  const c = s.cond
  if (c.kind !== 'binary' || c.op !== '!=') return false
  const i = form(c.left, scope)
  const j = form(c.right, scope)
  if (!i || !j) return false
  const d = add(i, j, -1)
  const atom = atomOf(d)
  if (atom === undefined || Math.abs(d.k) > MAX_LITERAL) return false
  if (atom === null) return d.k !== 0
  const coefficient = d.terms.get(atom)!
  if (Math.abs(coefficient) !== 1) return false
  const x0 = -d.k * coefficient
  return (x0 < 0 && nonnegative(atom, scope)) || unreachedAt(atom, x0, scope)
}

/** Whether the assert is a bounds or alias check that cannot fail (see the module comment). */
function proven(s: AssertStmt, scope: Scope): boolean {
  if (s.check === 'alias') return distinctProven(s, scope)
  if (s.check !== 'outOfBounds' || !scope.bounds) return false
  let c = s.cond
  if (c.kind === 'binary' && c.op === '||') c = c.right
  if (c.kind !== 'call' || c.callee !== '$inrange' || c.args.length !== 2) return false
  const n = c.args[1]!
  if (n.kind !== 'call' || n.callee !== 'len' || n.args[0]?.kind !== 'var') return false
  const length = lengthOf(n.args[0].name, scope)
  const index = form(c.args[0]!, scope)
  if (!length || !index) return false
  const lo = extreme(index, scope, true)
  const hi = extreme(index, scope, false)
  return (
    lo !== undefined &&
    hi !== undefined &&
    provedNonnegative(lo, scope) &&
    provedNonnegative(add(add(length, constant(-1)), hi, -1), scope)
  )
}

/** A loop's ends as forms, if its step is 1 or −1 and they are forms. */
function ends(s: Extract<Stmt, { kind: 'for' }>, scope: Scope): { ends: Ends } | undefined {
  const st = s.step
  const step =
    st === null
      ? 1
      : st.kind === 'num'
        ? st.value
        : st.kind === 'unary' && st.op === '-' && st.arg.kind === 'num'
          ? -st.arg.value
          : undefined
  if (step !== 1 && step !== -1) return undefined
  const start = form(s.start, scope)
  const stop = form(s.stop, scope)
  return start && stop ? { ends: { start, stop, step, inclusive: s.inclusive } } : undefined
}

/** The visited range of a loop of step 1 or −1 whose ends are exact forms, if it is one. */
function visited(s: Extract<Stmt, { kind: 'for' }>, scope: Scope): { lo: Form; hi: Form } | undefined {
  const e = ends(s, scope)?.ends
  if (!e || !exact(e.start, scope) || !exact(e.stop, scope)) return undefined
  const { start: a, stop: b } = e
  if (e.step === 1) return { lo: a, hi: s.inclusive ? b : add(b, constant(-1)) }
  return { lo: s.inclusive ? b : add(b, constant(1)), hi: a }
}

/** The arrays a statement list allocates or deallocates (at any depth). */
function reallocated(body: Stmt[]): Set<string> {
  const out = new Set<string>()
  walk(body, (x) => {
    if (x.kind === 'alloc' || x.kind === 'dealloc') out.add(x.name)
  })
  return out
}

function forget(lengths: Map<string, Form>, names: Set<string>): Map<string, Form> {
  const out = new Map(lengths)
  for (const n of names) out.delete(n)
  return out
}

function block(body: Stmt[], outer: Scope): Stmt[] {
  const scope: Scope = { ...outer, lengths: new Map(outer.lengths) }
  const out: Stmt[] = []
  for (const s of body) {
    switch (s.kind) {
      case 'assert':
        if (!proven(s, scope)) out.push(s)
        break
      case 'alloc': {
        scope.lengths.delete(s.name)
        const v = s.value
        if (s.type?.kind === 'array' && v.kind === 'call' && v.callee === 'zeros' && v.args.length === 1) {
          const n = form(v.args[0]!, scope)
          if (n && atomOf(n) !== undefined && exact(n, scope)) scope.lengths.set(s.name, n)
        }
        out.push(s)
        break
      }
      case 'dealloc':
        scope.lengths.delete(s.name)
        out.push(s)
        break
      case 'for': {
        const lengths = forget(scope.lengths, reallocated(s.body))
        const range = visited(s, scope)
        const loops = scope.loops.filter((l) => l.name !== s.variable)
        loops.push({ name: s.variable, ...range, ...ends(s, scope) })
        // (the loop variable shadows a constant of the same name, if any)
        const constants = new Set(scope.constants)
        constants.delete(s.variable)
        out.push({ ...s, body: block(s.body, { ...scope, loops, lengths, constants }) })
        scope.lengths = forget(scope.lengths, reallocated(s.body))
        break
      }
      case 'while': {
        const lengths = forget(scope.lengths, reallocated(s.body))
        out.push({ ...s, body: block(s.body, { ...scope, lengths }) })
        scope.lengths = lengths
        break
      }
      case 'if': {
        const changed = reallocated([...s.then, ...s.else])
        out.push({ ...s, then: block(s.then, scope), else: block(s.else, scope) })
        scope.lengths = forget(scope.lengths, changed)
        break
      }
      default:
        // (\`@unchecked\` holds no assert; any other block: what it reallocates is forgotten)
        scope.lengths = forget(scope.lengths, reallocated([s]))
        out.push(s)
    }
  }
  return out
}

/**
 * One function with the bounds and alias asserts that cannot fail left out (see the module
 * comment); the alias asserts only when \`bounds\` is false.
 */
export function provenBoundsFunction(f: FunctionDef, program: Program, bounds = true): FunctionDef {
  const changed = reallocated(f.body)
  const fixed = new Set(f.params.filter((p) => p.type.kind === 'array' && !changed.has(p.name)).map((p) => p.name))
  const written = writtenNames(f.body, effectfulFunctions(program.functions.values()), program.writes)
  const constants = new Set(
    written === undefined
      ? []
      : f.params
          .filter((p) => p.type.kind === 'scalar' && p.type.name === 'i32' && !written.has(p.name))
          .map((p) => p.name),
  )
  const body = block(f.body, { fixed, constants, loops: [], lengths: new Map(), bounds })
  return { ...f, body }
}

/**
 * With run-time checks on, every function of a program and of its inverses with the bounds and
 * alias asserts that cannot fail left out (see the module comment; the alias asserts only when
 * \`bounds\` is false); with checks off, unchanged.
 */
export function provenBounds(
  program: Program,
  inverses: Map<string, FunctionDef>,
  options: CompileOptions,
  bounds = true,
): { program: Program; inverses: Map<string, FunctionDef> } {
  if (!options.checks) return { program, inverses }
  const functions = new Map([...program.functions].map(([n, d]) => [n, provenBoundsFunction(d, program, bounds)]))
  return {
    program: { ...program, functions },
    inverses: new Map([...inverses].map(([n, d]) => [n, provenBoundsFunction(d, program, bounds)])),
  }
}
