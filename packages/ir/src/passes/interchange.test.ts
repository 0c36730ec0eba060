/**
 * Passes `interchange` and `hoist-calls` on printed IR before and after, and the dependence test
 * on the cases that must stay as they are. The compiled programs are checked against the
 * interpreter (checks on and off, random column programs) in `@tenet/backend-cpu`'s
 * `interchange-programs.test.ts`.
 */
import { describe, expect, it } from 'vitest'
import { check, createRegistry, type FunctionDef, parse, printFunction, printStmts, type Stmt } from '../index.js'
import { walk } from '../check.js'
import { hoistCalls, interchangeLoops, optimize, polynomial, provedNonNegative } from './index.js'

const registry = createRegistry()
const fnOf = (text: string, name = 'f'): FunctionDef =>
  check(parse(text, []).functions, [], registry).functions.get(name)!
/** The printed body of a function, one statement a line, without the signature. */
const body = (f: FunctionDef): string => printStmts(f.body, 0)
const moved = (text: string) => withoutApart(body(interchangeLoops(fnOf(text), registry)), fnOf(text))
const unchanged = (text: string) => {
  const f = fnOf(text)
  return printFunction(interchangeLoops(f, registry)) === printFunction(f)
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

/** Its adjoint as the AD transform writes it (`$adj$ROT` inlined): θ's gradient summed over the columns. */
const adjoint = `fn f(x: f64[], theta: f64[], m: i32, n: i32, g_x: f64[], g_theta: f64[]) {
  for l in reverse 0..n {
    k: i32 <- len(theta)
    for j in reverse 0..m {
      for i in reverse m - 2..=j by -1 {
        ~INC(k)
        ~ROT(x[i + m * l], x[i + 1 + m * l], theta[k])
        g_theta[k] += g_x[i + 1 + m * l] * (cos(theta[k]) * x[i + m * l] - sin(theta[k]) * x[i + 1 + m * l]) - g_x[i + m * l] * (sin(theta[k]) * x[i + m * l] + cos(theta[k]) * x[i + 1 + m * l])
        IROT(g_x[i + m * l], g_x[i + 1 + m * l], theta[k])
      }
    }
    k -> 0
  }
}`

describe('pass `interchange`', () => {
  it('moves the loop over columns inside the nest of rotations, the counter stepped once per rotation', () => {
    expect(moved(umm)).toBe(`if (0 < n, ~) {
  k: i32 <- 0
  for j in 0..m {
    for i in m - 2..=j by -1 {
      for l in 0..n {
        ROT(x[i + m * l], x[i + 1 + m * l], theta[k])
      }
      INC(k)
    }
  }
  k -> len(theta)
}`)
  })

  it("moves the adjoint's loop too: θ's gradient is summed by the counter, in the same order", () => {
    expect(moved(adjoint)).toBe(`if (0 < n, ~) {
  k: i32 <- len(theta)
  for j in reverse 0..m {
    for i in reverse m - 2..=j by -1 {
      ~INC(k)
      for l in reverse 0..n {
        ~ROT(x[i + m * l], x[i + 1 + m * l], theta[k])
        g_theta[k] += g_x[i + 1 + m * l] * (cos(theta[k]) * x[i + m * l] - sin(theta[k]) * x[i + 1 + m * l]) - g_x[i + m * l] * (sin(theta[k]) * x[i + m * l] + cos(theta[k]) * x[i + 1 + m * l])
        IROT(g_x[i + m * l], g_x[i + 1 + m * l], theta[k])
      }
    }
  }
  k -> 0
}`)
  })

  it('leaves loops whose columns it cannot prove independent', () => {
    // the row i + 1 reaches the next column when i runs to m − 1
    expect(unchanged(umm.replace('m - 2..=j by -1', 'm - 1..=j by -1'))).toBe(true)
    // a stride that is not the column length (n columns of n rows are not m rows)
    expect(unchanged(umm.replaceAll('m * l', 'n * l'))).toBe(true)
    // two strides for one array
    expect(unchanged(umm.replace('x[i + 1 + m * l]', 'x[i + 1 + (m + 1) * l]'))).toBe(true)
    // a stride that depends on the nest
    expect(unchanged(umm.replaceAll('m * l', 'j * l'))).toBe(true)
    // the range of the nest reads the column
    expect(unchanged(umm.replace('for j in 0..m', 'for j in 0..m - l'))).toBe(true)
    // a scalar written by every column
    expect(
      unchanged(umm.replace('INC(k)', 'INC(k)\n        s += x[i + m * l]').replace('n: i32)', 'n: i32, s: f64)')),
    ).toBe(true)
    // the counter stepped by what the columns write
    expect(unchanged(umm.replace('INC(k)', 'k += i32(x[i + m * l])'))).toBe(true)
    // legal, but nothing the columns share to compute once (GMM's sums over K components of d
    // entries): the loop stays, its accesses in the program's order
    expect(
      unchanged(`fn f(q: f64[], e: f64[], s: f64[], d: i32, k: i32) {
  for i in 0..k { for j in 0..d { e[i * d + j] += exp(q[i * d + j])\n s[i] += q[i * d + j] } }
}`),
    ).toBe(true)
    expect(unchanged(umm.replace('ROT(x[i + m * l], x[i + 1 + m * l], theta[k])', 'x[i + m * l] += theta[k]'))).toBe(
      true,
    )
    // no nest: the loop is innermost already
    expect(unchanged('fn f(x: f64[], n: i32) { for l in 0..n { x[l] += 1.0 } }')).toBe(true)
    // a function call in the work (it may write anything it is given)
    expect(
      unchanged(`fn g(a: f64) { a += 1.0 }
fn f(x: f64[], m: i32, n: i32) { for l in 0..n { for i in 0..m { g(x[i + m * l]) } } }`),
    ).toBe(true)
  })

  it("sums by the counter only where each element is one rotation's, summed in one run", () => {
    // (y's update, by column, computes cos(t[k]) for every column: moving the loop pays)
    const reduce = (inner: string) => `fn f(x: f64[], y: f64[], t: f64[], g: f64[], m: i32, n: i32) {
  for l in 0..n {
    k: i32 <- 0
    for j in 0..m {
      for i in 0..m {
        y[i + m * l] += cos(t[k])
        ${inner}
      }
    }
    k -> m * m
  }
}`
    expect(unchanged(reduce('g[k] += x[i + m * l]\n        INC(k)'))).toBe(false)
    expect(unchanged(reduce('g[k] += x[i + m * l]\n        g[k] -= 2.0 * x[i + m * l]\n        INC(k)'))).toBe(false)
    // an element shared by the rotations of a row: the order of the sums would change
    expect(unchanged(reduce('g[j] += x[i + m * l]\n        INC(k)'))).toBe(true)
    // two runs at one counter value (a nested loop between them)
    expect(
      unchanged(
        reduce(
          'g[k] += x[i + m * l]\n        for q in 0..2 { x[i + m * l] *= 2.0 }\n        g[k] += x[i + m * l]\n        INC(k)',
        ),
      ),
    ).toBe(true)
    // a counter that moves both ways
    expect(unchanged(reduce('g[k] += x[i + m * l]\n        INC(k)\n        DEC(k)\n        INC(k)'))).toBe(true)
    // the sum read by the work
    expect(unchanged(reduce('g[k] += x[i + m * l]\n        x[i + m * l] += g[k]\n        INC(k)'))).toBe(true)
  })

  it('proves bounds of polynomial indices from the loop ranges, innermost first', () => {
    const f = fnOf(umm)
    const nest = (f.body[0] as Extract<Stmt, { kind: 'for' }>).body[1] as Extract<Stmt, { kind: 'for' }>
    const inner = nest.body[0] as Extract<Stmt, { kind: 'for' }>
    const bounds = new Map([
      [
        'j',
        {
          lo: polynomial(nest.start)!,
          hi: new Map([
            ['m', 1],
            ['', -1],
          ]),
          depth: 1,
        },
      ],
      ['i', { lo: polynomial(inner.stop)!, hi: polynomial(inner.start)!, depth: 2 }],
    ])
    // i ≥ 0 and m − 2 − i ≥ 0; not i − 1 ≥ 0, not m − 3 − i ≥ 0
    expect(provedNonNegative(new Map([['i', 1]]), bounds)).toBe(true)
    expect(
      provedNonNegative(
        new Map([
          ['m', 1],
          ['', -2],
          ['i', -1],
        ]),
        bounds,
      ),
    ).toBe(true)
    expect(
      provedNonNegative(
        new Map([
          ['i', 1],
          ['', -1],
        ]),
        bounds,
      ),
    ).toBe(false)
    expect(
      provedNonNegative(
        new Map([
          ['m', 1],
          ['', -3],
          ['i', -1],
        ]),
        bounds,
      ),
    ).toBe(false)
    expect([...polynomial(inner.start)!]).toEqual([
      ['m', 1],
      ['', -2],
    ])
  })
})

describe('pass `hoist-calls`', () => {
  it("computes a rotation's cos θ and sin θ once before the loop over columns, and marks the call", () => {
    const f = hoistCalls(interchangeLoops(fnOf(adjoint), registry), registry)
    expect(withoutApart(body(f), fnOf(adjoint))).toBe(`if (0 < n, ~) {
  k: i32 <- len(theta)
  for j in reverse 0..m {
    for i in reverse m - 2..=j by -1 {
      ~INC(k)
      l$hc0: f64 <- 0.0
      l$hc1: f64 <- 0.0
      if (0 < n, ~) {
        l$hc0 += cos(theta[k])
        l$hc1 += sin(theta[k])
      }
      for l in reverse 0..n {
        ~ROT(x[i + m * l], x[i + 1 + m * l], theta[k])
        g_theta[k] += g_x[i + 1 + m * l] * (l$hc0 * x[i + m * l] - l$hc1 * x[i + 1 + m * l]) - g_x[i + m * l] * (l$hc1 * x[i + m * l] + l$hc0 * x[i + 1 + m * l])
        IROT(g_x[i + m * l], g_x[i + 1 + m * l], theta[k])
      }
      @unchecked {
        if (0 < n, ~) {
          l$hc1 -= sin(theta[k])
          l$hc0 -= cos(theta[k])
        }
        l$hc1 -> 0.0
        l$hc0 -> 0.0
      }
    }
  }
  k -> 0
}`)
    const marks: string[] = []
    walk(f.body, (s) => {
      if (s.kind === 'callstmt' && s.tabulated)
        for (const t of s.tabulated)
          marks.push(`${s.callee} ${t.callee}(arg ${t.arg}) = ${t.read.kind === 'var' && t.read.name}`)
    })
    expect(marks).toEqual([
      'ROT cos(arg 2) = l$hc0',
      'ROT sin(arg 2) = l$hc1',
      'IROT cos(arg 2) = l$hc0',
      'IROT sin(arg 2) = l$hc1',
    ])
  })

  it('leaves calls of values the loop writes, and cheap primitives', () => {
    const f = fnOf(`fn f(x: f64[], a: f64, n: i32) {
  for l in 0..n {
    x[l] += cos(x[0]) + sqrt(a) + sin(f64(l))
  }
}`)
    expect(printFunction(hoistCalls(f, registry))).toBe(printFunction(f))
  })

  it('run in `optimize` with run-time checks too, where the uncompute of the hoisted values is left out', () => {
    const program = {
      functions: new Map([['f', fnOf(umm)]]),
      hosts: [],
      writes: new Map([['f', [true, false, false, false]]]),
      registry,
    }
    const text = (checks: boolean) =>
      body(optimize(program, new Map(), { checks, tolerance: 1e-8 }).program.functions.get('f')!)
    for (const checks of [false, true]) {
      expect(text(checks)).toMatch(/for i in [^\n]*\n *l\$hc0: f64 <- 0\.0/)
      expect(text(checks).indexOf('for l in')).toBeGreaterThan(text(checks).indexOf('for i in'))
    }
    // without checks `dead-ancillas` drops the uncompute; with checks the pass leaves it out: one
    // cos per rotation, before the column loop, and none after it
    expect(text(true).match(/cos\(/g)?.length).toBe(text(false).match(/cos\(/g)?.length)
    expect(text(true)).toMatch(
      /@unchecked \{\n *l\$hc3 -> 0\.0\n *l\$hc2 -> 0\.0\n *l\$hc1 -> 0\.0\n *l\$hc0 -> 0\.0\n *\}/,
    )
  })
})
