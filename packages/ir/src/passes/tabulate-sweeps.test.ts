/**
 * Pass `tabulate-sweeps` on printed IR before and after, its cost guard evaluated, and
 * `inlineTopLevelCalls`, which puts the sweeps of a gradient program into one body (the
 * backends' and @tenet/ad's tests check the compiled programs against the interpreter and the
 * gradients against central differences).
 */
import { describe, expect, it } from 'vitest'
import {
  check,
  createRegistry,
  type Expr,
  type FunctionDef,
  parse,
  printFunction,
  printStmts,
  type Stmt,
} from '../index.js'
import { walk } from '../check.js'
import { inlineTopLevelCalls } from '../inline.js'
import { optimize, pureValueKeys, sweepTableCandidates, tabulateSweeps } from './index.js'

const registry = createRegistry()
const programOf = (text: string) => check(parse(text, []).functions, [], registry)
const fnOf = (text: string, name = 'f'): FunctionDef => programOf(text).functions.get(name)!
/** The printed body of a function, one statement a line, without the signature. */
const body = (f: FunctionDef): string => printStmts(f.body, 0)
const swept = (text: string) => {
  const p = programOf(text)
  return tabulateSweeps(p.functions.get('f')!, registry, new Set(), p.writes)
}
const unchanged = (text: string) => {
  const f = fnOf(text)
  return printFunction(swept(text)) === printFunction(f)
}
const indent = (s: string) =>
  s
    .split('\n')
    .map((l) => `  ${l}`)
    .join('\n')

/** Two sweeps over the same angles: a rotation forwards, then backwards (the shape of a gradient program). */
const sweeps = `fn f(x: f64[], y: f64[], theta: f64[], n: i32) {
  for i in 0..n { ROT(x[i], x[i + 1], theta[i]) }
  for i in n - 1..=0 by -1 { y[i] += x[i] * cos(theta[i]) - sin(theta[i]) }
}`

describe('pass `tabulate-sweeps`', () => {
  it('tables cos and sin of the angles once, before both loops, which read them, when they evaluate more than the tables cost', () => {
    const before = body(fnOf(sweeps))
    expect(
      body(swept(sweeps)),
    ).toBe(`if (max(0.0, 1.0) * (max(0.0, f64(n)) + max(0.0, f64(n - 1) + 1.0)) > f64(len(theta)) && $apart(theta, x) && $apart(theta, y), ~) {
  $sw1: f64[] <- zeros(len(theta))
  $sw2: f64[] <- zeros(len(theta))
  for $sj3 in 0..len(theta) {
    $sw1[$sj3] += cos(theta[$sj3])
    $sw2[$sj3] += sin(theta[$sj3])
  }
  for i in 0..n {
    ROT(x[i], x[i + 1], theta[i])
  }
  for i in n - 1..=0 by -1 {
    y[i] += x[i] * $sw1[i] - $sw2[i]
  }
  @unchecked {
    for $sj3 in 0..len(theta) {
      $sw2[$sj3] -= sin(theta[$sj3])
      $sw1[$sj3] -= cos(theta[$sj3])
    }
    $sw2 -> zeros(len(theta))
    $sw1 -> zeros(len(theta))
  }
} else {
${indent(before)}
}`)
    // the rotation reads both tables (its lowering's cos θ and sin θ), the original (else) none
    const calls: Stmt[] = []
    walk(swept(sweeps).body, (s) => {
      if (s.kind === 'callstmt' && s.callee === 'ROT') calls.push(s)
    })
    const marked = calls.map((s) => (s as Extract<Stmt, { kind: 'callstmt' }>).tabulated)
    expect(marked[1]).toBeUndefined()
    expect(marked[0]!.map((t) => [t.callee, t.arg, t.read.kind === 'index' && t.read.array.name])).toEqual([
      ['cos', 2, '$sw1'],
      ['sin', 2, '$sw2'],
    ])
    expect(sweepTableCandidates(fnOf(sweeps), registry)).toEqual(['cos(theta)', 'sin(theta)'])
  })

  it('counts a branch whose condition reads only parameters as taken, and requires the condition', () => {
    const text = `fn f(x: f64[], theta: f64[], n: i32, m: i32) {
  if (0 < m, ~) { for i in 0..n { x[i] += exp(theta[i]) } }
  for i in 0..n { x[i] -= 2.0 * exp(theta[i]) }
}`
    const s = swept(text).body[0]!
    expect(s.kind === 'if' && printFunction({ ...fnOf(text), body: [{ ...s, then: [], else: [] }] })).toContain(
      'if (0 < m && max(0.0, 1.0) * (max(0.0, f64(n)) + max(0.0, f64(n))) > f64(len(theta)) && $apart(theta, x), ~)',
    )
  })

  it('counts such a branch inside a loop too (the guard `hoist-calls` puts around what it hoists)', () => {
    expect(
      unchanged(`fn f(x: f64[], theta: f64[], n: i32, m: i32) {
  for i in 0..n { if (0 < m, ~) { x[i] += exp(theta[i]) } }
  for i in 0..n { if (0 < m, ~) { x[i] -= exp(theta[i]) } }
}`),
    ).toBe(false)
  })

  it('leaves a function alone where a table would be wrong or cannot be counted', () => {
    // the body writes the array
    expect(
      unchanged(`fn f(x: f64[], theta: f64[], n: i32) {
  for i in 0..n { x[i] += cos(theta[i]) }
  theta[0] += 1.0
  for i in 0..n { x[i] += cos(theta[i]) }
}`),
    ).toBe(true)
    // one statement only (one loop applying it again and again is \`tabulate\`'s)
    expect(
      unchanged(`fn f(x: f64[], theta: f64[], n: i32) {
  for i in 0..n { for j in 0..n { x[i] += cos(theta[j]) } }
}`),
    ).toBe(true)
    // evaluated outside loops only (the code generators share equal calls of straight-line code)
    expect(
      unchanged(`fn f(x: f64[], theta: f64[]) {
  ROT(x[0], x[1], theta[0])
  x[2] += cos(theta[0]) * x[0]
  IROT(x[1], x[2], theta[0])
}`),
    ).toBe(true)
    // a primitive that is one instruction
    expect(
      unchanged(`fn f(x: f64[], theta: f64[], n: i32) {
  for i in 0..n { x[i] += sqrt(theta[i]) }
  for i in 0..n { x[i] += sqrt(theta[i]) }
}`),
    ).toBe(true)
    // evaluated only under conditions that read what the body writes, or an element: not counted
    expect(
      unchanged(`fn f(x: f64[], theta: f64[], n: i32) {
  for i in 0..n { if (x[i] > 0.0, ~) { x[i] += cos(theta[i]) } }
  for i in 0..n { if (theta[i] > 0.0, ~) { x[i] += cos(theta[i]) } }
}`),
    ).toBe(true)
    // an array that is not a parameter (an ancilla: its length is not known before the body)
    expect(
      unchanged(`fn f(x: f64[], n: i32) {
  w: f64[] <- zeros(4)
  for i in 0..n { x[i] += cos(w[i]) }
  for i in 0..n { x[i] += cos(w[i]) }
  w -> zeros(4)
}`),
    ).toBe(true)
  })

  it('runs in `optimize` without run-time checks only', () => {
    const p = programOf(sweeps)
    const has = (checks: boolean) =>
      printFunction(optimize(p, new Map(), { checks, tolerance: 1e-8 }).program.functions.get('f')!).includes('$sw')
    expect(has(false)).toBe(true)
    expect(has(true)).toBe(false)
  })

  describe('the cost guard', () => {
    const value = (e: Expr, env: Record<string, number>): number => {
      switch (e.kind) {
        case 'num':
          return e.value
        case 'var':
          return env[e.name]!
        case 'binary': {
          const a = value(e.left, env),
            b = value(e.right, env)
          return { '+': a + b, '-': a - b, '*': a * b, '/': a / b, '<': +(a < b), '>': +(a > b), '&&': +(a && b) }[
            e.op as '+'
          ]!
        }
        case 'call':
          if (e.callee === 'len') return env[`len:${(e.args[0] as { name: string }).name}`]!
          if (e.callee === 'f64') return value(e.args[0]!, env)
          if (e.callee === 'max') return Math.max(...e.args.map((a) => value(a, env)))
          // (the arrays are apart: the cost guard is what these cases test)
          if (e.callee === '$apart') return 1
          throw new Error(`no ${e.callee}`)
        default:
          throw new Error(e.kind)
      }
    }
    const built = (text: string, env: Record<string, number>) => {
      const s = swept(text).body[0]!
      if (s.kind !== 'if') throw new Error('no table')
      return value(s.pre, env) !== 0
    }
    it('builds the tables when both sweeps evaluate more than a table of the whole array costs', () => {
      // 2n evaluations of cos against a table of len(theta)
      expect(built(sweeps, { n: 10, 'len:theta': 11 })).toBe(true)
      expect(built(sweeps, { n: 10, 'len:theta': 20 })).toBe(false)
      expect(built(sweeps, { n: 3, 'len:theta': 1000 })).toBe(false)
    })
  })
})

