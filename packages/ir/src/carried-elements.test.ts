/**
 * The analysis `carriedElements` on its own: which elements of a loop one iteration writes and the
 * next reads back (the code generators keep them in locals; the compiled programs are checked
 * against plain JavaScript in `carried-elements-programs.test.ts` of the cpu backend).
 */
import { describe, expect, it } from 'vitest'
import type { ForStmt, FunctionDef, Stmt } from './ast.js'
import { carriedElements } from './carried-elements.js'
import { check } from './check.js'
import { createRegistry } from './create-registry.js'
import { parse } from './parser.js'

const fn = (text: string): FunctionDef => check(parse(text).functions, [], createRegistry()).functions.get('f')!

/** The first `for` loop of a body, at any depth. */
function firstLoop(body: Stmt[]): ForStmt | undefined {
  for (const s of body) {
    if (s.kind === 'for') return s
    const inner =
      s.kind === 'if'
        ? firstLoop([...s.then, ...s.else])
        : 'body' in s
          ? firstLoop((s as { body: Stmt[] }).body)
          : undefined
    if (inner) return inner
  }
  return undefined
}

/** `array write -> read` for each carried element of the function's first loop. */
const carried = (text: string): string[] =>
  carriedElements(firstLoop(fn(text).body)!).map((c) => `${c.array} ${c.write} -> ${c.read}`)

describe('carriedElements', () => {
  it('a Horner recurrence counting down: acc[k] written, acc[k + 1] read', () => {
    expect(
      carried(`
fn f(y: f64, acc: f64[], c: f64[], x: f64) {
  for k in len(c) - 2..=0 by -1 { acc[k] += acc[k + 1] * x + c[k] }
}`),
    ).toEqual(['acc 1*k -> 1+1*k'])
  })

  it('a prefix sum counting up, and the same loop reversed', () => {
    expect(carried('fn f(s: f64[], x: f64[]) { for i in 1..len(x) { s[i] += s[i - 1] + x[i] } }')).toEqual([
      's 1*i -> -1+1*i',
    ])
    // counting down, iteration i reads what iteration i + 1 wrote
    expect(carried('fn f(s: f64[], x: f64[]) { for i in 1..len(x) by -1 { s[i] -= s[i + 1] } }')).toEqual([
      's 1*i -> 1+1*i',
    ])
  })

  it('an integrator history of stride 2: two carried elements', () => {
    expect(
      carried(`
fn f(xs: f64[], h: f64, n: i32) {
  for t in 0..n {
    xs[2 * t + 2] += xs[2 * t] + h * xs[2 * t + 1]
    xs[2 * t + 3] += xs[2 * t + 1] - h * xs[2 * t]
  }
}`),
    ).toEqual(['xs 2+2*t -> 2*t', 'xs 3+2*t -> 1+2*t'])
  })

  it('nothing where the element read is not the one the previous iteration wrote, or may change in between', () => {
    // the next iteration writes what this one reads (an anti-dependence)
    expect(carried('fn f(a: f64[]) { for i in 0..len(a) - 1 { a[i] += a[i + 1] } }')).toEqual([])
    // a write under a condition: not every iteration writes
    expect(carried('fn f(a: f64[], c: bool) { for i in 1..len(a) { if (c, ~) { a[i] += a[i - 1] } } }')).toEqual([])
    // a second write of the array elsewhere in the body
    expect(
      carried('fn f(a: f64[], b: f64[]) { for i in 1..len(a) { a[i] += a[i - 1]\n for j in 0..1 { a[j] += 1.0 } } }'),
    ).toEqual([])
    // an index that the body changes
    expect(carried('fn f(a: f64[], m: i32) { for i in 1..len(a) { a[i + m] += a[i + m - 1]\n m += 1 } }')).toEqual([])
    // another write whose index differs from the carried one's by more than a constant: y[2i]
    // is the element y[i + 1] that the next iteration (counting down) reads, at i = 1
    expect(
      carried(
        'fn f(y: f64[], x: f64[]) { for i in 3..=0 by -1 { y[i] += x[i]\n x[i] += y[i + 1]\n y[2 * i] += 1.0 } }',
      ),
    ).toEqual([])
    // at a constant distance c: carried unless c = α·d (it writes what the next iteration reads)
    expect(carried('fn f(y: f64[]) { for i in 1..9 { y[i] += y[i - 1]\n y[i + 2] += 1.0 } }')).toEqual([
      'y 1*i -> -1+1*i',
    ])
    expect(carried('fn f(y: f64[]) { for i in 1..9 { y[i + 1] += y[i]\n y[i] += 1.0 } }')).toEqual([])
    // a step other than ±1, a non-linear index, an i32 array
    expect(carried('fn f(a: f64[]) { for i in 1..len(a) by 2 { a[i] += a[i - 1] } }')).toEqual([])
    expect(carried('fn f(a: f64[]) { for i in 1..len(a) { a[i * i] += a[(i - 1) * (i - 1)] } }')).toEqual([])
    expect(carried('fn f(a: i32[]) { for i in 1..len(a) { a[i] += a[i - 1] } }')).toEqual([])
    // the array passed whole to a call
    expect(
      carried(`
fn g(a: f64[], y: f64) { y += a[0] }
fn f(a: f64[], y: f64) { for i in 1..len(a) { a[i] += a[i - 1]\n g(a, y) } }`),
    ).toEqual([])
  })

  it("signFree: every read of the element in its own write's value, under +, − and × only", () => {
    const free = (text: string): boolean[] => carriedElements(firstLoop(fn(text).body)!).map((c) => c.signFree)
    // Horner, a prefix sum, a negated and squared read
    expect(
      free('fn f(acc: f64[], c: f64[], x: f64) { for k in len(c) - 2..=0 by -1 { acc[k] += acc[k + 1] * x + c[k] } }'),
    ).toEqual([true])
    expect(free('fn f(s: f64[], x: f64[]) { for i in 1..len(x) { s[i] += -s[i - 1] * s[i - 1] - x[i] } }')).toEqual([
      true,
    ])
    // a read in another statement, under a division or a call, in a condition: not
    expect(
      free('fn f(s: f64[], x: f64[], y: f64) { for i in 1..len(x) { s[i] += s[i - 1] + x[i]\n y += s[i - 1] } }'),
    ).toEqual([false])
    expect(free('fn f(s: f64[], x: f64[]) { for i in 1..len(x) { s[i] += x[i] / s[i - 1] } }')).toEqual([false])
    expect(free('fn f(s: f64[], x: f64[]) { for i in 1..len(x) { s[i] += sqrt(s[i - 1]) + x[i] } }')).toEqual([false])
    expect(
      free(
        'fn f(s: f64[], x: f64[], y: f64) { for i in 1..len(x) { s[i] += s[i - 1] + x[i]\n if (s[i - 1] > 0.0, ~) { y += 1.0 } } }',
      ),
    ).toEqual([false])
    // a write that subtracts (its first write is 0 − e, not 0 + e): not
    expect(free('fn f(s: f64[], x: f64[]) { for i in 1..len(x) { s[i] -= s[i - 1] + x[i] } }')).toEqual([false])
  })
})
