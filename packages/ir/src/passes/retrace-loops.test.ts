/**
 * Pass `retrace-loops` on printed IR: a series loop and its uncompute (the Bessel listing's
 * approximate multiplier, and a second series whose updates multiply), what the forward loop tests
 * and where the backward loop resumes; and the loops it must leave as they are. The compiled
 * programs fail as the reference interpreter does in the cpu backend's
 * `retrace-loops-programs.test.ts`.
 */
import { describe, expect, it } from 'vitest'
import { check, createRegistry, type FunctionDef, parse, printStmts, type Program } from '../index.js'
import { impliedChecks, insertChecks, retraceLoops } from './index.js'

const registry = createRegistry()

/** The function `f` of `text` with its checks placed (and `implied-checks`), and after pass `retrace-loops` too. */
function passes(text: string): { before: string; after: string } {
  const checked = check(parse(text).functions, [], registry)
  const program: Program = { ...checked, functions: new Map([['f', checked.functions.get('f')!]]) }
  const options = { checks: true, tolerance: 1e-8, backend: 'cpu' }
  const asserted = insertChecks(program, new Map(), options)
  const implied = impliedChecks(asserted.program, asserted.inverses, options)
  const retraced = retraceLoops(implied.program, implied.inverses, options)
  return { before: body(implied.program.functions.get('f')!), after: body(retraced.program.functions.get('f')!) }
}
const body = (f: FunctionDef): string => printStmts(f.body, 0)

/** The Bessel listing's series (paper 001) after inlining, its uncompute written out. */
export const seriesSource = (middle = 'out += identity(out_anc)', backward = '') => `
fn f(out: f64, h2: f64, a0: f64) {
  k: i32 <- 0
  out_anc <- 0.0
  anc1 <- 0.0
  anc3 <- 0.0
  anc4 <- 0.0
  anc1 += identity(a0)
  out_anc += identity(anc1)
  while (abs(anc1) > 1e-8 && abs(anc4) < 1e-8, k != 0) {
    k += 1
    anc3 -= h2 / (f64(k) * f64(k + 2))
    anc4 += anc1 * anc3
    anc1 -= anc4 / anc3
    SWAP(anc1, anc4)
    out_anc += identity(anc1)
    anc3 += h2 / (f64(k) * f64(k + 2))
  }
  ${middle}
  while (k != 0, abs(anc1) > 1e-8 && abs(anc4) < 1e-8) {
    anc3 -= h2 / (f64(k) * f64(k + 2))
    out_anc -= identity(anc1)
    ~SWAP(anc1, anc4)
    anc1 += anc4 / anc3
    anc4 -= anc1 * anc3
    ${backward}anc3 += h2 / (f64(k) * f64(k + 2))
    k -= 1
  }
  out_anc -= identity(anc1)
  anc1 -= identity(a0)
  anc4 -> 0.0
  anc3 -> 0.0
  anc1 -> 0.0
  out_anc -> 0.0
  k -> 0
}`