describe('inlineTopLevelCalls', () => {
  const text = `fn g(a: f64[], t: f64[], n: i32) {
  for i in 0..n { k <- 0.0; k += t[i]; a[i] += cos(k); k -= t[i]; k -> 0.0 }
}
fn h(a: f64[], t: f64[], n: i32) {
  g(a, t, n)
  for i in 0..n { a[i] -= 1.0 }
}
fn d(a: f64[], t: f64[], u: f64[], n: i32) {
  for i in 0..n { a[i] += t[i] * u[i] }
}
fn f(x: f64[], theta: f64[], n: i32) {
  h(x, theta, n)
  for j in 0..2 { g(x, theta, n) }
  ~h(x, theta, n)
  d(x, theta, theta, n)
}`
  it('inlines the calls a function makes once, down the chain, renaming locals; not those in loops, uncalls, or with repeated arguments', () => {
    const p = programOf(text)
    const f = inlineTopLevelCalls(p.functions.get('f')!, p.functions)
    expect(body(f)).toBe(`for $top1$i in 0..n {
  $top1$k <- 0.0
  $top1$k += theta[$top1$i]
  x[$top1$i] += cos($top1$k)
  $top1$k -= theta[$top1$i]
  $top1$k -> 0.0
}
for $top0$i in 0..n {
  x[$top0$i] -= 1.0
}
for j in 0..2 {
  g(x, theta, n)
}
~h(x, theta, n)
d(x, theta, theta, n)`)
    const q = programOf(text.replace('  h(x, theta, n)\n  for j', '  for j'))
    const same = { ...q.functions.get('f')!, body: q.functions.get('f')!.body.slice(1) }
    expect(inlineTopLevelCalls(same, q.functions)).toBe(same)
  })

  it('gives the keys of the primitives each statement applies to arrays the body never writes', () => {
    const p = programOf(text)
    const f = inlineTopLevelCalls(p.functions.get('f')!, p.functions)
    // cos of an ancilla is not an element of an array; nothing else is applied
    expect(pureValueKeys(f, registry, new Set(), p.writes).map((k) => [...k])).toEqual([[], [], [], [], []])
    expect(pureValueKeys(fnOf(sweeps), registry).map((k) => [...k])).toEqual([
      ['cos(theta)', 'sin(theta)'],
      ['cos(theta)', 'sin(theta)'],
    ])
  })
})
