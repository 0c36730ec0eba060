/**
 * Pass `idle-first`: a counting loop whose first iteration provably changes nothing starts at its
 * second. `for i in 1..=n { anc += out * i; out -= div(anc, i); SWAP(out, anc) }` with `anc`
 * zero on entry (the factorial by the integer approximate multiplier, NiLang's `imul` idiom) maps
 * `(out, anc)` to `(out, 0)` at i = 1: the loop becomes `for i in 2..=n { … }`. So do a product
 * `p *= f64(i)` from i = 1, a sum `s += i` from i = 0, and any loop whose first pass multiplies by
 * one, divides by one, adds a zero or undoes what it did.
 *
 * Why: the iteration is work a chain waits for (the factorial's first iteration at the head of
 * the Bessel series), and a loop that then runs once less is one whose peeled first iteration
 * covers more of the short trip counts. On the wasm backend, whose `peel-ones` now peels the loop
 * at 2, 2! never enters the loop: the single-z J₂(1) objective 24.6–25.0 → 23.5–24.0 ns (in-process
 * CPU time, inputs black-boxed as the benchmark's; bench CLI 24.1 → 22.7 ns). On the cpu backend
 * it measured no change there: TurboFan already peels the i = 1 iteration and folds its `x * 1`
 * and `div(x, 1)` (17.3–17.9 ns either way; only with ν folded to a constant, as no real caller
 * has it, did the loop from 2 read 14.6 → 10.3 ns).
 *
 * The proof: the body is evaluated once, symbolically, at the loop's first value, from the state
 * the statements before the loop leave (in the same block: ancillas allocated at literals, updated
 * by literals). An `i32` value is a linear form over the entry values of the variables, modulo
 * 2³² (i32 arithmetic wraps on every backend: `+`, `-`, negation, multiplication by a constant,
 * `div` by 1 or of two constants); an `f64` value is a constant (evaluated as the backends do, in
 * IEEE double) or the unchanged entry value of one variable (`x * 1`, `1 * x`, `x / 1`, `x - 0`,
 * `x + -0`: each the same bits as `x` for every double, infinities and NaN included). Anything
 * else (arrays, calls other than `SWAP`, conversions of unknowns, `f32`, control flow, a host
 * call) is not evaluated and the loop is left as it is. The iteration is idle when every variable
 * it writes ends with its entry value (the same form, or the same constant bits) and the ancillas
 * it allocates are deallocated in it.
 *
 * Exactness: the iteration left out would have left every variable as it was, so every later
 * iteration runs on the same values; and the loop runs no iteration after the change where it ran
 * none before (its bounds are read once, on entry, from values the skipped iteration does not
 * change). Only upward-in-order loops (not `reverse`) with a literal (or known constant) start and
 * a literal step are changed, and only where the next value is an i32. Run with checks off only:
 * with checks on, the skipped iteration's deallocation checks (that it passes) and the order of
 * the checks would have to be argued; the objective programs the pass is for run without them.
 */
import type { Expr, FunctionDef, Stmt, Type } from '../ast.js'
import { writtenNames } from './hoist-invariants.js'

type ForStmt = Extract<Stmt, { kind: 'for' }>

/** An i32 value: `c + Σ coefficient·(entry value of name)`, modulo 2³² (no zero coefficients kept). */
interface IntForm {
  kind: 'i32'
  c: number
  terms: Map<string, number>
}
/** An f64 value: a constant, or the unchanged entry value of a variable. */
type FloatValue = { kind: 'f64'; c: number; v?: undefined } | { kind: 'f64'; v: string; c?: undefined }
type Value = IntForm | FloatValue

const int = (c: number, terms: Map<string, number> = new Map()): IntForm => ({ kind: 'i32', c: c | 0, terms })
const isIntConst = (v: Value | undefined): v is IntForm => v?.kind === 'i32' && v.terms.size === 0

/** a + k·b of two forms, modulo 2³². */
function combine(a: IntForm, b: IntForm, k: number): IntForm {
  const terms = new Map(a.terms)
  for (const [n, x] of b.terms) {
    const y = (terms.get(n) ?? 0) + Math.imul(k, x)
    if ((y | 0) === 0) terms.delete(n)
    else terms.set(n, y | 0)
  }
  return int((a.c + Math.imul(k, b.c)) | 0, terms)
}

