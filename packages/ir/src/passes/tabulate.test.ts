/**
 * Pass `tabulate` on printed IR before and after (the backends' tests check that compiled
 * programs with tables compute what the interpreter does, and gradients through them).
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
import { insertChecksFunction, optimize, tabulate } from './index.js'

const registry = createRegistry()
const fnOf = (text: string, name = 'f'): FunctionDef =>
  check(parse(text, []).functions, [], registry).functions.get(name)!
/** The printed body of a function, one statement a line, without the signature. */
const body = (f: FunctionDef): string => printStmts(f.body, 0)
const tabulated = (text: string, name = 'f') => body(tabulate(fnOf(text, name), registry))
/** Whether the pass leaves the function as it is. */
const unchanged = (text: string) => {
  const f = fnOf(text)
  return printFunction(tabulate(f, registry)) === printFunction(f)
}

/** Paper 000 Listing 14: the same M(M−1)/2 rotations applied to every column of x. */
const umm = `fn f(x: f64[], theta: f64[], m: i32, n: i32) {
  for l in 0..n {
    k: i32 <- 0
    for j in 0..m {
      for i in m - 2..=j by -1 {
        ROT(x[i + m * l], x[i + 1 + m * l], theta[k])
        INC(k)
      }
    }
    k -> len(theta)
  }
}`

const loopOf = (s: string) =>
  s
    .split('\n')
    .map((l) => `  ${l}`)
    .join('\n')

