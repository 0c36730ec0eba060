/**
 * Pass `jam` on printed IR before and after (the shapes `interchange` leaves), and the cases it
 * must refuse. The compiled programs are checked against the interpreter (checks on and off,
 * random column programs) in `@tenet/backend-cpu`'s `interchange-programs.test.ts` and
 * `jam-programs.test.ts`.
 */
import { describe, expect, it } from 'vitest'
import { check, createRegistry, type FunctionDef, parse, printFunction, printStmts } from '../index.js'
import { interchangeLoops, jamLoops } from './index.js'
import { walk } from '../check.js'
import { printAsWritten, printExpr } from '../printer.js'
import { offsetOf } from '../cse.js'
import type { Expr } from '../ast.js'

const registry = createRegistry()
const fnOf = (text: string, name = 'f'): FunctionDef =>
  check(parse(text, []).functions, [], registry).functions.get(name)!
const body = (f: FunctionDef): string => printStmts(f.body, 0)
const jammed = (text: string) =>
  withoutApart(body(jamLoops(interchangeLoops(fnOf(text), registry), registry)), fnOf(text))
const unchanged = (text: string) => {
  const f = interchangeLoops(fnOf(text), registry)
  return printFunction(jamLoops(f, registry)) === printFunction(f)
}

/**
 * The printed result of `interchange` (and `jam`) on a function whose body is one loop, without
 * its alias guard: the \`$apart\` tests of the \`if\` left out, and the \`else\` branch, checked to be
 * the loop as written (see \`apart.ts\`; \`aliased-arrays.test.ts\` of \`@tenet/backend-wasm\` runs both).
 */
function withoutApart(printed: string, original: FunctionDef): string {
  const lines = printed.split('\n')
  const at = lines.indexOf('} else {')
  if (at < 0) return printed
  expect(lines[0]).toMatch(/ && \$apart\(\w+, \w+\), ~\) \{$/)
  expect(lines.at(-1)).toBe('}')
  const fallback = lines
    .slice(at + 1, -1)
    .map((l) => l.slice(2))
    .join('\n')
  expect(fallback).toBe(body(original))
  return [lines[0]!.replace(/( && \$apart\(\w+, \w+\))+, ~\) \{$/, ', ~) {'), ...lines.slice(1, at), '}'].join('\n')
}
/** Paper 000 Listing 14 (interchange moves the column loop innermost). */
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

/** Its adjoint as the AD transform writes it: θ's gradient summed over the columns at k. */
const adjoint = `fn f(x: f64[], theta: f64[], m: i32, n: i32, g_x: f64[], g_theta: f64[]) {
  for l in reverse 0..n {
    k: i32 <- len(theta)
    for j in reverse 0..m {
      for i in reverse m - 2..=j by -1 {
        ~INC(k)
        ~ROT(x[i + m * l], x[i + 1 + m * l], theta[k])
        g_theta[k] += g_x[i + 1 + m * l] * x[i + m * l] - g_x[i + m * l] * x[i + 1 + m * l]
        IROT(g_x[i + m * l], g_x[i + 1 + m * l], theta[k])
      }
    }
    k -> 0
  }
}`

