/**
 * Pass `zero-updates`: drops the updates `y += e`, `y -= e`, `y ^= e` whose value `e` is known
 * to be zero, and the exchanges of two zeros. Which values are zero is a forward analysis over
 * structured code: an ancilla allocated as `0`, `0.0` or `zeros(n)`, or at a value known to be
 * zero there (`h <- g[o]`, a loop invariant hoisted from a zero gradient), is zero until something that
 * may not be zero is written to it (any element, for an array); `SWAP` of a zero and another
 * value moves the zero; `push` leaves its value zero. An expression is zero when it is
 * a zero literal or a zero variable (or element of a zero array), a product with a zero factor, a
 * quotient with a zero dividend, a sum or difference of zeros, a negation or conversion of one.
 * Branches meet (zero after an `if` only when zero after both arms), loops iterate to a fixed
 * point (zero at the top of the body only when zero on entry and after every iteration).
 *
 * The updates this finds are the bulk of a reverse sweep's first half: the adjoint of a routine's
 * uncompute (`~routine`) runs the routine forwards carrying gradients that are all zero there (the
 * ancillas' gradients start at zero and nothing seeds them before the copy), so every gradient
 * update in it adds a product with a zero factor; without them that half is a plain recompute.
 * The tangent of such a program has the same shape (the tangent of a zero gradient is zero).
 *
 * Exactness: `y + 0·x` is `y` for finite `x`; for an infinite or NaN `x` (or a zero divided by
 * zero) the dropped update would have made `y` NaN, and a `-0` plus `+0` is `+0`. So the pass
 * assumes finite values, as a gradient does when it reads "no contribution" into a zero seed (it
 * never turns a finite result into another finite one). An update whose value calls a host
 * function stays (the call may have an effect). The backends run it only with run-time
 * checks off, where the program is already no longer required to be exactly reversible.
 */
import type { Arg, Expr, FunctionDef, Stmt } from '../ast.js'
import { rootName } from '../check.js'
import { callsHost } from './insert-checks.js'

/** Whether `e` is a literal zero (`0`, `0.0`, `false`, `zeros(n)`, `f64(0)`...). */
function zeroLiteral(e: Expr): boolean {
  if (e.kind === 'num') return e.value === 0
  if (e.kind === 'bool') return !e.value
  if (e.kind === 'call' && e.callee === 'zeros') return true
  if (e.kind === 'call' && e.args.length === 1 && CONVERSIONS.has(e.callee)) return zeroLiteral(e.args[0]!)
  return false
}

/** Calls that map zero to zero (conversions between number types, the identity). */
const CONVERSIONS = new Set(['f64', 'f32', 'i32', 'identity'])

/**
 * The number types whose zero is the additive identity and annihilates products (a tropical or
 * logarithmic number system's `0.0`, `+` and `*` mean other things): only these are tracked.
 */
const PLAIN = new Set(['f64', 'f32', 'i32'])

/** Whether a typed node is a plain number (see `PLAIN`); untyped nodes are not. */
function plain(t: Expr['type'] | Arg['type']): boolean {
  if (t === undefined) return false
  if (typeof t === 'string') return PLAIN.has(t)
  return t.kind !== 'stack' && PLAIN.has(t.kind === 'scalar' ? t.name : t.elem)
}

/** Whether `e` is zero when the names in `zero` hold zero (see the module comment). */
export function isZero(e: Expr | Arg, zero: ReadonlySet<string>): boolean {
  if (!plain(e.type)) return false
  switch (e.kind) {
    case 'num':
      return e.value === 0
    case 'var':
      return zero.has(e.name)
    case 'index':
      return zero.has(e.array.name)
    case 'neg':
      return isZero(e.target, zero)
    case 'unary':
      return e.op === '-' && isZero(e.arg, zero)
    case 'binary':
      switch (e.op) {
        case '*':
          return isZero(e.left, zero) || isZero(e.right, zero)
        case '/':
          return isZero(e.left, zero)
        case '+':
        case '-':
          return isZero(e.left, zero) && isZero(e.right, zero)
        default:
          return false
      }
    case 'call':
      return e.args.length === 1 && CONVERSIONS.has(e.callee) && isZero(e.args[0]!, zero)
    default:
      return false
  }
}

