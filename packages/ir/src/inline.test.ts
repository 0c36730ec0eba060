/**
 * The inliner on printed IR: small leaf calls are inlined bottom up, so a small function whose
 * only calls are to leaves is inlined too (the compiled programs are checked against the
 * interpreter by the backends' random-program and conformance tests).
 */
import { describe, expect, it } from 'vitest'
import { check, createRegistry, parse, printFunction, type Stmt } from './index.js'
import { printAsWritten } from './printer.js'
import { inlineSmallCalls } from './inline.js'

const registry = createRegistry()

describe('inlineSmallCalls', () => {
  it('inlines bottom up: a caller whose calls were inlined is inlined where a loop calls it', () => {
    const p = check(
      parse(
        `fn leaf(a: f64, b: f64, t: f64) { ROT(a, b, t) }
fn mid(x: f64[], t: f64, n: i32) { for i in 0..n - 1 { leaf(x[i], x[i + 1], t) } }
fn top(x: f64[], t: f64, n: i32) { for r in 0..3 { mid(x, t, n) } }
fn rec(x: f64[], n: i32) { if (n > 0, ~) { x[0] += 1.0; rec(x, n - 1) } }
fn once(x: f64[], t: f64, n: i32) { mid(x, t, n) }`,
        [],
      ).functions,
      [],
      registry,
    )
    const inverses = new Map()
    const out = inlineSmallCalls(p, inverses).program.functions
    expect(printFunction(out.get('top')!)).toBe(`fn top(x: f64[], t: f64, n: i32) {
  for r in 0..3 {
    for $inl1$i in 0..n - 1 {
      ROT(x[$inl1$i], x[$inl1$i + 1], t)
    }
  }
}`)
    // after the first round, a call outside loops stays a call
    expect(printFunction(out.get('once')!)).toBe(printFunction(p.functions.get('once')!))
    // a recursive function is never a leaf
    expect(printFunction(out.get('rec')!)).toBe(printFunction(p.functions.get('rec')!))
  })

  it("remembers each parameter's name on the argument put in its place, through two rounds", () => {
    const p = check(
      parse(
        `fn leaf(w: f64[], a: f64, j: i32) { w[j] *= a }
fn mid(v: f64[], b: f64, k: i32) { for i in 0..2 { leaf(v, b * 2.0, k + i) } }
fn top(x: f64[], y: f64[], n: i32) { for r in 0..3 { mid(x, y[r], n) } }`,
        [],
      ).functions,
      [],
      registry,
    )
    const top = inlineSmallCalls(p, new Map()).program.functions.get('top')!
    // the update that leaf's body became, printed as the IR and as a run-time error words it
    let update: Extract<Stmt, { kind: 'update' }> | undefined
    const find = (body: Stmt[]): void => {
      for (const s of body) {
        if (s.kind === 'update') update = s
        if (s.kind === 'for') find(s.body)
      }
    }
    find(top.body)
    // (the IR names the caller's array and the ancillas of the expressions given)
    expect(printFunction(top)).toMatch(/\n {6}x\[\$inl1\$\$inl0\$arg2\] \*= \$inl1\$\$inl0\$arg1\n/)
    expect(`${printAsWritten(update!.target)} *= ${printAsWritten(update!.value)}`).toBe('w[j] *= a')
  })
})