describe('pass `jam`', () => {
  it('prints the IR before and after', () => {
    expect(jammed(umm)).toMatchInlineSnapshot(`
      "if (0 < n, ~) {
        k: i32 <- 0
        for j in 0..m {
          if (m - 2 >= j && (m - 2 - j >= 1 && m - 2 - j <= 1073741824), ~) {
            for i in m - 2..=j + 1 by -2 {
              for l in 0..n {
                ROT(x[i + m * l], x[i + 1 + m * l], theta[k])
                ROT(x[i - 1 + m * l], x[i + m * l], theta[k + 1])
              }
              INC(k)
              INC(k)
            }
            if ((m - 2 - j + 1) % 2 == 1, ~) {
              for i in j..=j {
                for l in 0..n {
                  ROT(x[i + m * l], x[i + 1 + m * l], theta[k])
                }
                INC(k)
              }
            }
          } else {
            for i in m - 2..=j by -1 {
              for l in 0..n {
                ROT(x[i + m * l], x[i + 1 + m * l], theta[k])
              }
              INC(k)
            }
          }
        }
        k -> len(theta)
      }"
    `)
  })

  it("jams the adjoint: a reverse loop, the step before the inner loop, θ's gradient at one element per copy", () => {
    expect(jammed(adjoint)).toMatchInlineSnapshot(`
      "if (0 < n, ~) {
        k: i32 <- len(theta)
        for j in reverse 0..m {
          if (m - 2 >= j && (m - 2 - j >= 1 && m - 2 - j <= 1073741824), ~) {
            for i in j..=m - 2 - 1 by 2 {
              ~INC(k)
              for l in reverse 0..n {
                ~ROT(x[i + m * l], x[i + 1 + m * l], theta[k])
                g_theta[k] += g_x[i + 1 + m * l] * x[i + m * l] - g_x[i + m * l] * x[i + 1 + m * l]
                IROT(g_x[i + m * l], g_x[i + 1 + m * l], theta[k])
                ~ROT(x[i + 1 + m * l], x[i + 1 + 1 + m * l], theta[k - 1])
                g_theta[k - 1] += g_x[i + 1 + 1 + m * l] * x[i + 1 + m * l] - g_x[i + 1 + m * l] * x[i + 1 + 1 + m * l]
                IROT(g_x[i + 1 + m * l], g_x[i + 1 + 1 + m * l], theta[k - 1])
              }
              ~INC(k)
            }
            if ((m - 2 - j + 1) % 2 == 1, ~) {
              for i in m - 2..=m - 2 {
                ~INC(k)
                for l in reverse 0..n {
                  ~ROT(x[i + m * l], x[i + 1 + m * l], theta[k])
                  g_theta[k] += g_x[i + 1 + m * l] * x[i + m * l] - g_x[i + m * l] * x[i + 1 + m * l]
                  IROT(g_x[i + m * l], g_x[i + 1 + m * l], theta[k])
                }
              }
            }
          } else {
            for i in reverse m - 2..=j by -1 {
              ~INC(k)
              for l in reverse 0..n {
                ~ROT(x[i + m * l], x[i + 1 + m * l], theta[k])
                g_theta[k] += g_x[i + 1 + m * l] * x[i + m * l] - g_x[i + m * l] * x[i + 1 + m * l]
                IROT(g_x[i + m * l], g_x[i + 1 + m * l], theta[k])
              }
            }
          }
        }
        k -> 0
      }"
    `)
  })

  it("names the element both copies access in the first copy's words (so the backends keep it in a register)", () => {
    const pairs = jammed(umm).split('\n').slice(6, 8).join('\n')
    // the second rotation's upper row is the first one's lower row: x[i - 1 + 1 + m * l] is x[i + m * l]
    expect(pairs).not.toContain('- 1 + 1')
    expect(pairs.match(/x\[i \+ m \* l\]/g)).toHaveLength(2)
    // an element only one copy accesses keeps its own words
    expect(pairs).toContain('x[i - 1 + m * l]')
  })

  it('refuses what it cannot prove or what does not pay', () => {
    // the row i + 1 reaches the next column: interchange refuses, and jam sees no inner column loop
    expect(unchanged(umm.replace('m - 2..=j by -1', 'm - 1..=j by -1'))).toBe(true)
    // already interchanged by hand, but the stride reads the counter
    const inner = (
      work: string,
      step = 'INC(k)',
      range = 'm - 2..=j by -1',
      params = '',
    ) => `fn f(x: f64[], theta: f64[], m: i32, n: i32${params}) {
  k: i32 <- 0
  for j in 0..m {
    for i in ${range} {
      for l in 0..n { ${work} }
      ${step}
    }
  }
  k -> len(theta)
}`
    const rot = 'ROT(x[i + m * l], x[i + 1 + m * l], theta[k])'
    expect(unchanged(inner(rot))).toBe(false)
    // step 2: not a loop of consecutive iterations
    expect(unchanged(inner(rot, 'INC(k)', 'm - 2..=j by -2'))).toBe(true)
    // a stride of the counter
    expect(unchanged(inner('ROT(x[i + k * l], x[i + 1 + k * l], theta[k])'))).toBe(true)
    // an element every copy shares (s[j]): the order of its sums would change
    expect(unchanged(inner(`${rot}\n s[j] += x[i + m * l]`, 'INC(k)', 'm - 2..=j by -1', ', s: f64[]'))).toBe(true)
    // an element at the counter, but the counter does not move (shift 0)
    expect(unchanged(inner(`${rot}\n s[k] += x[i + m * l]`, 'INC(k)\n DEC(k)', 'm - 2..=j by -1', ', s: f64[]'))).toBe(
      true,
    )
    // ... and moving, it is fine
    expect(unchanged(inner(`${rot}\n s[k] += x[i + m * l]`, 'INC(k)', 'm - 2..=j by -1', ', s: f64[]'))).toBe(false)
    // a written array read at another column (the next one's row)
    expect(unchanged(inner(`${rot}\n x[i + m * l] += x[i + m * (l + 1)]`))).toBe(true)
    // the inner range reads the outer loop's variable
    expect(unchanged(inner(rot).replace('for l in 0..n', 'for l in 0..i'))).toBe(true)
    // the outer range reads the counter
    expect(unchanged(inner(rot, 'INC(k)', 'm - 2..=k by -1'))).toBe(true)
    // something other than steps around the inner loop
    expect(unchanged(inner(rot, 'INC(k)\n theta[0] += 1.0'))).toBe(true)
    // a function call in the work
    expect(
      unchanged(`fn g(a: f64) { a += 1.0 }
fn f(x: f64[], m: i32, n: i32) { for i in 0..m - 1 { for l in 0..n { g(x[i + m * l]) } } }`),
    ).toBe(true)
    // legal, but the copies share no element: nothing to keep in registers
    expect(unchanged(inner('x[i + m * l] += theta[k]'))).toBe(true)
  })
})

