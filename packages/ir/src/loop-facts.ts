/**
 * What the code inside a counting loop knows from the loop having started: an analysis for the
 * backends' code generators (the cpu backend's store-to-load forwarding, see `sharedSubexpressions`).
 *
 * The body of `for v in a..b` runs only when the range is not empty (`a < b`, for a positive
 * step), and the range is evaluated once, before the body. So inside the body, a name `x` that the
 * range reads and the body never writes cannot have a value for which the range is empty. That
 * proves two element indices different where their difference is a name plus a constant: in the
 * adjoint of an explicit stencil, `g_u[(t + 1) * n + i]` and `g_u[t * n + i - 1]` differ by
 * `n + 1`, which is zero only for `n = -1`, and `for i in 1..n - 1` does not run then. A code
 * generator then keeps a loaded element across a store to the other one (V8 cannot: it tracks no
 * typed-array elements, and could not tell the two apart).
 *
 * Indices are i32 with wrapping arithmetic: two indices are equal exactly when their polynomials
 * are congruent modulo 2³². A difference `±x + c` is congruent to 0 for exactly one i32 value of
 * `x`, `x = ∓c` wrapped; the range is evaluated there both with wrapping and exactly, and only a
 * range empty both ways counts (so the conclusion holds whichever way the program computes it).
 * Ranges with a non-literal step, reading another name, an element or `len(…)` prove nothing.
 */
import type { Expr, ForStmt } from './ast.js'
import type { Poly } from './passes/interchange.js'

/** A loop around the code being generated: the loop, and the names its body may write (undefined: any). */
export interface EnclosingLoop {
  readonly loop: ForStmt
  readonly written: ReadonlySet<string> | undefined
}

/** The value of an i32 expression of literals and the names in `env` (wrapped to i32 or exact), or undefined. */
function evaluate(e: Expr, env: ReadonlyMap<string, number>, wrap: boolean): number | undefined {
  const w = (v: number): number => (wrap ? v | 0 : v)
  switch (e.kind) {
    case 'num':
      return Number.isInteger(e.value) && !e.isFloat ? e.value : undefined
    case 'var':
      return e.type === 'i32' ? env.get(e.name) : undefined
    case 'unary': {
      if (e.op !== '-' || e.type !== 'i32') return undefined
      const a = evaluate(e.arg, env, wrap)
      return a === undefined ? undefined : w(-a)
    }
    case 'binary': {
      if (e.type !== 'i32' || (e.op !== '+' && e.op !== '-' && e.op !== '*')) return undefined
      const a = evaluate(e.left, env, wrap),
        b = evaluate(e.right, env, wrap)
      if (a === undefined || b === undefined) return undefined
      if (e.op === '*') return wrap ? Math.imul(a, b) : a * b
      return w(e.op === '+' ? a + b : a - b)
    }
    default:
      return undefined
  }
}

/** Whether the body of `loop` runs no time with the names of `env` at their values there (both ways of computing). */
function emptyAt(loop: ForStmt, env: ReadonlyMap<string, number>): boolean {
  const step =
    loop.step === null ? 1 : loop.step.kind === 'num' && Number.isInteger(loop.step.value) ? loop.step.value : 0
  if (step === 0) return false
  return [true, false].every((wrap) => {
    const a = evaluate(loop.start, env, wrap),
      b = evaluate(loop.stop, env, wrap)
    if (a === undefined || b === undefined) return false
    // (the interpreter's `inRange(a)`: the first value is not in the range)
    return step > 0 ? (loop.inclusive ? a > b : a >= b) : loop.inclusive ? a < b : a <= b
  })
}

/**
 * Whether the i32 polynomial `d` (an index difference; see the module comment) is nonzero modulo
 * 2³² wherever code inside `loops` (outermost first) runs: `d` is `±x + c` for one name `x`, and
 * a loop whose body does not write `x` would not run with `x` at the one value that makes `d`
 * zero. `x` may be a loop's own variable: a value outside its range (with literal bounds) counts.
 */
export function nonzeroInLoops(d: Poly, loops: readonly EnclosingLoop[]): boolean {
  let x: string | undefined
  let k = 0
  let c = 0
  for (const [m, v] of d) {
    if (v === 0) continue
    if (m === '') c = v
    else if (x === undefined && !m.includes('*')) {
      x = m
      k = v
    } else return false
  }
  if (x === undefined) return c % 2 ** 32 !== 0
  if (k !== 1 && k !== -1) return false
  // the one i32 value of x where k·x + c ≡ 0 (mod 2³²)
  const root = (-k * c) | 0
  if (!Number.isSafeInteger(k * c)) return false
  // innermost first: a loop whose variable is x binds the x of the code inside it (outer ones are others)
  for (let i = loops.length - 1; i >= 0; i--) {
    const { loop, written } = loops[i]!
    if (loop.variable === x) {
      if (!written || written.has(x)) return false
      // the variable lies in its range: the root outside [a, b] (either direction) is not a value of it
      const a = evaluate(loop.start, new Map(), false),
        b = evaluate(loop.stop, new Map(), false)
      if (a === undefined || b === undefined || loop.step !== null) return false
      return root < Math.min(a, b) || root > Math.max(a, b)
    }
    if (!written || written.has(x)) continue
    if (emptyAt(loop, new Map([[x, root]]))) return true
  }
  return false
}
