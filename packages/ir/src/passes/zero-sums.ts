/**
 * `zero-sums` — the first update `y += a ± b` of an f64 scalar ancilla that holds +0
 * (allocated `0.0`, nothing since writing it) becomes `y += a` then `y ±= b`, and so on down the
 * left operands: `y += p·x − q·x·z` is `y += p·x; y -= q·x·z`, `u += x + h·k` is `u += x; u += h·k`.
 * (And `y -= a ± b` becomes `y -= a; y ∓= b`.)
 *
 * A backend computes the update of a zero as `0 + e` (`+0 + e` is `e` but for `e = −0`, which
 * becomes +0: the addition cannot be left out). That addition is the last operation of `e`, on
 * the path from every operand to `y`; an integrator's stage, a routine's local, every first
 * update of a compute–copy–uncompute ancilla pays it. Split, the addition is `0 + a`, off the path
 * from `b` (which is the stage's previous result in `u += x + h·k`).
 *
 * Where the cpu generator finds the whole value never −0 nor negative (a sum of squares: its
 * `neverNegative`), it writes it without the zero; such a sum stays as it is. f64 only (the
 * identities hold in f32 too, but f32 code has roundings of its own to keep in place).
 *
 * The same bits, NaN payloads aside, for every `a` and `b` (round to nearest):
 *
 * - `0 + (a + b) = (0 + a) + b`: where `a` is not a zero, `0 + a = a` and `a + b` is not −0 (a
 *   sum is −0 only of two −0s), so both are `a + b`; where `a = +0`, both are `0 + b`; where
 *   `a = −0`, `0 + (−0 + b) = 0 + b` (`−0 + b = b` exactly) and `(0 + −0) + b = +0 + b`.
 * - `0 + (a − b) = (0 + a) − b`: the same with −b (`a − b` is −0 only for `a = −0`, `b = +0`; for
 *   `a = −0` both sides are `+0 − b`, i.e. `0 + (−b)`).
 * - `0 − (a ± b) = (0 − a) ∓ b`: negate the two above (negation is exact, rounding symmetric).
 *
 * NaN and infinities go through both sides alike (`∞ − ∞` is NaN either way). The operands are
 * evaluated in the same order (`a` before `b`); only `y`'s value between the two updates is new,
 * and nothing reads it there.
 *
 * With run-time checks on too: the pass runs before `insert-checks`, which then places before
 * each of the updates the bounds asserts of the elements its term reads, in the order the terms
 * read them — the same asserts, in the same order, as before the one update; only `y`'s partial
 * sum stands between two of them, and a failing assert ends the call (y, a local, is not seen).
 * A sum whose terms call a primitive, which may fail of its own (\`dot\` of arrays of two lengths),
 * is not split with checks on: the later terms' bounds asserts would come after that failure.
 * No update gets an assert of its own (a first update of a zero has no alias pairs, and `+=`,
 * `-=` no `zeroFactor`), and y's deallocation check sees the same bits. `implied-checks` follows
 * a computed ancilla through such further updates (see `impliedChecksBlock`).
 */
import type { BinaryExpr, Expr, FunctionDef, Stmt, UpdateStmt } from '../ast.js'
import { key } from '../cse.js'
import { writtenNames } from './hoist-invariants.js'
import { callsRuntime } from './insert-checks.js'

/**
 * `f` with the first update `y ±= a ± b` of every f64 scalar ancilla allocated as `0.0` split
 * into one update per term (see the module comment), but where the cpu generator would write it
 * without the zero (a sum of squares: see `neverNegative`). `effectful`: the functions with a host
 * effect (a call of one may write anything).
 */
export function zeroSums(f: FunctionDef, effectful: ReadonlySet<string> = new Set(), checks = false): FunctionDef {
  let changed = false
  // \`recent\`: the names the enclosing loops' bodies write (undefined: anything may be written)
  const block = (body: Stmt[], recent: ReadonlySet<string> | undefined): Stmt[] => {
    // (what the block writes before a statement, and what its loops write, is recent inside them)
    const before = new Set(recent)
    let unknown = recent === undefined
    const inner = body.map((s): Stmt => {
      const here = (extra: Stmt[]): Set<string> | undefined => {
        const w = writtenNames(extra, effectful)
        return unknown || w === undefined ? undefined : new Set([...before, ...w])
      }
      let t: Stmt = s
      switch (s.kind) {
        case 'for':
        case 'while':
          t = { ...s, body: block(s.body, here(s.body)) }
          break
        case 'unchecked':
          t = { ...s, body: block(s.body, here([])) }
          break
        case 'if':
          t = { ...s, then: block(s.then, here([])), else: block(s.else, here([])) }
          break
      }
      const w = writtenNames([s], effectful)
      if (w === undefined) unknown = true
      else for (const n of w) before.add(n)
      return t
    })
    const out: Stmt[] = []
    const written = new Set(recent)
    let anything = recent === undefined
    // the scalars of this block that hold +0: allocated as 0.0, not written since
    const zero = new Set<string>()
    // the scalars whose first update the cpu generator writes without its zero (see `neverNegative`)
    const bare = new Set<string>()
    for (const s of inner) {
      if (s.kind === 'update' && s.target.kind === 'var' && zero.has(s.target.name)) {
        const y = s.target.name
        zero.delete(y)
        written.add(y)
        if (s.op === '+=' && neverNegative(s.value, bare)) {
          // (written \`e\` alone, without \`0 +\`: nothing to split, and split it would need one)
          out.push(s)
          bare.add(y)
          continue
        }
        bare.delete(y)
        // (only a value that reads what was just computed — in this block, or by the enclosing
        // loops' bodies — has a chain to shorten; one of values loaded before stays in one piece,
        // which a backend may pair with its neighbours)
        const split = anything || readsRecent(s.value, written) ? terms(s, checks) : [s]
        if (split.length > 1) {
          out.push(...split)
          changed = true
          continue
        }
      }
      out.push(s)
      if (s.kind === 'update') {
        if (s.target.kind === 'var') bare.delete(s.target.name)
      } else if (s.kind === 'alloc' || s.kind === 'dealloc') bare.delete(s.name)
      else bare.clear()
      if (
        s.kind === 'alloc' &&
        s.type?.kind === 'scalar' &&
        s.type.name === 'f64' &&
        s.value.kind === 'num' &&
        Object.is(s.value.value, 0)
      ) {
        zero.add(s.name)
        continue
      }
      const w = writtenNames([s], effectful)
      if (w === undefined) {
        zero.clear()
        anything = true
      } else
        for (const n of w) {
          zero.delete(n)
          written.add(n)
        }
    }
    return out
  }
  const body = block(f.body, new Set())
  return changed ? { ...f, body } : f
}