describe('offsetOf (what the backends hold in locals)', () => {
  it('reads base + c, c + base and base − c as offsets of one base', () => {
    const idx = (e: string) => {
      const f = fnOf(`fn f(a: f64[], k: i32) { a[${e}] += 1.0 }`)
      const s = f.body[0]!
      return offsetOf((s as { target: { index: Expr } }).target.index)
    }
    expect(idx('k + 2')).toEqual(idx('2 + k').map((v, i) => (i === 1 ? 2 : v)))
    expect(idx('k - 1')[0]).toBe(idx('k')[0])
    expect(idx('k - 1')[1]).toBe(-1)
    expect(idx('k * 2 - 3')[1]).toBe(-3)
  })

  it("prints the second copy's checks as the source wrote them (the variable and the counters, `Substituted.shown`)", () => {
    const f = jamLoops(
      interchangeLoops(
        fnOf(`fn f(x: f64[], theta: f64[], m: i32, n: i32) {
  k: i32 <- 0
  for i in 0..m - 1 {
    for l in 0..n {
      x[i + m * l] += x[i + 1 + m * l]
      x[i + 1 + m * l] *= theta[k]
    }
    k += 1
  }
  k -> m - 1
}`),
        registry,
      ),
      registry,
    )
    const printed: string[] = []
    walk(f.body, (s) => {
      if (s.kind === 'update' && s.target.kind === 'index')
        printed.push(
          `${printExpr(s.target)} ${s.op} ${printExpr(s.value)} | ${printAsWritten(s.target)} ${s.op} ${printAsWritten(s.value)}`,
        )
    })
    expect(printed.slice(0, 4)).toEqual([
      'x[i + m * l] += x[i + 1 + m * l] | x[i + m * l] += x[i + 1 + m * l]',
      'x[i + 1 + m * l] *= theta[k] | x[i + 1 + m * l] *= theta[k]',
      'x[i + 1 + m * l] += x[i + 1 + 1 + m * l] | x[i + m * l] += x[i + 1 + m * l]',
      'x[i + 1 + 1 + m * l] *= theta[k + 1] | x[i + 1 + m * l] *= theta[k]',
    ])
  })
})