/** k·a, modulo 2³². */
function scale(a: IntForm, k: number): IntForm {
  return combine(int(0), a, k)
}

function sameValue(a: Value, b: Value): boolean {
  if (a.kind === 'i32' || b.kind === 'i32') {
    if (a.kind !== 'i32' || b.kind !== 'i32' || a.c !== b.c || a.terms.size !== b.terms.size) return false
    for (const [n, x] of a.terms) if (b.terms.get(n) !== x) return false
    return true
  }
  if (a.v !== undefined || b.v !== undefined) return a.v === b.v
  // the same bits (a constant NaN is never taken for another: its payload may differ)
  return Object.is(a.c, b.c) && !Number.isNaN(a.c)
}

/** The scalar type a node carries ('i32', 'f64', …), or undefined. */
function scalarType(t: Expr['type'] | Type | undefined): string | undefined {
  if (t === undefined) return undefined
  if (typeof t === 'string') return t
  return t.kind === 'scalar' ? t.name : undefined
}

/** The entry value of a variable of type `t` (a constant where one is known), or undefined for other types. */
function entryValue(name: string, t: string | undefined, known: ReadonlyMap<string, Value>): Value | undefined {
  const k = known.get(name)
  if (k) return k
  if (t === 'i32') return int(0, new Map([[name, 1]]))
  if (t === 'f64') return { kind: 'f64', v: name }
  return undefined
}

const isFloatConst = (v: Value | undefined, c: number): boolean =>
  v?.kind === 'f64' && v.v === undefined && Object.is(v.c, c)

/**
 * Evaluates expressions and statements over a symbolic state (see the module comment). Every
 * method returns undefined where the value is not one it represents.
 */
class Evaluator {
  /** the variables' current values (those not here still hold their entry value) */
  readonly state = new Map<string, Value>()
  /** ancillas allocated by the evaluated statements and not yet deallocated */
  readonly local = new Set<string>()
  /** variables written (entry values compared at the end) */
  readonly written = new Set<string>()

  constructor(private readonly known: ReadonlyMap<string, Value>) {}

  read(name: string, t: string | undefined): Value | undefined {
    const v = this.state.get(name) ?? entryValue(name, t, this.known)
    if (!v) return undefined
    // (a value of another type than the node's: not evaluated)
    return v.kind === t ? v : undefined
  }

  expr(e: Expr): Value | undefined {
    const t = scalarType(e.type)
    switch (e.kind) {
      case 'num':
        if (t === 'i32') return Number.isInteger(e.value) && (e.value | 0) === e.value ? int(e.value) : undefined
        if (t === 'f64') return { kind: 'f64', c: e.value }
        return undefined
      case 'var':
        return this.read(e.name, t)
      case 'unary': {
        if (e.op !== '-') return undefined
        const a = this.expr(e.arg)
        if (a?.kind === 'i32') return scale(a, -1)
        if (a?.kind === 'f64' && a.v === undefined) return { kind: 'f64', c: -a.c }
        return undefined
      }
      case 'binary':
        return t === 'i32' ? this.intBinary(e) : t === 'f64' ? this.floatBinary(e) : undefined
      case 'call': {
        if (e.callee === 'identity' && e.args.length === 1) return this.expr(e.args[0]!)
        if (e.callee === 'f64' && e.args.length === 1) {
          const a = this.expr(e.args[0]!)
          if (isIntConst(a)) return { kind: 'f64', c: a.c }
          if (a?.kind === 'f64') return a
          return undefined
        }
        if (e.callee === 'div' && e.args.length === 2 && t === 'i32') {
          const a = this.expr(e.args[0]!),
            b = this.expr(e.args[1]!)
          if (a?.kind !== 'i32' || !isIntConst(b)) return undefined
          if (b.c === 1) return a
          // (of two constants: truncating, never by zero nor −2³¹ / −1, where backends differ)
          if (isIntConst(a) && b.c !== 0 && !(a.c === -(2 ** 31) && b.c === -1)) return int(Math.trunc(a.c / b.c))
          return undefined
        }
        return undefined
      }
      default:
        return undefined
    }
  }

