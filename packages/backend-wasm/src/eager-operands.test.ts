/**
 * Eager operands of `&&` / `||` (see `eager-operands.ts`): which right operands run without a
 * branch, and that those that could trap or call out keep it (a program whose right operand would
 * divide an integer by zero, or read out of bounds, when the left one already decides).
 */
import { describe, expect, it } from 'vitest'
import { check, createRegistry, parse, type Expr } from '@tenet/ir'
import { backendUnderTest, conformanceProblems, referenceBackend, runConformance } from '@tenet/testing'
import { eagerOperand } from './eager-operands.js'
import { wasmBackend } from './index.js'

const registry = createRegistry()
/** The right operand of the condition `cond` (a `&&` or `||`) in a function of a, b: f64, n, m: i32, x: f64[]. */
function rightOf(cond: string): Expr {
  const f = check(
    parse(`fn f(a: f64, b: f64, n: i32, m: i32, x: f64[]) { if (${cond}, ~) { NEG(a) } }`, []).functions,
    [],
    registry,
  ).functions.get('f')!
  const pre = (f.body[0] as { pre: Expr }).pre
  if (pre.kind !== 'binary' || (pre.op !== '&&' && pre.op !== '||')) throw new Error('not a logical operator')
  return pre.right
}
/** The predicate the code generator passes: standard `abs`, `sqrt`, `min`, `max` (as there). */
const native = (c: { callee: string }) => ['abs', 'sqrt', 'min', 'max'].includes(c.callee)

describe('eager operands of && and ||', () => {
  it('takes comparisons and float arithmetic of locals and constants, abs, nested && / ||', () => {
    for (const cond of [
      'abs(a) > 1e-8 && abs(b) < 1e-8',
      'n < 3 || a / b > 1.0',
      'n < 3 && (m > 0 || !(a < b))',
      'a > 0.0 && n * m + 1 != 0',
      'a > 0.0 && sqrt(b) - min(a, b) >= 0.0',
    ])
      expect([cond, eagerOperand(rightOf(cond), native)]).toEqual([cond, true])
  })

  it('keeps the branch for integer division, element loads, other calls, and long operands', () => {
    for (const cond of [
      'm != 0 && div(n, m) > 1',
      'm != 0 && n / m > 1',
      'm != 0 && n % m > 1',
      'n < len(x) && x[n] > 0.0',
      'a > 0.0 && sin(b) > 0.0',
      'a > 0.0 && a * b + a * b + a * b + a * b > 1.0',
    ])
      expect([cond, eagerOperand(rightOf(cond), native)]).toEqual([cond, false])
  })

  it('the wasm code agrees with the interpreter where the right operand would trap or divide by zero', () => {
    const source = `fn f(a: f64, b: f64, n: i32, m: i32, x: f64[]) {
  if (m != 0 && div(n, m) > 1, ~) { NEG(a) }
  if (n >= 0 && n < len(x) && x[n] > 0.0, ~) { NEG(b) }
  if (b == 0.0 || a / b > 1.0, ~) { INC(m) }
  if (abs(a) > 1.0 && abs(b) < 1.0, ~) { INC(n) }
}`
    const backends = [
      referenceBackend(),
      backendUnderTest(wasmBackend),
      { ...backendUnderTest(wasmBackend, { checks: false }), name: 'wasm (checks off)' },
    ]
    for (const args of [
      [2, 0, 5, 0, Float64Array.of(1, -1)],
      [0.5, 4, 7, 2, Float64Array.of(1, -1)],
      [-3, 0.5, 1, -1, Float64Array.of(1, -1)],
    ])
      expect(conformanceProblems(runConformance({ source, entry: 'f' }, args, backends))).toEqual([])
  })
})
