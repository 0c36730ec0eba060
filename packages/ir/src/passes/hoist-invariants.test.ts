/**
 * Pass `hoist-invariants` on printed IR before and after (the backends' tests check that the
 * compiled programs compute what the interpreter does, checks on and off).
 */
import { describe, expect, it } from 'vitest'
import { check, createRegistry, type FunctionDef, parse, printFunction, printStmts } from '../index.js'
import { effectfulFunctions, hoistInvariants, optimize, writtenNames } from './index.js'
import { mayFailChecked, safetyTest } from './hoist-invariants.js'
import { printExpr } from '../printer.js'
import type { Expr } from '../ast.js'

const fnOf = (text: string, name = 'f'): FunctionDef =>
  check(parse(text, []).functions, [], createRegistry()).functions.get(name)!
/** The printed body of a function, one statement a line, without the signature. */
const body = (f: FunctionDef): string => printStmts(f.body, 0)
const hoisted = (text: string, name = 'f') => body(hoistInvariants(fnOf(text, name)))

describe('pass `hoist-invariants`', () => {
  it('computes an invariant once before the loop and uncomputes it after, a read of an element only when the loop runs', () => {
    const before = `fn f(y: f64[], x: f64[], theta: f64[], j: i32, n: i32, a: f64) {
  for i in 0..n { y[i] += x[i] * cos(theta[j]) + sin(a) * x[i] - cos(theta[j]) }
}`
    expect(hoisted(before)).toBe(`i$inv0: f64 <- 0.0
if (0 < n, ~) {
  i$inv0 += cos(theta[j])
}
i$inv1: f64 <- sin(a)
for i in 0..n {
  y[i] += x[i] * i$inv0 + i$inv1 * x[i] - i$inv0
}
@unchecked {
  i$inv1 -> sin(a)
  if (0 < n, ~) {
    i$inv0 -= cos(theta[j])
  }
  i$inv0 -> 0.0
}`)
  })

  it('with checks on, leaves the guarded uncompute out (the ancilla is freed in @unchecked as it is)', () => {
    const text = `fn f(y: f64[], x: f64[], theta: f64[], j: i32, n: i32, s: f64, a: f64) {
  for i in 0..n { s += cos(theta[j]) * sin(a) }
}`
    expect(body(hoistInvariants(fnOf(text), new Set(), true))).toBe(`i$inv0: f64 <- 0.0
if (0 < n, ~) {
  i$inv0 += cos(theta[j]) * sin(a)
}
for i in 0..n {
  s += i$inv0
}
@unchecked {
  i$inv0 -> 0.0
}`)
    // without checks, the same with the uncompute (which `dead-ancillas` drops)
    expect(body(hoistInvariants(fnOf(text)))).toContain('i$inv0 -= cos(theta[j]) * sin(a)')
  })

  it('with checks on, moves a value that may fail as it is only where nothing before it in the first iteration may fail; elsewhere in a second version of the loop, where a test shows it cannot', () => {
    // (a read out of bounds hoisted before the loop would fail before the check that fails
    // first in the loop as written: a zero factor, a bounds check of the target or an earlier read)
    const hoist = (loop: string) =>
      body(
        hoistInvariants(
          fnOf(`fn f(y: f64[], z: f64[], x: f64[], idx: i32[], k: i32, n: i32, s: f64, a: f64) {
  ${loop}
}`),
          new Set(),
          true,
        ),
      )
    // an earlier statement may fail (zero factor, bounds of y[j] and z[j]): x[idx[k]] moves where
    // it is in range, the loop as written runs elsewhere
    expect(
      hoist('for j in 0..n {\n    y[j] *= z[j]\n    y[j] += x[idx[k]]\n  }'),
    ).toBe(`if (0 < n && (0 <= k && k < len(idx) && 0 <= idx[k] && idx[k] < len(x)), ~) {
  j$inv0: f64 <- x[idx[k]]
  for j in 0..n {
    y[j] *= z[j]
    y[j] += j$inv0
  }
  @unchecked {
    j$inv0 -> x[idx[k]]
  }
} else {
  for j in 0..n {
    y[j] *= z[j]
    y[j] += x[idx[k]]
  }
}`)
    // the statement's own target may fail first; sin(a) cannot fail and moves before the test
    expect(hoist('for j in 0..n {\n    y[j] += x[idx[k]]\n    s += sin(a)\n  }')).toBe(`j$inv1: f64 <- sin(a)
if (0 < n && (0 <= k && k < len(idx) && 0 <= idx[k] && idx[k] < len(x)), ~) {
  j$inv0: f64 <- x[idx[k]]
  for j in 0..n {
    y[j] += j$inv0
    s += j$inv1
  }
  @unchecked {
    j$inv0 -> x[idx[k]]
  }
} else {
  for j in 0..n {
    y[j] += x[idx[k]]
    s += sin(a)
  }
}
@unchecked {
  j$inv1 -> sin(a)
}`)
    // total statements before it (an allocation of a total value, a scalar update): it moves as
    // without checks, under the loop's guard
    expect(
      hoist('for j in 0..n {\n    t <- a * 2.0\n    s += t\n    s += x[idx[k]]\n    t -> a * 2.0\n  }'),
    ).toBe(`j$inv0: f64 <- 0.0
if (0 < n, ~) {
  j$inv0 += x[idx[k]]
}
for j in 0..n {
  t <- a * 2.0
  s += t
  s += j$inv0
  t -> a * 2.0
}
@unchecked {
  j$inv0 -> 0.0
}`)
    // an element the block accessed before the loop cannot fail: it moves after anything
    expect(hoist('z[k] += 1.0\n  for j in 0..n {\n    y[j] *= z[j]\n    y[j] += x[j] * z[k]\n  }')).toBe(`z[k] += 1.0
j$inv0: f64 <- z[k]
for j in 0..n {
  y[j] *= z[j]
  y[j] += x[j] * j$inv0
}
@unchecked {
  j$inv0 -> z[k]
}`)
    // a value that may fail other than by its bounds (a conversion to i32) has no test: it stays
    expect(hoist('for j in 0..n {\n    y[j] += f64(i32(x[k]))\n  }')).toBe(`for j in 0..n {
  y[j] += f64(i32(x[k]))
}`)
    // from @unchecked (no assert guards a read there), nothing that may fail moves
    expect(hoist('for j in 0..n {\n    @unchecked { s += x[idx[k]] }\n  }')).toBe(`for j in 0..n {
  @unchecked {
    s += x[idx[k]]
  }
}`)
    // a loop around a loop in two versions is not versioned again (copies never multiply), and
    // nothing moves out of the version test
    const nest = hoist(
      'for i in 0..n {\n    for j in 0..n {\n      y[j] *= z[j]\n      y[j] += x[idx[k]] * x[i]\n    }\n    y[i] *= z[i]\n    y[i] += x[idx[0]]\n  }',
    )
    expect(nest.match(/for j in/g)).toHaveLength(2)
    expect(nest.match(/for i in/g)).toHaveLength(1)
    expect(nest).toContain('y[i] += x[idx[0]]')
    // without checks, all of them move as they are (the order of failures is not kept without checks)
    const off = body(
      hoistInvariants(
        fnOf(`fn f(y: f64[], z: f64[], x: f64[], idx: i32[], k: i32, n: i32) {
  for j in 0..n {
    y[j] *= z[j]
    y[j] += x[idx[k]]
  }
}`),
      ),
    )
    expect(off).toContain('y[j] += j$inv0')
    expect(off).not.toContain('else')
  })

  it('safetyTest: the bounds of every element read, inner reads first; none for another value that may fail', () => {
    const e = (text: string) => {
      const f = fnOf(`fn f(x: f64[], idx: i32[], k: i32, s: f64, a: f64) {\n  s += ${text}\n}`)
      return (f.body[0] as { value: Expr }).value
    }
    expect(printExpr(safetyTest(e('x[idx[k]] * 2.0'))!)).toBe(
      '0 <= k && k < len(idx) && 0 <= idx[k] && idx[k] < len(x)',
    )
    expect(safetyTest(e('f64(i32(x[k]))'))).toBeUndefined()
    expect(safetyTest(e('sin(a)'))).toBeUndefined()
    // an element known in range needs no test
    expect(printExpr(safetyTest(e('x[idx[k]]'), (key) => key.startsWith('idx['))!)).toBe(
      '0 <= idx[k] && idx[k] < len(x)',
    )
  })

  it('mayFailChecked: what may fail with checks on', () => {
    const stmts = fnOf(`fn f(y: f64[], x: f64[], n: i32, s: f64, a: f64) {
  s += sin(a) * 2.0
  s *= 2.0
  s *= a
  s += x[n]
  y[n] += a
  t <- a + 1.0
  t -> a + 1.0
  u <- x[n] * 2.0
  u -> x[n] * 2.0
}`).body
    expect(stmts.map((x) => mayFailChecked(x))).toEqual([false, false, true, true, true, false, true, true, true])
    // an element known in range
    expect(mayFailChecked(stmts[3]!, (k) => k.startsWith('x['))).toBe(false)
  })

  it('guards by the direction of the range, and not at all when a literal range is not empty', () => {
    const text = `fn f(y: f64[], x: f64[], j: i32, n: i32) {
  for i in n..=0 by -1 { y[i] += x[j] * 2.0 }
  for i in 0..3 { y[i] += exp(x[j]) }
}`
    expect(hoisted(text)).toBe(`i$inv0: f64 <- 0.0
if (n >= 0, ~) {
  i$inv0 += x[j] * 2.0
}
for i in n..=0 by -1 {
  y[i] += i$inv0
}
@unchecked {
  if (n >= 0, ~) {
    i$inv0 -= x[j] * 2.0
  }
  i$inv0 -> 0.0
}
i$inv1: f64 <- exp(x[j])
for i in 0..3 {
  y[i] += i$inv1
}
@unchecked {
  i$inv1 -> exp(x[j])
}`)
  })

  it('climbs out of nested loops, innermost first', () => {
    const text = `fn f(y: f64[], a: f64, n: i32, m: i32) {
  for i in 0..n { for k in 0..m { y[k] += exp(a) * y[i] } }
}`
    expect(hoisted(text)).toBe(`i$inv1: f64 <- exp(a)
for i in 0..n {
  k$inv0: f64 <- i$inv1
  for k in 0..m {
    y[k] += k$inv0 * y[i]
  }
  @unchecked {
    k$inv0 -> exp(a)
  }
}
@unchecked {
  i$inv1 -> exp(a)
}`)
  })

  it('leaves what the loop writes: targets, call and bijection arguments, bound names, the loop variable', () => {
    const text = `fn g(u: f64[], v: f64) { u[0] += v }
fn f(y: f64[], x: f64[], z: f64[], t: f64[], a: f64, b: f64, n: i32) {
  for i in 0..n {
    y[i] += cos(x[0]) + sin(z[1]) + exp(a) + exp(b) + cos(t[2]) + sqrt(f64(i))
    x[1] += 1.0
    g(z, 1.0)
    ROT(a, t[0], 0.5)
    w <- 0.0
    w += log(b)
    b += exp(w)
    w -= log(b)
    w -> 0.0
  }
}`
    const f = fnOf(text)
    expect([...writtenNames(f.body)!].sort()).toEqual(['a', 'b', 'i', 't', 'w', 'x', 'y', 'z'])
    expect(printFunction(hoistInvariants(f))).toBe(printFunction(f))
  })

  it('moves a read that may fail only from what runs on every iteration; total float expressions from anywhere', () => {
    const text = `fn f(y: f64[], x: f64[], j: i32, a: f64, n: i32, q: i32) {
  for i in 0..n {
    if (y[i] > 0.0, ~) { y[i] += x[j] + cos(a) }
    if (i < j && x[j] > 0.0, ~) { y[i] += f64(i32(a) / q) }
  }
}`
    expect(hoisted(text)).toBe(`i$inv0: f64 <- cos(a)
for i in 0..n {
  if (y[i] > 0.0, ~) {
    y[i] += x[j] + i$inv0
  }
  if (i < j && x[j] > 0.0, ~) {
    y[i] += f64(i32(a) / q)
  }
}
@unchecked {
  i$inv0 -> cos(a)
}`)
  })

  it('moves a read of an element the block accessed before the loop from anywhere, without a guard', () => {
    // t[e * 4 + 1] is updated before the inner loop: in range, so its reads under the `if` move;
    // x[a + j] depends on j, t[e] was not accessed, and a write of e or of the array as a whole ends what is known
    const text = `fn g(u: f64[]) { u[0] += 1.0 }
fn f(h: f64[], t: f64[], x: f64[], a: i32, k: i32, n: i32, from: i32) {
  for e in 0..n {
    t[e * 4 + 1] += x[e]
    for j in 0..k {
      if (a + j >= from, ~) { h[(a + j) * 4 + 1] += x[a + j] * t[e * 4 + 1] + t[e] }
    }
    g(t)
    for j in 0..k {
      if (a + j >= from, ~) { h[(a + j) * 4 + 1] += x[a + j] * t[e * 4 + 1] }
    }
  }
}`
    expect(hoisted(text)).toBe(`for e in 0..n {
  t[e * 4 + 1] += x[e]
  j$inv0: f64 <- t[e * 4 + 1]
  for j in 0..k {
    if (a + j >= from, ~) {
      h[(a + j) * 4 + 1] += x[a + j] * j$inv0 + t[e]
    }
  }
  @unchecked {
    j$inv0 -> t[e * 4 + 1]
  }
  g(t)
  for j in 0..k {
    if (a + j >= from, ~) {
      h[(a + j) * 4 + 1] += x[a + j] * t[e * 4 + 1]
    }
  }
}`)
  })

  it('moves what the range reads from anywhere, without a guard: the loop reads it on entry anyway', () => {
    const text = `fn f(y: f64[], c: i32[], j: i32) {
  for i in 0..c[j + 1] - c[j] {
    if (i < 2 && i + 4 < c[j + 1], ~) { y[i] += f64(c[j + 1]) }
  }
}`
    expect(hoisted(text)).toBe(`i$inv0: i32 <- c[j + 1]
for i in 0..c[j + 1] - c[j] {
  if (i < 2 && i + 4 < i$inv0, ~) {
    y[i] += f64(i$inv0)
  }
}
@unchecked {
  i$inv0 -> c[j + 1]
}`)
  })

  it('takes a chain of thousands of terms in its stride (no recursion per term)', () => {
    const terms = Array.from({ length: 2000 }, (_, k) => (k % 2 ? 'cos(a)' : `x[i] * ${k}.0`)).join(' + ')
    const f = fnOf(`fn f(y: f64[], x: f64[], a: f64, n: i32) { for i in 0..n { y[i] += ${terms} } }`)
    const out = body(hoistInvariants(f))
    expect(out.match(/i\$inv0/g)).toHaveLength(1000 + 2)
    expect(out).not.toContain('i$inv1')
  })

  it('leaves a loop with a @safe statement or a host call, and one that calls a function with a host effect', () => {
    const text = `fn f(y: f64[], a: f64, n: i32) {
  for i in 0..n { y[i] += cos(a) + \${0}(a) }
  for i in 0..n { y[i] += cos(a)
    @safe \${0}(a) }
}`
    const f = check(parse(text, [(x: number) => x]).functions, [(x: number) => x], createRegistry()).functions.get('f')!
    const out = body(hoistInvariants(f))
    expect(out).not.toContain('$inv')
    expect(printFunction(hoistInvariants(f))).toBe(printFunction(f))
  })

  it('leaves a loop that calls a function with a host effect', () => {
    const hosts = [(x: number) => x]
    const text = `fn g(u: f64[]) { @safe \${0}(u[0]) }
fn f(y: f64[], a: f64, n: i32) { for i in 0..n { y[i] += cos(a)
    g(y) } }`
    const p = check(parse(text, hosts).functions, hosts, createRegistry())
    const f = p.functions.get('f')!
    expect(printFunction(hoistInvariants(f, effectfulFunctions(p.functions.values())))).toBe(printFunction(f))
    expect(printFunction(hoistInvariants(f))).toContain('i$inv0: f64 <- cos(a)')
  })

  it('runs in optimize with checks on and off', () => {
    const text = `fn f(y: f64[], a: f64, n: i32) { for i in 0..n { y[i] += cos(a) } }`
    const m = parse(text, [])
    const program = check(m.functions, [], createRegistry())
    for (const checks of [true, false]) {
      const { program: p } = optimize(program, new Map(), { checks } as never)
      expect(body(p.functions.get('f')!)).toContain('i$inv0: f64 <- cos(a)')
    }
    const { program: p } = optimize(program, new Map(), { checks: true } as never, ['unroll'])
    expect(body(p.functions.get('f')!)).not.toContain('$inv')
  })
})