  private intBinary(e: Extract<Expr, { kind: 'binary' }>): Value | undefined {
    const a = this.expr(e.left),
      b = this.expr(e.right)
    if (a?.kind !== 'i32' || b?.kind !== 'i32') return undefined
    switch (e.op) {
      case '+':
        return combine(a, b, 1)
      case '-':
        return combine(a, b, -1)
      case '*':
        if (isIntConst(b)) return scale(a, b.c)
        if (isIntConst(a)) return scale(b, a.c)
        return undefined
      default:
        return undefined
    }
  }

  private floatBinary(e: Extract<Expr, { kind: 'binary' }>): Value | undefined {
    const a = this.expr(e.left),
      b = this.expr(e.right)
    if (a?.kind !== 'f64' || b?.kind !== 'f64') return undefined
    return floatOp(e.op, a, b)
  }

  /** Evaluates one statement; false where it is not one this evaluates. */
  stmt(s: Stmt, loopVar: string): boolean {
    switch (s.kind) {
      case 'update': {
        if (s.target.kind !== 'var' || s.target.name === loopVar) return false
        const name = s.target.name
        const t = scalarType(s.target.type)
        const old = this.read(name, t)
        const v = this.expr(s.value)
        if (!old || !v || old.kind !== v.kind) return false
        let r: Value | undefined
        if (old.kind === 'i32') {
          const w = v as IntForm
          r = s.op === '+=' ? combine(old, w, 1) : s.op === '-=' ? combine(old, w, -1) : undefined
        } else {
          const w = v as FloatValue
          const op = s.op === '+=' ? '+' : s.op === '-=' ? '-' : s.op === '*=' ? '*' : s.op === '/=' ? '/' : undefined
          r = op ? floatOp(op, old, w) : undefined
        }
        if (!r) return false
        this.state.set(name, r)
        this.written.add(name)
        return true
      }
      case 'callstmt': {
        if (s.target !== 'bijection' || s.callee !== 'SWAP' || s.inverse || s.args.length !== 2) return false
        const [a, b] = s.args as [Expr, Expr]
        if (a.kind !== 'var' || b.kind !== 'var' || a.name === loopVar || b.name === loopVar) return false
        const ta = scalarType(a.type),
          tb = scalarType(b.type)
        const va = this.read(a.name, ta),
          vb = this.read(b.name, tb)
        if (!va || !vb || ta !== tb) return false
        this.state.set(a.name, vb)
        this.state.set(b.name, va)
        this.written.add(a.name)
        this.written.add(b.name)
        return true
      }
      case 'alloc': {
        if (s.value.kind === 'emptystack' || this.state.has(s.name) || s.name === loopVar) return false
        const t = scalarType(s.type)
        const v = this.expr(s.value)
        if (!v || v.kind !== t) return false
        this.state.set(s.name, v)
        this.local.add(s.name)
        return true
      }
      case 'dealloc':
        // (checks off: the value it names is not tested)
        if (!this.local.has(s.name)) return false
        this.local.delete(s.name)
        this.state.delete(s.name)
        this.written.delete(s.name)
        return true
      default:
        return false
    }
  }

  /** Whether the statements evaluated left every variable they wrote at its entry value. */
  idle(): boolean {
    if (this.local.size) return false
    for (const name of this.written) {
      const now = this.state.get(name)!
      const entry = entryValue(name, now.kind, this.known)
      if (!entry || !sameValue(now, entry)) return false
    }
    return true
  }
}

/** `a op b` of two f64 values, where it is one this represents (see the module comment). */
function floatOp(op: string, a: FloatValue, b: FloatValue): FloatValue | undefined {
  if (a.v === undefined && b.v === undefined) {
    switch (op) {
      case '+':
        return { kind: 'f64', c: a.c + b.c }
      case '-':
        return { kind: 'f64', c: a.c - b.c }
      case '*':
        return { kind: 'f64', c: a.c * b.c }
      case '/':
        return { kind: 'f64', c: a.c / b.c }
      default:
        return undefined
    }
  }
  // x·1, 1·x, x/1, x − (+0), x + (−0), (−0) + x: the bits of x, for every double x
  switch (op) {
    case '*':
      if (isFloatConst(b, 1)) return a
      if (isFloatConst(a, 1)) return b
      return undefined
    case '/':
      return isFloatConst(b, 1) ? a : undefined
    case '-':
      return isFloatConst(b, 0) ? a : undefined
    case '+':
      if (isFloatConst(b, -0)) return a
      if (isFloatConst(a, -0)) return b
      return undefined
    default:
      return undefined
  }
}