/** Removes from `zero` every name a statement may write (at any depth). */
function clobber(s: Stmt, zero: Set<string>, writes: ReadonlyMap<string, readonly boolean[]>): void {
  const kill = (a: Arg) => {
    const r = rootName(a)
    if (r) zero.delete(r)
  }
  switch (s.kind) {
    case 'update':
      kill(s.target)
      break
    case 'callstmt': {
      const w = s.target === 'function' ? writes.get(s.callee) : undefined
      s.args.forEach((a, i) => {
        if (!w || w[i]) kill(a)
      })
      break
    }
    case 'alloc':
    case 'dealloc':
      zero.delete(s.name)
      break
    case 'push':
    case 'pop':
      kill(s.value)
      zero.delete(s.stack.name)
      break
    case 'if':
      for (const x of [...s.then, ...s.else]) clobber(x, zero, writes)
      break
    case 'while':
    case 'for':
    case 'unchecked':
    case 'routine':
    case 'invblock':
      for (const x of s.body) clobber(x, zero, writes)
      if (s.kind === 'for') zero.delete(s.variable)
      break
  }
}

class ZeroUpdates {
  constructor(private readonly writes: ReadonlyMap<string, readonly boolean[]>) {}

  /** `body` without its zero updates, given the names zero on entry; `zero` becomes the names zero after it. */
  block(body: readonly Stmt[], zero: Set<string>): Stmt[] {
    const out: Stmt[] = []
    for (const s of body) {
      const r = this.stmt(s, zero)
      if (r) out.push(r)
    }
    return out
  }

  /** One statement (null: dropped); updates `zero` to what holds after it. */
  private stmt(s: Stmt, zero: Set<string>): Stmt | null {
    switch (s.kind) {
      case 'update': {
        if (
          (s.op === '+=' || s.op === '-=' || s.op === '^=') &&
          plain(s.target.type) &&
          isZero(s.value, zero) &&
          !callsHost(s.value)
        )
          return null
        const r = rootName(s.target)
        if (r) zero.delete(r)
        return s
      }
      case 'alloc':
        // allocated at a zero literal, or at a value that is zero here (an invariant hoisted out of
        // a loop: `h <- g[o]` of a zero gradient g)
        if (
          s.value.kind !== 'emptystack' &&
          s.type &&
          plain(s.type) &&
          (zeroLiteral(s.value) || (isZero(s.value, zero) && !callsHost(s.value)))
        )
          zero.add(s.name)
        else zero.delete(s.name)
        return s
      case 'callstmt':
        if (s.target === 'bijection' && s.callee === 'SWAP' && s.args.length === 2) {
          const [a, b] = s.args as [Arg, Arg]
          const za = isZero(a, zero),
            zb = isZero(b, zero)
          // exchanging two zeros changes nothing
          if (za && zb) return null
          const ra = a.kind === 'var' ? a.name : undefined,
            rb = b.kind === 'var' ? b.name : undefined
          clobber(s, zero, this.writes)
          // a whole variable takes the other's zero; an element keeps its array non-zero
          if (ra && zb) zero.add(ra)
          if (rb && za) zero.add(rb)
          return s
        }
        clobber(s, zero, this.writes)
        return s
      case 'push':
        clobber(s, zero, this.writes)
        if (s.value.kind === 'var') zero.add(s.value.name)
        return s
      case 'if': {
        const t = new Set(zero),
          e = new Set(zero)
        const then = this.block(s.then, t),
          els = this.block(s.else, e)
        zero.clear()
        for (const n of t) if (e.has(n)) zero.add(n)
        return { ...s, then, else: els }
      }
      case 'while':
      case 'for': {
        // the names zero at the top of every iteration: a decreasing fixed point
        const top = new Set(zero)
        if (s.kind === 'for') top.delete(s.variable)
        for (;;) {
          const after = new Set(top)
          this.block(s.body, after)
          let changed = false
          for (const n of [...top])
            if (!after.has(n)) {
              top.delete(n)
              changed = true
            }
          if (!changed) break
        }
        const body = this.block(s.body, new Set(top))
        zero.clear()
        for (const n of top) zero.add(n)
        return { ...s, body }
      }
      case 'unchecked': {
        const body = this.block(s.body, zero)
        return { ...s, body }
      }
      default:
        clobber(s, zero, this.writes)
        return s
    }
  }
}

/**
 * `f` without its updates by values known to be zero (see the module comment). `writes` tells,
 * for each function of the program, which parameters it writes (a call leaves the others as they
 * were).
 */
export function dropZeroUpdates(f: FunctionDef, writes: ReadonlyMap<string, readonly boolean[]>): FunctionDef {
  const body = new ZeroUpdates(writes).block(f.body, new Set())
  return { ...f, body }
}
