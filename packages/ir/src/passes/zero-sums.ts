/**
 * `zero-sums` — the first update `y += a ± b` of an f64 or f32 scalar ancilla that holds +0
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
 * The same bits, NaN payloads aside, for every `a` and `b` (round to nearest, any IEEE format:
 * for f32 each operation rounds, and `0 + a` is exact):
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
 * and nothing reads it there. Checks off only (so no check sits between the two updates).
 */
import type { BinaryExpr, Expr, FunctionDef, Stmt, UpdateStmt } from '../ast.js'
import { writtenNames } from './hoist-invariants.js'
import { callsRuntime } from './insert-checks.js'
import { mapInnerBlocks } from './rewrite.js'

/**
 * `f` with the first update `y ±= a ± b` of every f64 or f32 scalar ancilla allocated as `0.0`
 * split into one update per term (see the module comment). `effectful`: the functions with a host
 * effect (a call of one may write anything).
 */
export function zeroSums(f: FunctionDef, effectful: ReadonlySet<string> = new Set()): FunctionDef {
  let changed = false
  const block = (body: Stmt[]): Stmt[] => {
    const inner = mapInnerBlocks(body, block)
    const out: Stmt[] = []
    // the scalars of this block that hold +0: allocated as 0.0, not written since
    const zero = new Set<string>()
    for (const s of inner) {
      if (s.kind === 'update' && s.target.kind === 'var' && zero.has(s.target.name)) {
        zero.delete(s.target.name)
        const split = terms(s)
        if (split.length > 1) {
          out.push(...split)
          changed = true
          continue
        }
      }
      out.push(s)
      if (
        s.kind === 'alloc' &&
        s.type?.kind === 'scalar' &&
        (s.type.name === 'f64' || s.type.name === 'f32') &&
        s.value.kind === 'num' &&
        Object.is(s.value.value, 0)
      ) {
        zero.add(s.name)
        continue
      }
      const w = writtenNames([s], effectful)
      if (w === undefined) zero.clear()
      else for (const n of w) zero.delete(n)
    }
    return out
  }
  const body = block(f.body)
  return changed ? { ...f, body } : f
}

/** A float `+` or `−` node (the value's type: f64 or f32). */
const isSum = (e: Expr): e is BinaryExpr =>
  e.kind === 'binary' && (e.op === '+' || e.op === '-') && (e.type === 'f64' || e.type === 'f32')

/**
 * The update `y op= a ± b` of a zero `y` as one update per term, left to right (the update itself
 * where its value is not such a sum, or calls the runtime or a host function).
 */
function terms(u: UpdateStmt): UpdateStmt[] {
  if ((u.op !== '+=' && u.op !== '-=') || !isSum(u.value) || callsRuntime(u.value)) return [u]
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
