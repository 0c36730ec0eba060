/**
 * Branch-spanning reuse of sin/cos in lanes (`lane-memo.ts`): the bookkeeping on its own, then
 * programs whose map loops run in lanes with branches of the same condition around writes of the
 * angle, of the condition's names and of an element's index (in branches that may and that cannot
 * run together), against
 * the cpu backend, the interpreter and the scalar wasm code, bit for bit, with checks on and off.
 */
import { describe, expect, it } from 'vitest'
import { parse, type Expr, type Stmt } from '@tenet/ir'
import { exclusive, LaneMemo, type LaneGuard } from './lane-memo.js'
import {
  compile,
  expectSameForward,
  expectSameRuns,
  lastLaneSincosReused,
  lastLaneValuesReused,
  lastMapLanes,
} from './test-util.js'

/** The expression of `text` (the value of the only update of a one-statement function). */
const expr = (text: string): Expr => {
  const m = parse({ text: `fn f(a: f64, x: f64, y: f64) { a += ${text} }`, name: 'memo' })
  return (m.functions[0]!.body[0] as Extract<Stmt, { kind: 'update' }>).value
}
const branch = (cond: string, negated: boolean, both: boolean, outermost = true): LaneGuard => ({
  kind: 'branch',
  cond,
  negated,
  both,
  outermost,
})

describe('LaneMemo', () => {
  it('tells which guards contradict each other', () => {
    const c = 'x > 0|x#0'
    // both lanes true against one of each, or against both false
    expect(exclusive([branch(c, false, true)], [branch(c, false, false)])).toBe(true)
    expect(exclusive([branch(c, false, true)], [branch(c, true, true)])).toBe(true)
    expect(exclusive([branch(c, true, false)], [branch(c, false, true)])).toBe(true)
    // one lane each way runs both branches under their masks
    expect(exclusive([branch(c, false, false)], [branch(c, true, false)])).toBe(false)
    // under an enclosing mask a masked branch says nothing of the condition's lanes
    expect(exclusive([branch(c, false, true)], [branch(c, false, false, false)])).toBe(false)
    // another condition (or another value of it), or a write in a loop
    expect(exclusive([branch(c, false, true)], [branch('x > 0|x#1', false, false)])).toBe(false)
    expect(exclusive([{ kind: 'opaque' }, branch(c, false, true)], [branch(c, false, false)])).toBe(false)
  })

  it('finds a value where its guards enclose the code and nothing it reads was written on the way', () => {
    const th = expr('x'),
      cond = expr('y')
    const memo = new LaneMemo<number>()
    const c = memo.condition(cond)
    const all = branch(c, false, true),
      masked = branch(c, false, false)
    memo.under(all, () => memo.record('v', th, 1))
    memo.under(masked, () => {
      expect(memo.find('v', th)).toBeUndefined() // (not recorded on this path)
      memo.wrote(['x']) // a write this path makes, which the other path does not
      memo.record('v', th, 2)
    })
    expect(memo.find('v', th)).toBeUndefined() // outside the branch
    memo.under(all, () => expect(memo.find('v', th)).toBe(1))
    memo.under(all, () => expect(memo.find('w', th)).toBeUndefined()) // (another value of it)
    memo.under(masked, () => expect(memo.find('v', th)).toBe(2))
    // the condition's value is another once y is written: its key changes
    memo.wrote(['y'])
    expect(memo.condition(cond)).not.toBe(c)
    // a write of x that may run anywhere (a loop's) ends both
    memo.under({ kind: 'opaque' }, () => memo.wrote(['x']))
    memo.under(all, () => expect(memo.find('v', th)).toBeUndefined())
    memo.under(masked, () => expect(memo.find('v', th)).toBeUndefined())
    // unguarded values serve everywhere after, until what they read is written
    memo.record('v', th, 3)
    memo.under(masked, () => expect(memo.find('v', th)).toBe(3))
    memo.wrote('*')
    expect(memo.find('v', th)).toBeUndefined()
  })
})

/**
 * One observation of a rotation-like kernel (the shape of bundle adjustment's forward run and its
 * adjoint): θ in a branch, sin and cos of it there, then the same condition again after code that
 * writes the angle only where it cannot run with the second branch's unmasked code … and
 * reversible, so that checks on run it backwards too.
 */
const kernel = `
fn g(a: f64, b: f64, x: f64, y: f64) {
  th <- 0.0
  q <- 0.0
  if (x > 0.5, ~) {
    th += sqrt(x) + 0.25
  } else {
    th += y
  }
  a += cos(th) * y
  if (x > 0.5, ~) {
    b += sin(th) * a + y / th
  }
  q += cos(th)
  if (x > 0.5, ~) {
    a += sin(th) - cos(th) * b + y / th + 0.5 / sqrt(x)
  } else {
    b += sin(th)
  }
  ~{
    if (x > 0.5, ~) {
      th += sqrt(x) + 0.25
    } else {
      th += y
    }
    q += cos(th)
  }
  q -> 0.0
  th -> 0.0
}
fn f(a: f64[], b: f64[], x: f64[], y: f64[]) { for i in 0..len(a) { g(a[i], b[i], x[i], y[i]) } }`

const data = (n: number, seed: number) => {
  const xs = [0, 0.5, 0.75, 2, 1e-300, 7.5, 40, 1e6]
  return () => {
    let s = seed
    const r = () => (s = (Math.imul(s, 1103515245) + 12345) >>> 0) / 2 ** 32
    return [
      Float64Array.from({ length: n }, () => r() * 4 - 2),
      Float64Array.from({ length: n }, () => r() * 2),
      // runs of lanes on each side of the condition, and mixed pairs
      Float64Array.from({ length: n }, (_, i) => (i % 5 < 2 ? xs[i % xs.length]! : r())),
      Float64Array.from({ length: n }, () => r() * 3 - 1),
    ]
  }
}