/** The loop's first value and its next one, where both are i32 literals (or known constants) and it runs upwards in order. */
function firstValues(s: ForStmt, known: ReadonlyMap<string, Value>): [number, number] | undefined {
  if (s.reverse || s.each) return undefined
  const fromName = s.start.kind === 'var' ? known.get(s.start.name) : undefined
  const start =
    s.start.kind === 'num' && !s.start.isFloat ? s.start.value : isIntConst(fromName) ? fromName.c : undefined
  const step = s.step === null ? 1 : s.step.kind === 'num' ? s.step.value : undefined
  if (start === undefined || step === undefined || !Number.isInteger(start) || !Number.isInteger(step) || step === 0)
    return undefined
  const next = start + step
  if ((start | 0) !== start || (next | 0) !== next) return undefined
  return [start, next]
}

/** Whether the first iteration of `s` changes nothing, given the constants known on entry. */
function firstIterationIdle(s: ForStmt, known: ReadonlyMap<string, Value>): boolean {
  const values = firstValues(s, known)
  if (!values) return false
  const inside = new Map(known)
  inside.set(s.variable, int(values[0]))
  const ev = new Evaluator(inside)
  for (const st of s.body) if (!ev.stmt(st, s.variable)) return false
  return ev.idle()
}

class IdleFirst {
  count = 0
  constructor(private readonly effectful: ReadonlySet<string>) {}

  /** `body` with its idle first iterations left out; constants are tracked from its start. */
  block(body: readonly Stmt[]): Stmt[] {
    const known = new Map<string, Value>()
    const out: Stmt[] = []
    for (const s of body) {
      let r = s
      if (s.kind === 'for' && firstIterationIdle(s, known)) {
        const [, next] = firstValues(s, known)!
        r = { ...s, start: { kind: 'num', value: next, isFloat: false, type: 'i32', loc: s.start.loc } }
        this.count++
      }
      r = this.nested(r)
      this.track(r, known)
      out.push(r)
    }
    return out
  }

  /** `s` with the blocks nested in it rewritten. */
  private nested(s: Stmt): Stmt {
    switch (s.kind) {
      case 'if':
        return { ...s, then: this.block(s.then), else: this.block(s.else) }
      case 'while':
      case 'for':
      case 'unchecked':
      case 'routine':
      case 'invblock':
        return { ...s, body: this.block(s.body) } as Stmt
      default:
        return s
    }
  }

  /** Updates the constants known after `s` (see the module comment). */
  private track(s: Stmt, known: Map<string, Value>): void {
    if (s.kind === 'alloc' || s.kind === 'update' || s.kind === 'dealloc' || s.kind === 'callstmt') {
      const ev = new Evaluator(known)
      if (ev.stmt(s, '')) {
        for (const n of ev.written) {
          const v = ev.state.get(n)
          if (isIntConst(v) || (v?.kind === 'f64' && v.v === undefined)) known.set(n, v)
          else known.delete(n)
        }
        for (const n of ev.local) {
          const v = ev.state.get(n)
          if (isIntConst(v) || (v?.kind === 'f64' && v.v === undefined)) known.set(n, v)
          else known.delete(n)
        }
        if (s.kind === 'dealloc') known.delete(s.name)
        return
      }
    }
    const w = writtenNames([s], this.effectful)
    if (!w) known.clear()
    else for (const n of w) known.delete(n)
  }
}

/**
 * `f` with the idle first iterations of its counting loops left out (see the module comment);
 * `effectful` names the functions with a host effect (a call of one forgets every constant).
 */
export function idleFirst(f: FunctionDef, effectful: ReadonlySet<string> = new Set()): FunctionDef {
  const pass = new IdleFirst(effectful)
  const body = pass.block(f.body)
  return pass.count ? { ...f, body } : f
}