/**
 * Whether `e` reads, as a value (not only in an index), a name of `written`: a scalar, or an
 * element of an array.
 */
function readsRecent(e: Expr, written: ReadonlySet<string>): boolean {
  switch (e.kind) {
    case 'var':
      return written.has(e.name)
    case 'index':
      return written.has(e.array.name)
    case 'field':
      return readsRecent(e.target, written)
    case 'unary':
      return readsRecent(e.arg, written)
    case 'binary':
      return readsRecent(e.left, written) || readsRecent(e.right, written)
    case 'call':
      return e.args.some((a) => readsRecent(a, written))
    default:
      return false
  }
}

/**
 * Whether \`e\` calls a primitive (\`len\` aside). With checks on, a term that does is not split
 * off: a primitive may fail (\`dot\` and \`det\` of arrays of the wrong lengths, a plugin's), and
 * the bounds asserts of the later terms' reads, which \`insert-checks\` places before the one
 * update, would then come after it (review 19d).
 */
function callsPrimitive(e: Expr): boolean {
  switch (e.kind) {
    case 'call':
      return e.callee !== 'len' || e.args.some(callsPrimitive)
    case 'index':
      return callsPrimitive(e.index)
    case 'field':
      return callsPrimitive(e.target as Expr)
    case 'unary':
      return callsPrimitive(e.arg)
    case 'binary':
      return callsPrimitive(e.left) || callsPrimitive(e.right)
    default:
      return false
  }
}

/** An f64 `+` or `−` node. */
const isSum = (e: Expr): e is BinaryExpr => e.kind === 'binary' && (e.op === '+' || e.op === '-') && e.type === 'f64'

/**
 * Whether the cpu generator may find `e` never −0 nor negative and write a first update by it
 * without the zero (\`neverNegative\` of its \`codegen.ts\`, which this follows, erring towards
 * yes): a literal that is not negative, a scalar of \`bare\`, the square of a name or element, an
 * even power, \`+\`, \`*\`, \`/\` of two such values, \`sqrt\` of one, \`abs\` and \`exp\` of anything.
 * Splitting such a sum would put back the addition it saves.
 */
function neverNegative(e: Expr, bare: ReadonlySet<string>): boolean {
  switch (e.kind) {
    case 'num':
      return !(e.value < 0) && !Object.is(e.value, -0)
    case 'var':
      return bare.has(e.name)
    case 'binary': {
      if (e.op === '*' && key(e.left) === key(e.right)) return true
      if (e.op === '**') return true
      if (e.op === '+' || e.op === '*' || e.op === '/')
        return neverNegative(e.left, bare) && neverNegative(e.right, bare)
      return false
    }
    case 'call':
      if (e.callee === 'abs' || e.callee === 'exp') return true
      return e.callee === 'sqrt' && e.args.length === 1 && neverNegative(e.args[0]!, bare)
    default:
      return false
  }
}

/**
 * The update `y op= a ± b` of a zero `y` as one update per term, left to right (the update itself
 * where its value is not such a sum, or calls the runtime or a host function).
 */
function terms(u: UpdateStmt, checks: boolean): UpdateStmt[] {
  if (
    (u.op !== '+=' && u.op !== '-=') ||
    !isSum(u.value) ||
    callsRuntime(u.value) ||
    u.distinct?.length ||
    (checks && callsPrimitive(u.value))
  )
    return [u]
  const out: Array<{ op: '+=' | '-='; value: Expr }> = []
  // (the left spine: ((a − b) + c) − d gives a, −b, +c, −d)
  const spine = (e: Expr, op: '+=' | '-='): void => {
    if (isSum(e)) {
      spine(e.left, op)
      const flip = e.op === '-'
      out.push({ op: flip === (op === '+=') ? '-=' : '+=', value: e.right })
    } else out.push({ op, value: e })
  }
  spine(u.value, u.op)
  const { distinct: _distinct, ...rest } = u
  return out.map(({ op, value }) => ({ ...rest, op, target: structuredClone(u.target), value }))
}