describe('pass `tabulate`', () => {
  it('tables cos and sin of the angles once, before the loop over columns, when it runs twice or more and evaluates more than the table costs', () => {
    const loop = body(fnOf(umm))
    expect(
      tabulated(umm),
    ).toBe(`if (1 < n && max(0.0, f64(n)) * max(0.0, f64(m) * (f64(m - 2) + 1.0 + (f64(m - 2) - f64(m - 1) + 1.0)) / 2.0) > f64(len(theta)) && $apart(theta, x), ~) {
  l$tab0: f64[] <- zeros(len(theta))
  l$tab1: f64[] <- zeros(len(theta))
  for l$tj2 in 0..len(theta) {
    l$tab0[l$tj2] += cos(theta[l$tj2])
    l$tab1[l$tj2] += sin(theta[l$tj2])
  }
${loopOf(loop)}
  @unchecked {
    for l$tj2 in 0..len(theta) {
      l$tab1[l$tj2] -= sin(theta[l$tj2])
      l$tab0[l$tj2] -= cos(theta[l$tj2])
    }
    l$tab1 -> zeros(len(theta))
    l$tab0 -> zeros(len(theta))
  }
} else {
${loopOf(loop)}
}`)
  })

  it('marks the bijection with the table elements of the values its lowering computes', () => {
    const calls: Stmt[] = []
    walk(tabulate(fnOf(umm), registry).body, (s) => {
      if (s.kind === 'callstmt' && s.callee === 'ROT') calls.push(s)
    })
    // the tabulated loop's ROT and the original's (in the `else` branch)
    expect(calls).toHaveLength(2)
    const marked = calls.map((s) => (s as Extract<Stmt, { kind: 'callstmt' }>).tabulated)
    expect(marked[1]).toBeUndefined()
    expect(
      marked[0]!.map((t) => [
        t.callee,
        t.arg,
        t.read.kind === 'index' && t.read.array.name,
        t.read.kind === 'index' && t.read.index,
      ]),
    ).toEqual([
      ['cos', 2, 'l$tab0', expect.objectContaining({ kind: 'var', name: 'k' })],
      ['sin', 2, 'l$tab1', expect.objectContaining({ kind: 'var', name: 'k' })],
    ])
  })

  it('rewrites expressions, in the loop and in nested loops alike, and shares one table per primitive and array', () => {
    const text = `fn f(y: f64[], w: f64[], n: i32, m: i32) {
  for l in n - 1..=0 by -1 {
    y[l] += exp(w[0])
    for j in 0..m { y[l] += exp(w[j]) * exp(w[m - 1 - j]) }
  }
}`
    expect(
      tabulated(text),
    ).toBe(`if (n - 1 + -1 >= 0 && max(0.0, f64(n - 1) + 1.0) * (1.0 + max(0.0, f64(m)) * 2.0) > f64(len(w)) && $apart(w, y), ~) {
  l$tab0: f64[] <- zeros(len(w))
  for l$tj1 in 0..len(w) {
    l$tab0[l$tj1] += exp(w[l$tj1])
  }
  for l in n - 1..=0 by -1 {
    y[l] += l$tab0[0]
    for j in 0..m {
      y[l] += l$tab0[j] * l$tab0[m - 1 - j]
    }
  }
  @unchecked {
    for l$tj1 in 0..len(w) {
      l$tab0[l$tj1] -= exp(w[l$tj1])
    }
    l$tab0 -> zeros(len(w))
  }
} else {
  for l in n - 1..=0 by -1 {
    y[l] += exp(w[0])
    for j in 0..m {
      y[l] += exp(w[j]) * exp(w[m - 1 - j])
    }
  }
}`)
  })

  it('leaves loops alone where a table would not pay or could be wrong', () => {
    // the index reads the outer loop's variable: each iteration reads other elements
    expect(
      unchanged(`fn f(y: f64[], w: f64[], n: i32, m: i32) {
  for l in 0..n { for j in 0..m { y[j] += cos(w[j + l]) } }
}`),
    ).toBe(true)
    // ... or an ancilla computed from it
    expect(
      unchanged(`fn f(y: f64[], w: f64[], n: i32, m: i32) {
  for l in 0..n { k: i32 <- l; for j in 0..m { y[j] += cos(w[k]) }; k -> l }
}`),
    ).toBe(true)
    // ... or a counter that carries over from one iteration to the next
    expect(
      unchanged(`fn f(y: f64[], w: f64[], n: i32, m: i32, k: i32) {
  for l in 0..n { for j in 0..m { y[j] += cos(w[k]); INC(k) } }
}`),
    ).toBe(true)
    // the loop writes the array
    expect(
      unchanged(`fn f(y: f64[], w: f64[], n: i32, m: i32) {
  for l in 0..n { for j in 0..m { y[j] += cos(w[j]) }; w[l] += 1.0 }
}`),
    ).toBe(true)
    // a primitive that is one instruction (sqrt, abs): a load is no cheaper
    expect(
      unchanged(`fn f(y: f64[], w: f64[], n: i32, m: i32) {
  for l in 0..n { for j in 0..m { y[j] += sqrt(w[j]) + abs(w[j]) } }
}`),
    ).toBe(true)
    // not from a nested loop: each element is read once per iteration at most
    expect(
      unchanged(`fn f(y: f64[], w: f64[], n: i32, m: i32) {
  for l in 0..n { y[l] += cos(w[m]) * y[l + 1] }
}`),
    ).toBe(true)
    // a step that is not a literal
    expect(
      unchanged(`fn f(y: f64[], w: f64[], n: i32, m: i32, s: i32) {
  for l in 0..n by s { for j in 0..m { y[j] += cos(w[j]) } }
}`),
    ).toBe(true)
  })

  it('runs in `optimize` with run-time checks on too', () => {
    // (with the column stride n, \`interchange\` cannot prove the columns disjoint and leaves the loop)
    const f = fnOf(umm.replaceAll('m * l', 'n * l'))
    const program = {
      functions: new Map([['f', f]]),
      hosts: [],
      writes: new Map([['f', [true, false, false, false]]]),
      registry,
    }
    const inverses = new Map<string, FunctionDef>()
    const has = (checks: boolean) =>
      printFunction(optimize(program, inverses, { checks, tolerance: 1e-8 }).program.functions.get('f')!).includes(
        '$tab',
      )
    expect(has(false)).toBe(true)
    expect(has(true)).toBe(true)
    // with checks on, the tables' uncomputes go (their deallocations are unchecked, nothing reads them after)
    const text = printFunction(
      optimize(program, inverses, { checks: true, tolerance: 1e-8 }).program.functions.get('f')!,
    )
    expect(text).toMatch(/@unchecked \{\s*l\$tab1 -> zeros\(len\(theta\)\)\s*l\$tab0 -> zeros\(len\(theta\)\)\s*\}/)
    expect(text).not.toMatch(/-= (cos|sin)\(/)
    expect(body(tabulate(f, registry))).toMatch(/l\$tab0\[l\$tj\d\] -= cos\(theta\[l\$tj\d\]\)/)
  })

  it('keeps the bounds check of the element a table read replaces (checks on): the array the program reads, its name', () => {
    const src = `fn f(y: f64[], x: f64[], theta: f64[], n: i32, m: i32) {
  for l in 0..n {
    for j in 0..m {
      y[j] += x[j] * cos(theta[j])
    }
  }
}`
    const f = tabulate(fnOf(src), registry)
    expect(body(f)).toContain('y[j] += x[j] * l$tab0[j]')
    const program = check(parse(src, []).functions, [], registry)
    const checked = body(insertChecksFunction(f, { ...program, functions: new Map([['f', f]]) }))
    // the table read: checked against theta, as the read of theta[k] was; the table's own loops: proven
    expect(checked).toContain(
      'assert outOfBounds($inrange(j, len(theta))) else ("theta", j, len(theta))\n      y[j] += x[j] * l$tab0[j]',
    )
    expect(checked).not.toContain('l$tab0))')
    expect(checked).not.toContain('"l$tab0"')
  })
  describe('the cost guard: the tables are built when the loop evaluates more than they cost', () => {
    /** The value of a guard expression (i32/f64 arithmetic, comparisons, f64, max, len). */
    const value = (e: Expr, env: Record<string, number>, lengths: Record<string, number>): number => {
      switch (e.kind) {
        case 'num':
          return e.value
        case 'bool':
          return e.value ? 1 : 0
        case 'var':
          return env[e.name]!
        case 'binary': {
          const a = value(e.left, env, lengths),
            b = value(e.right, env, lengths)
          const ops: Record<string, number> = {
            '+': a + b,
            '-': a - b,
            '*': a * b,
            '/': a / b,
            '<': +(a < b),
            '>': +(a > b),
            '>=': +(a >= b),
            '&&': +(a !== 0 && b !== 0),
          }
          return ops[e.op]!
        }
        case 'call':
          if (e.callee === 'len') return lengths[(e.args[0] as { name: string }).name]!
          if (e.callee === 'f64') return value(e.args[0]!, env, lengths)
          // (the arrays are apart: the cost guard is what these cases test)
          if (e.callee === '$apart') return 1
          if (e.callee === 'max') return Math.max(...e.args.map((a) => value(a, env, lengths)))
          throw new Error(`no ${e.callee}`)
        default:
          throw new Error(e.kind)
      }
    }
    /** Whether the tables of the function's first loop are built for these values. */
    const built = (text: string, env: Record<string, number>, lengths: Record<string, number>): boolean => {
      const s = tabulate(fnOf(text), registry).body.find((x) => x.kind === 'if')
      if (s?.kind !== 'if') throw new Error('not tabulated')
      return value(s.pre, env, lengths) !== 0
    }

    it('counts a triangular nest exactly: the rotations of Listing 14 pay from the second column on', () => {
      const m = 6,
        len = (m * (m - 1)) / 2
      expect(built(umm, { n: 1, m }, { theta: len })).toBe(false)
      expect(built(umm, { n: 2, m }, { theta: len })).toBe(true)
      // an angle array longer than the rotations use: the table pays only when it is used often enough
      expect(built(umm, { n: 2, m }, { theta: 100 })).toBe(false)
      expect(built(umm, { n: 7, m }, { theta: 100 })).toBe(true)
    })

    it('builds no table of a large array when each iteration reads a few of its elements', () => {
      const few = `fn f(y: f64[], w: f64[], n: i32) {
  for l in 0..n { for j in 0..3 { y[j] += cos(w[j + 5]) } }
}`
      // 2 iterations × 3 evaluations against a table of 1000
      expect(built(few, { n: 2 }, { w: 1000 })).toBe(false)
      expect(built(few, { n: 400 }, { w: 1000 })).toBe(true)
      expect(built(few, { n: 2 }, { w: 4 })).toBe(true)
      // a literal step: a lower bound of the trips (0, 3, 6, 9: 4 trips, counted as 10 / 3)
      const stepped = `fn f(y: f64[], w: f64[], n: i32) {
  for l in 0..=n by 3 { for j in 0..3 { y[j] += cos(w[j + 5]) } }
}`
      expect(built(stepped, { n: 9 }, { w: 10 })).toBe(false)
      expect(built(stepped, { n: 9 }, { w: 9 })).toBe(true)
    })

    it('builds no table whose evaluations it cannot count: a range the loop writes, a branch, a while', () => {
      // the inner range reads c, which the loop writes
      expect(
        unchanged(`fn f(y: f64[], w: f64[], n: i32, c: i32) {
  for l in 0..n { for j in 0..c { y[j] += cos(w[j]) }; c += 1 }
}`),
      ).toBe(true)
      // evaluated only in a branch
      expect(
        unchanged(`fn f(y: f64[], w: f64[], n: i32, m: i32) {
  for l in 0..n { if (m > 2, ~) { for j in 0..m { y[j] += cos(w[j]) } } }
}`),
      ).toBe(true)
      // a step that is not a literal in the nest
      expect(
        unchanged(`fn f(y: f64[], w: f64[], n: i32, m: i32, s: i32) {
  for l in 0..n { for j in 0..m by s { y[j] += cos(w[j]) } }
}`),
      ).toBe(true)
    })
  })
})