describe('sin and cos reused across branches in lanes', () => {
  it('computes a kernel’s values as the scalar code does, forwards and backwards, checks on and off', () => {
    for (const checks of [false, true]) {
      const lanes = compile(kernel, 'wasm', checks)
      // (with checks on, the branches' exit checks keep the loop out of lanes: the same bits still)
      expect(lastMapLanes > 0).toBe(!checks)
      expect(lastLaneSincosReused > 0).toBe(!checks)
      expect(lastLaneValuesReused > 0).toBe(!checks)
      const scalar = compile(kernel, 'wasm', checks, false)
      const cpu = compile(kernel, 'cpu', checks)
      const interp = compile(kernel, 'interpreter', checks)
      for (const n of [1, 2, 5, 16]) expectSameRuns([interp, cpu, scalar, lanes], data(n, n))
    }
  })

  it('reads an element again after a write of its index', () => {
    const text = `
fn g(a: f64, b: f64, x: f64, t: f64[], j: i32) {
  a += t[j] * x
  if (x > 0.5, ~) {
    b += t[j] / x
  }
  j += 1
  if (x > 0.5, ~) {
    a += t[j] / x
  }
  j -= 1
}
fn f(a: f64[], b: f64[], x: f64[], t: f64[], k: i32[]) {
  for i in 0..len(a) { g(a[i], b[i], x[i], t, k[i]) }
}`
    for (const checks of [false, true]) {
      const lanes = compile(text, 'wasm', checks)
      expect(lastMapLanes > 0).toBe(!checks)
      expect(lastLaneValuesReused > 0).toBe(!checks)
      const cpu = compile(text, 'cpu', checks)
      const interp = compile(text, 'interpreter', checks)
      const args = () => [
        Float64Array.from({ length: 6 }, (_, i) => i - 2.5),
        Float64Array.from({ length: 6 }, (_, i) => i * 0.5),
        Float64Array.of(2, 3, 0.25, 4, 0.75, 0.1),
        Float64Array.from({ length: 5 }, (_, i) => Math.cos(i * 1.3)),
        Int32Array.of(0, 1, 1, 3, 0, 2),
      ]
      expectSameRuns([interp, cpu, lanes], args)
    }
  })

  it('gives the scalar code’s bits on random programs writing the angle and the conditions between branches', () => {
    let seed = 2024
    const r = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!
    const conds = ['x > 0.5', 'y < 0.3', 'q > 1.0', 'x > 0.5 && y < 0.3', '!(x > 0.5)']
    const use = () =>
      pick(['cos(th)', 'sin(th) * y', 'sin(th) - cos(th)', 'sin(th + y)', 'y / (th + 3.0)', 'exp(th * y)', 't[j] * th'])
    const stmt = (depth: number): string => {
      const k = r()
      if (k < 0.3) return `if (${pick(conds)}, ~) {\n th += sqrt(abs(x)) + 0.5\n a += ${use()} }`
      if (k < 0.5) return `if (${pick(conds)}, ~) { b += ${use()} } else { ${pick(['th += 0.125', 'a += 1.0'])} }`
      if (k < 0.6 && depth > 0) return `if (${pick(conds)}, ~) {\n${stmt(depth - 1)}\n}`
      if (k < 0.7) return pick(['th += y * 0.25', 'q += x', 'th += q', 'j += 1', 'a += t[j] + t[j + 1]'])
      if (k < 0.8) return `for m in 0..2 { ${pick(['th += 0.5', 'a += 0.5'])} }`
      return `b += ${use()}`
    }
    let reused = 0,
      none = 0
    for (let p = 0; p < 10; p++) {
      const lines = Array.from({ length: 7 }, () => stmt(1))
      // (not reversible as written, th and q are not uncomputed: compiled without checks, a test
      // of the code generator, forwards)
      const text = `fn g(a: f64, b: f64, x: f64, y: f64, t: f64[], j: i32) {
  th <- 0.0
  q <- 0.0
  ${lines.join('\n  ')}
  q -> 0.0
  th -> 0.0
}
fn f(a: f64[], b: f64[], x: f64[], y: f64[], t: f64[], k: i32[]) {
  for i in 0..len(a) { g(a[i], b[i], x[i], y[i], t, k[i]) }
}`
      const lanes = compile(text, 'wasm')
      expect(lastMapLanes).toBeGreaterThan(0)
      if (lastLaneSincosReused + lastLaneValuesReused > 0) reused++
      else none++
      const scalar = compile(text, 'wasm', false, false)
      const cpu = compile(text, 'cpu')
      const interp = compile(text, 'interpreter')
      // (t read at an index of each lane's own, k[i] and after, which \`j += 1\` moves)
      const args = (n: number) => () => [
        ...data(n, p + n)(),
        Float64Array.from({ length: 16 }, (_, i) => Math.cos(i * 1.3)),
        Int32Array.from({ length: n }, (_, i) => (i * 3) % 4),
      ]
      for (const n of [2, 9]) expectSameForward([interp, cpu, scalar, lanes], args(n))
    }
    // (some programs reuse a value, some have nothing to reuse)
    expect(reused).toBeGreaterThan(0)
    expect(none).toBeGreaterThan(0)
  })
})