describe('pass `retrace-loops`', () => {
  it('tests each float update of the forward loop, and resumes the backward loop at the last step that failed', () => {
    const { before, after } = passes(seriesSource())
    expect(after).not.toBe(before)
    expect(after).toBe(`k: i32 <- 0
out_anc <- 0.0
anc1 <- 0.0
anc3 <- 0.0
anc4 <- 0.0
anc1 += identity(a0)
out_anc += identity(anc1)
assert postWhileStart(!(k != 0)) else ("k != 0")
k$rs0: i32 <- k
anc3$rs0: f64 <- anc3
anc4$rs0: f64 <- anc4
anc1$rs0: f64 <- anc1
out_anc$rs0: f64 <- out_anc
while (abs(anc1) > 1e-8 && abs(anc4) < 1e-8, k != 0) {
  k += 1
  anc3$o1: f64 <- anc3
  anc3$e1: f64 <- h2 / (f64(k) * f64(k + 2))
  anc3 -= anc3$e1
  ok$1: bool <- $sameSum(anc3 + anc3$e1, anc3$o1)
  anc4$o2: f64 <- anc4
  anc4$e2: f64 <- anc1 * anc3
  anc4 += anc4$e2
  ok$2: bool <- $sameSum(anc4 - anc4$e2, anc4$o2)
  anc1$o3: f64 <- anc1
  anc1$e3: f64 <- anc4 / anc3
  anc1 -= anc1$e3
  ok$3: bool <- $sameSum(anc1 + anc1$e3, anc1$o3)
  SWAP(anc1, anc4)
  out_anc$o4: f64 <- out_anc
  out_anc$e4: f64 <- identity(anc1)
  out_anc += out_anc$e4
  ok$4: bool <- $sameSum(out_anc - out_anc$e4, out_anc$o4)
  anc3$o5: f64 <- anc3
  anc3$e5: f64 <- h2 / (f64(k) * f64(k + 2))
  anc3 += anc3$e5
  ok$5: bool <- $sameSum(anc3 - anc3$e5, anc3$o5)
  assert postWhileIteration(k != 0) else ("k != 0")
  if (!(ok$1 && ok$2 && ok$3 && ok$4 && ok$5), ~) {
    k$t0: i32 <- k
    SWAP(k$rs0, k$t0)
    anc3$t0: f64 <- anc3
    SWAP(anc3$rs0, anc3$t0)
    anc4$t0: f64 <- anc4
    SWAP(anc4$rs0, anc4$t0)
    anc1$t0: f64 <- anc1
    SWAP(anc1$rs0, anc1$t0)
    out_anc$t0: f64 <- out_anc
    SWAP(out_anc$rs0, out_anc$t0)
  }
}
out += identity(out_anc)
SWAP(k, k$rs0)
SWAP(anc3, anc3$rs0)
SWAP(anc4, anc4$rs0)
SWAP(anc1, anc1$rs0)
SWAP(out_anc, out_anc$rs0)
while (k != 0, abs(anc1) > 1e-8 && abs(anc4) < 1e-8) {
  anc3 -= h2 / (f64(k) * f64(k + 2))
  out_anc -= identity(anc1)
  ~SWAP(anc1, anc4)
  anc1 += anc4 / anc3
  anc4 -= anc1 * anc3
  anc3 += h2 / (f64(k) * f64(k + 2))
  k -= 1
  assert postWhileIteration(abs(anc1) > 1e-8 && abs(anc4) < 1e-8) else ("abs(anc1) > 1e-8 && abs(anc4) < 1e-8")
}
out_anc -= identity(anc1)
anc1 -= identity(a0)
assert dealloc($near(anc4, 0.0)) else ("anc4", "0.0", anc4, 0.0)
anc4 -> 0.0
assert dealloc($near(anc3, 0.0)) else ("anc3", "0.0", anc3, 0.0)
anc3 -> 0.0
assert dealloc($near(anc1, 0.0)) else ("anc1", "0.0", anc1, 0.0)
anc1 -> 0.0
assert dealloc($near(out_anc, 0.0)) else ("out_anc", "0.0", out_anc, 0.0)
out_anc -> 0.0
assert dealloc(k == 0) else ("k", "0", k, 0)
k -> 0`)
  })

  it('a series whose updates multiply: the inverse divides, `$factor` asserts repeated by the backward loop', () => {
    const { after } = passes(`
fn f(out: f64, x: f64) {
  n <- 0.0
  t <- 0.0
  s <- 0.0
  t += 1.0
  s += identity(t)
  while (abs(t) > 1e-16, n != 0.0) {
    n += 1.0
    t *= x / n
    s += identity(t)
  }
  out += identity(s)
  while (n != 0.0, abs(t) > 1e-16) {
    s -= identity(t)
    t /= x / n
    n -= 1.0
  }
  s -= identity(t)
  t -= 1.0
  s -> 0.0
  t -> 0.0
  n -> 0.0
}`)
    expect(after).toContain('ok$2: bool <- $same(t / t$e2, t$o2)')
    expect(after).toContain('ok$1: bool <- $sameSum(n - n$e1, n$o1)')
    expect(after).toMatch(/SWAP\(t, t\$rs0\)\n(SWAP.*\n)*while \(n != 0\.0/)
  })

  it('leaves loops as they are where the backward loop may not retrace the forward one', () => {
    const same = (text: string) => {
      const { before, after } = passes(text)
      expect(after).toBe(before)
    }
    // the statements between write the state, or a value the loops read
    same(seriesSource('out += identity(out_anc)\n  anc4 += 1.0'))
    same(seriesSource('out += identity(out_anc)\n  h2 += 1.0'))
    // the backward loop is not the forward loop inverted (an extra update, or a different value)
    same(seriesSource(undefined, 'out_anc += 1.0\n    '))
    same(seriesSource().replace('anc1 += anc4 / anc3', 'anc1 += anc4 / (anc3 + 0.0)'))
    // a host effect between the loops
    // the forward loop in @unchecked (no entry check: its p need not be false at the start)
    same(
      seriesSource()
        .replace(
          '  while (abs(anc1) > 1e-8 && abs(anc4) < 1e-8, k != 0) {',
          '  @unchecked { while (abs(anc1) > 1e-8 && abs(anc4) < 1e-8, k != 0) {',
        )
        .replace('    anc3 += h2 / (f64(k) * f64(k + 2))\n  }\n', '    anc3 += h2 / (f64(k) * f64(k + 2))\n  } }\n'),
    )
    // the loops inside another loop (see `retraceLoopsFunction`)
    same(`
fn f(out: f64[], x: f64) {
  for i in 0..len(out) {
    n <- 0.0
    t <- 0.0
    t += 1.0
    while (abs(t) > 1e-16, n != 0.0) {
      n += 1.0
      t *= x / n
    }
    out[i] += identity(t)
    while (n != 0.0, abs(t) > 1e-16) {
      t /= x / n
      n -= 1.0
    }
    t -= 1.0
    t -> 0.0
    n -> 0.0
  }
}`)
  })
})
