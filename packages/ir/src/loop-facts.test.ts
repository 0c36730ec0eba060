/**
 * `nonzeroInLoops` on the loops of small checked programs: which index differences a loop's range
 * proves nonzero inside its body, and which it must not (the cpu backend's
 * `loop-facts-programs.test.ts` checks generated code and runs against the interpreter).
 */
import { describe, expect, it } from 'vitest'
import { check, createRegistry, parse, type FunctionDef, type Stmt } from './index.js'
import { type EnclosingLoop, nonzeroInLoops } from './loop-facts.js'
import { writtenNames } from './passes/hoist-invariants.js'
import { polynomial } from './passes/interchange.js'

const registry = createRegistry()
const fnOf = (text: string): FunctionDef => {
  const m = parse(text, [])
  return check(m.functions, m.hosts, registry).functions.get('f')!
}
type ForStmt = Extract<Stmt, { kind: 'for' }>

/** The loops from the function's first statement down through first statements that are loops, outermost first. */
function nest(f: FunctionDef): EnclosingLoop[] {
  const out: EnclosingLoop[] = []
  let body = f.body
  while (body[0]?.kind === 'for') {
    const loop = body[0] as ForStmt
    out.push({ loop, written: writtenNames(loop.body) })
    body = loop.body
  }
  return out
}

/** The difference of the indices of the first two element reads of the innermost loop's first update (first minus second). */
function difference(f: FunctionDef) {
  const loops = nest(f)
  const s = loops[loops.length - 1]!.loop.body[0] as Extract<Stmt, { kind: 'update' }>
  const idx: Extract<Stmt, { kind: 'update' }>['target'][] = []
  const visit = (e: { kind: string }): void => {
    if (e.kind === 'index') idx.push(e as never)
    for (const v of Object.values(e)) if (v && typeof v === 'object' && 'kind' in v) visit(v as { kind: string })
  }
  visit(s.target)
  visit(s.value)
  const [a, b] = idx as Array<Extract<Stmt, { kind: 'update' }>['target'] & { index: never }>
  const p = polynomial(a!.index)!,
    q = polynomial(b!.index)!
  const d = new Map(p)
  for (const [m, c] of q) d.set(m, (d.get(m) ?? 0) - c)
  for (const [m, c] of [...d]) if (c === 0) d.delete(m)
  return { d, loops }
}

const proved = (text: string): boolean => {
  const { d, loops } = difference(fnOf(text))
  return nonzeroInLoops(d, loops)
}

describe('nonzeroInLoops', () => {
  it("proves the rows of a stencil's history apart where the inner range is empty for the one bad stride", () => {
    // (t + 1)·n + i − (t·n + i) = n: zero only for n = 0, where 1..n − 1 is 1..−1
    expect(
      proved(
        'fn f(g: f64[], n: i32, T: i32) { for t in 0..T { for i in 1..n - 1 { g[(t + 1) * n + i] += g[t * n + i] } } }',
      ),
    ).toBe(true)
    // n + 1: zero for n = −1 (1..−2); n − 1: zero for n = 1 (1..0)
    expect(
      proved(
        'fn f(g: f64[], n: i32, T: i32) { for t in 0..T { for i in 1..n - 1 { g[(t + 1) * n + i] += g[t * n + i - 1] } } }',
      ),
    ).toBe(true)
    expect(
      proved(
        'fn f(g: f64[], n: i32, T: i32) { for t in 0..T { for i in 1..n - 1 { g[(t + 1) * n + i] += g[t * n + i + 1] } } }',
      ),
    ).toBe(true)
    // reversed and inclusive ranges: the same values
    expect(proved('fn f(g: f64[], n: i32) { for i in reverse 1..n - 1 { g[i + n] += g[i] } }')).toBe(true)
    expect(proved('fn f(g: f64[], n: i32) { for i in 1..=n - 1 { g[i + n] += g[i] } }')).toBe(true)
    // a loop variable's range: i − 3 is not zero in 5..9
    expect(proved('fn f(g: f64[]) { for i in 5..9 { g[i] += g[3] } }')).toBe(true)
  })

  it('proves nothing where the range may hold the bad value, or the body writes the name', () => {
    // n − 5 is zero for n = 5, where 0..n runs
    expect(proved('fn f(g: f64[], n: i32) { for i in 0..n { g[i + n] += g[i + 5] } }')).toBe(false)
    // the range does not read n
    expect(proved('fn f(g: f64[], n: i32, m: i32) { for i in 0..m { g[i + n] += g[i] } }')).toBe(false)
    // n ≠ 0 at the start, but the body changes n
    expect(proved('fn f(g: f64[], n: i32, k: i32) { for i in 1..n - 1 { g[i + n] += g[i]\n n += k } }')).toBe(false)
    // 2·n is zero modulo 2³² for n = 2³¹ too: only ±x + c counts
    expect(proved('fn f(g: f64[], n: i32) { for i in 1..n - 1 { g[i + 2 * n] += g[i] } }')).toBe(false)
    // two names
    expect(proved('fn f(g: f64[], n: i32, m: i32) { for i in 1..n - m { g[i + n] += g[i + m] } }')).toBe(false)
    // a loop variable whose range holds the value
    expect(proved('fn f(g: f64[]) { for i in 0..9 { g[i] += g[3] } }')).toBe(false)
    // a range with a stepped variable: nothing
    expect(proved('fn f(g: f64[]) { for i in 5..9 by 2 { g[i] += g[3] } }')).toBe(false)
  })

  it('takes the innermost loop that binds a name as the one that names it', () => {
    const f = fnOf('fn f(g: f64[], n: i32) { for i in 1..n - 1 { for n2 in 0..3 { g[n2 + n] += g[n2] } } }')
    const loops = nest(f)
    // n (the parameter): the outer range proves n ≠ 0; n2 − 7: the inner variable's range (0..3) proves it
    expect(nonzeroInLoops(new Map([['n', 1]]), loops)).toBe(true)
    expect(
      nonzeroInLoops(
        new Map([
          ['n2', 1],
          ['', -7],
        ]),
        loops,
      ),
    ).toBe(true)
    expect(
      nonzeroInLoops(
        new Map([
          ['n2', 1],
          ['', -2],
        ]),
        loops,
      ),
    ).toBe(false)
    // without the loops, or with a body that may write anything, nothing is known
    expect(nonzeroInLoops(new Map([['n', 1]]), [])).toBe(false)
    expect(
      nonzeroInLoops(
        new Map([['n', 1]]),
        loops.map((l) => ({ ...l, written: undefined })),
      ),
    ).toBe(false)
  })
})
