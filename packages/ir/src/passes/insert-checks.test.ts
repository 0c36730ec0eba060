/**
 * The `insert-checks` pass on printed IR before and after: where each catalog check goes and
 * what it tests (the engines' lowering of `assert` is tested by the parity test in `tenet`, which
 * runs every check on the interpreter, the cpu backend and the wasm backend).
 */
import { describe, expect, it } from 'vitest'
import { check, createRegistry, type FunctionDef, parse, printStmts, type Program } from '../index.js'
import { hoistBoundsFunction, insertChecks, insertChecksFunction, scalarReplaceArrays } from './index.js'
import { VERSION_MAX_STATEMENTS } from './hoist-bounds.js'

const checked = (text: string): Program => check(parse(text, []).functions, [], createRegistry())
/** The printed body of function `name` after the pass (checks on), without the signature. */
const after = (text: string, name = 'f'): string => {
  const p = checked(text)
  return body(insertChecksFunction(p.functions.get(name)!, p))
}
const body = (f: FunctionDef): string => printStmts(f.body, 0)

describe('pass `insert-checks`', () => {
  it('changes nothing with checks off', () => {
    const p = checked('fn f(y: f64, x: f64[], i: i32) { y += x[i] }')
    const inverses = new Map([...p.functions].map(([n, f]) => [n, f]))
    const out = insertChecks(p, inverses, { checks: false, tolerance: 1e-8 })
    expect(out.program).toBe(p)
    expect(out.inverses).toBe(inverses)
  })

  it('checks each element access before its statement, inner indices first', () => {
    expect(after('fn f(y: f64, x: f64[], k: i32[], i: i32) { y += x[k[i]] * 2.0 }')).toBe(
      `assert outOfBounds($inrange(i, len(k))) else ("k", i, len(k))
assert outOfBounds($inrange(k[i], len(x))) else ("x", k[i], len(x))
y += x[k[i]] * 2.0`,
    )
  })

  it('checks an access under `&&` only when the left side holds', () => {
    expect(after('fn f(y: i32, x: i32[], i: i32) { if (i < 3 && x[i] > 0, ~) { y += 1 } }')).toContain(
      'assert outOfBounds(!(i < 3) || $inrange(i, len(x))) else ("x", i, len(x))',
    )
  })

  it('places alias, zero-factor, deallocation and pop checks before their statements', () => {
    expect(after('fn f(x: f64[], i: i32, j: i32) { x[i] += x[j] }')).toBe(
      `assert alias(i != j) else ("i", "j", i)
assert outOfBounds($inrange(i, len(x))) else ("x", i, len(x))
assert outOfBounds($inrange(j, len(x))) else ("x", j, len(x))
x[i] += x[j]`,
    )
    expect(after('fn f(y: f64, x: f64) { y *= x * 2.0 }')).toBe(
      `assert zeroFactor($factor(x * 2.0)) else ("y *= x * 2.0", x * 2.0)
y *= x * 2.0`,
    )
    expect(after('fn f(y: f64, x: f64) {\n  t <- x\n  y += t\n  t -> x\n}')).toBe(
      `t <- x
y += t
assert dealloc($near(t, x)) else ("t", "x", t, x)
t -> x`,
    )
    expect(after('fn f(y: i32, x: i32) {\n  t <- x\n  y += t\n  t -> x\n}')).toContain(
      'assert dealloc(t == x) else ("t", "x", t, x)',
    )
    expect(after('fn f(y: f64, n: i32) {\n  t: f64[] <- zeros(n)\n  t -> zeros(n)\n}')).toBe(
      `t: f64[] <- zeros(n)
assert deallocArray($zeros(t, n)) else ("t", "zeros(n)", n)
t -> zeros(n)`,
    )
    expect(after('fn f(y: f64) {\n  s: stack<f64> <- []\n  s -> []\n}')).toContain(
      'assert deallocStack(len(s) == 0) else ("s", len(s))',
    )
    expect(after('fn f(s: stack<f64>, y: f64) { pop(s, y) }')).toBe(
      `assert popNonzero(y == 0) else ("s", "y", y)
pop(s, y)`,
    )
  })

  it("checks an if's post-condition at the end of each branch, a while's before and after each iteration", () => {
    expect(after('fn f(x: f64) { if (x > 0.0, ~) { x -= 5.0 } }')).toBe(
      `if (x > 0.0, ~) {
  x -= 5.0
  assert postIf(x > 0.0) else ("x > 0.0", true, false, true)
} else {
  assert postIf(!(x > 0.0)) else ("x > 0.0", true, true, false)
}`,
    )
    expect(after('fn f(x: i32, n: i32) { while (x < n, x > 0) { x += 1 } }')).toBe(
      `assert postWhileStart(!(x > 0)) else ("x > 0")
while (x < n, x > 0) {
  x += 1
  assert postWhileIteration(x > 0) else ("x > 0")
}`,
    )
  })

  it("leaves out an if's post-condition on elements of parameters where the branches write only an ancilla's elements", () => {
    // (the condition reads k's elements; t is the function's own zeros array, which shares no
    // memory with a parameter: the branch cannot change what the condition reads)
    const ancilla = `fn f(x: f64[], k: i32[], n: i32) {
  t: f64[] <- zeros(n)
  if (k[0] > 0, ~) { t[0] += x[0] }
  x[1] += t[0]
  if (k[0] > 0, ~) { t[0] -= x[0] }
  t -> zeros(n)
}`
    expect(after(ancilla)).not.toContain('postIf')
    // a parameter's elements: k and x may be views of one buffer (through the unchecked \`.core\`)
    expect(after(ancilla.replace('t[0] += x[0]', 'x[2] += 1.0'))).toContain(
      'assert postIf(k[0] > 0) else ("k[0] > 0", true, false, true)',
    )
    // the ancilla's own elements, which the condition reads: the check stays
    const own = `fn f(x: f64[], n: i32) {
  t: f64[] <- zeros(n)
  t[0] += x[0]
  if (t[0] > 0.0, ~) { t[1] += 1.0 }
  if (t[0] > 0.0, ~) { t[1] -= 1.0 }
  t[0] -= x[0]
  t -> zeros(n)
}`
    expect(after(own)).toContain('assert postIf(t[0] > 0.0) else ("t[0] > 0.0", true, false, true)')
  })

  it("checks a loop's range after it only when the body writes what the range reads", () => {
    expect(after('fn f(y: f64, n: i32) { for i in 0..n { n += 1 } }')).toBe(
      `for i in 0..n {
  n += 1
}
assert loopRange(0 == $start(i) && n == $stop(i) && 1 == $step(i)) else ($start(i), $stop(i), $step(i), 0, n, 1)`,
    )
    expect(after('fn f(y: f64, n: i32) { for i in 0..n { y += 1.0 } }')).toBe(`for i in 0..n {
  y += 1.0
}`)
  })

  it('needs no range check where the body writes only elements of the array whose length bounds it, or calls what leaves the range alone', () => {
    expect(after('fn f(a: f64[]) { for i in 0..len(a) { a[i] += 1.0 } }')).not.toContain('loopRange')
    const calls = 'fn g(y: f64, n: i32) { y += f64(n) }\nfn f(y: f64, n: i32) { for i in 0..n { g(y, n) } }'
    expect(after(calls)).not.toContain('loopRange')
    expect(after('fn g(n: i32) { n += 1 }\nfn f(y: f64, n: i32) { for i in 0..n { g(n) } }')).toContain('loopRange')
  })

  it('proves `a[i]` in `for i in k..len(a)` over a parameter array, and nothing else', () => {
    expect(after('fn f(s: f64, a: f64[], b: f64[]) { for i in 1..len(a) { s += a[i] * a[i - 1] + b[i] } }')).toBe(
      `for i in 1..len(a) {
  assert outOfBounds($inrange(i - 1, len(a))) else ("a", i - 1, len(a))
  assert outOfBounds($inrange(i, len(b))) else ("b", i, len(b))
  s += a[i] * a[i - 1] + b[i]
}`,
    )
  })

  it("keeps an array's deallocation check, over its elements, where scalar-arrays replaced it by scalars", () => {
    const p = checked(`fn f(y: f64, x: f64) {
  t: f64[] <- zeros(2)
  t[0] += x
  t[1] += x
  y += t[0] * t[1]
  t[1] -= x
  t[0] -= x
  t -> zeros(2)
}`)
    const f = insertChecksFunction(scalarReplaceArrays(p.functions.get('f')!), p)
    expect(body(f).split('\n').slice(-3).join('\n')).toBe(
      `assert deallocArray($near(t$sr0, 0.0) && $near(t$sr1, 0.0)) else ("t", "zeros(2)", 2)
t$sr0 -> 0.0
t$sr1 -> 0.0`,
    )
    const q = checked(
      'fn f(y: i32, x: i32) {\n  t: i32[] <- zeros(2)\n  t[1] += x\n  y += t[1]\n  t[1] -= x\n  t -> zeros(2)\n}',
    )
    expect(body(insertChecksFunction(scalarReplaceArrays(q.functions.get('f')!), q))).toContain(
      'assert deallocArray(t$sr0 == 0 && t$sr1 == 0) else ("t", "zeros(2)", 2)',
    )
  })

  it('places nothing inside `@unchecked`', () => {
    expect(after('fn f(y: f64, x: f64[], i: i32) { @unchecked { y += x[i] } }')).toBe(`@unchecked {
  y += x[i]
}`)
  })
})

describe('pass `hoist-bounds`', () => {
  // (the hoisted conditions as asserts before the loop, \`versions\` false: the wasm backend's form
  // without checks; the two versions of a loop below)
  const hoisted = (text: string, name = 'f', versions = false): string => {
    const p = checked(text)
    return body(hoistBoundsFunction(insertChecksFunction(p.functions.get(name)!, p), p, versions))
  }

  it('runs the loop in two versions: without the hoisted checks where they all hold, as written where one does not', () => {
    expect(hoisted('fn f(s: f64, x: f64[], n: i32, k: i32) { for i in 1..n { s += x[2 * i + k] } }', 'f', true)).toBe(
      `if (!(1 < n) || $inrange(2 + k, len(x)) && $inrange(2 * (n - 1) + k, len(x)) && 2.0 * (f64(n - 1) - 1.0) < f64(len(x)), ~) {
  for i in 1..n {
    s += x[2 * i + k]
  }
} else {
  for i in 1..n {
    assert outOfBounds($inrange(2 * i + k, len(x))) else ("x", 2 * i + k, len(x))
    s += x[2 * i + k]
  }
}`,
    )
    // a loop of more than VERSION_MAX_STATEMENTS statements (the loop, each update and its assert)
    // is not copied: its asserts stand before it
    const most = Math.floor((VERSION_MAX_STATEMENTS - 1) / 2)
    const updates = (m: number) => Array.from({ length: m }, (_, c) => `s += x[i + ${c}]`).join('\n')
    const small = checked(`fn f(s: f64, x: f64[], n: i32) { for i in 0..n { ${updates(most)} } }`)
    expect(hoistBoundsFunction(insertChecksFunction(small.functions.get('f')!, small), small).body[0]).toMatchObject({
      kind: 'if',
      failing: true,
    })
    const large = checked(`fn f(s: f64, x: f64[], n: i32) { for i in 0..n { ${updates(most + 1)} } }`)
    const kinds = hoistBoundsFunction(insertChecksFunction(large.functions.get('f')!, large), large).body.map(
      (x) => x.kind,
    )
    expect(kinds.at(-1)).toBe('for')
    expect(kinds.slice(0, -1).every((k) => k === 'assert')).toBe(true)
    expect(kinds.length).toBeGreaterThan(1)
    // (the version as written runs only to fail: marked so, for the backends)
    const p = checked('fn f(s: f64, x: f64[], n: i32) { for i in 0..n { s += x[i + 1] } }')
    const [v] = hoistBoundsFunction(insertChecksFunction(p.functions.get('f')!, p), p).body
    expect(v).toMatchObject({ kind: 'if', failing: true })
    // a loop in a loop: the inner one's test hoisted over the outer one (one test for the nest),
    // the nest as written in the version where a check fails (see hoist-bounds.test.ts)
    const nest = hoisted(
      'fn f(s: f64, x: f64[], y: f64[], n: i32, d: i32) { for i in 0..n { s += y[i]\n for j in 0..d { s += x[i * d + j] } } }',
      'f',
      true,
    )
    expect(nest.split('\n').filter((l) => l.trim().startsWith('for j'))).toHaveLength(2)
    expect(nest.split('\n').filter((l) => l.trim().startsWith('if ('))).toHaveLength(1)
    expect(nest.split('\n')[0]).toMatch(
      /^if \(!\(0 < n\) \|\| \$inrange\(0, len\(y\)\) && \$inrange\(n - 1, len\(y\)\) && \(!\(0 < d\) \|\| \$inrange\(0, len\(x\)\) && /,
    )
    expect(nest).toContain('  for i in 0..n {\n    s += y[i]\n    for j in 0..d {\n      s += x[i * d + j]\n    }')
  })

  it('takes the range check after the loop (it reads the range the loop saved) into both versions', () => {
    const out = hoisted(
      'fn f(s: f64, x: f64[], n: i32, k: i32) { for i in 0..n { k += 1\n s += x[i]\n k -= 1\n n += 0 } }',
      'f',
      true,
    )
    const lines = out.split('\n')
    expect(lines.filter((l) => l.includes('assert loopRange'))).toHaveLength(2)
    expect(lines.at(-2)).toMatch(/^ {2}assert loopRange/)
    expect(lines.filter((l) => /^ {2}assert loopRange/.test(l))).toHaveLength(2)
  })

  it('checks an affine index at the two ends of the loop, before it, in the order the loop visits them', () => {
    expect(hoisted('fn f(s: f64, x: f64[], n: i32, k: i32) { for i in 1..n { s += x[2 * i + k] } }')).toBe(
      `assert outOfBounds(!(1 < n) || $inrange(2 + k, len(x))) else ("x", 2 + k, len(x))
assert outOfBounds(!(1 < n) || $inrange(2 * (n - 1) + k, len(x))) else ("x", 2 * (n - 1) + k, len(x))
assert outOfBounds(!(1 < n) || 2.0 * (f64(n - 1) - 1.0) < f64(len(x))) else ("x", f64(2 + k) + 2.0 * (f64(n - 1) - 1.0), len(x))
for i in 1..n {
  s += x[2 * i + k]
}`,
    )
    // reversed: the last value first
    expect(hoisted('fn f(s: f64, x: f64[], n: i32) { for i in reverse 0..=n { s += x[i] } }').split('\n')).toEqual([
      'assert outOfBounds(!(0 <= n) || $inrange(n, len(x))) else ("x", n, len(x))',
      'assert outOfBounds(!(0 <= n) || $inrange(0, len(x))) else ("x", 0, len(x))',
      'for i in reverse 0..=n {',
      '  s += x[i]',
      '}',
    ])
  })

  it('checks that the index does not wrap between the two ends (i32 arithmetic wraps: the ends are computed as the program does)', () => {
    // a stride of ±1: the order of the two ends (exact); not needed for x[i + d], d ≥ −1 literal
    expect(hoisted('fn f(s: f64, x: f64[], n: i32, k: i32) { for i in 0..n { s += x[k - i] } }')).toBe(
      `assert outOfBounds(!(0 < n) || $inrange(k, len(x))) else ("x", k, len(x))
assert outOfBounds(!(0 < n) || $inrange(k - (n - 1), len(x))) else ("x", k - (n - 1), len(x))
assert outOfBounds(!(0 < n) || 0.0 - f64(len(x)) < -1.0 * f64(n - 1)) else ("x", f64(k) + -1.0 * f64(n - 1), len(x))
for i in 0..n {
  s += x[k - i]
}`,
    )
    expect(hoisted('fn f(s: f64, x: f64[], n: i32, k: i32) { for i in reverse 0..n { s += x[i + k] } }')).toContain(
      'assert outOfBounds(!(0 < n) || 0.0 - f64(len(x)) < 0.0 - f64(n - 1)) else ("x", f64(n - 1 + k) + (0.0 - f64(n - 1)), len(x))',
    )
    for (const index of ['i', 'i - 1', 'i + 3', '2 - i'])
      expect(hoisted(`fn f(s: f64, x: f64[], n: i32) { for i in 1..n { s += x[${index}] } }`).split('\n')[2]).toBe(
        'for i in 1..n {',
      )
    // another stride: f64, exact
    expect(hoisted('fn f(s: f64, x: f64[], n: i32) { for i in 0..=n { s += x[4 * i] } }').split('\n')[2]).toBe(
      'assert outOfBounds(!(0 <= n) || 4.0 * f64(n) < f64(len(x))) else ("x", 4.0 * f64(n), len(x))',
    )
  })

  it('leaves an index that is not affine, one under an `if`, and an array the loop reallocates', () => {
    const kept = (src: string) => expect(hoisted(src).split('\n')[0]).toMatch(/^for /)
    kept('fn f(s: f64, x: f64[], n: i32) { for i in 0..n { s += x[i * i] } }')
    kept('fn f(s: f64, x: f64[], n: i32) { for i in 0..n { if (s > 0.0, ~) { s += x[i] } } }')
    kept('fn f(s: f64, x: f64[], n: i32, k: i32) { for i in 0..n { k += 1\n s += x[i + k]\n k -= 1 } }')
    kept('fn f(s: f64, x: f64[], n: i32) { for i in 0..n by 2 { s += x[i] } }')
  })

  it('checks an index with a symbolic stride (a column loop) at the two ends, the stride read before the loop', () => {
    expect(hoisted('fn f(s: f64, x: f64[], n: i32, m: i32, i: i32) { for l in 0..n { s += x[i + 1 + m * l] } }')).toBe(
      `assert outOfBounds(!(0 < n) || $inrange(i + 1, len(x))) else ("x", i + 1, len(x))
assert outOfBounds(!(0 < n) || $inrange(i + 1 + m * (n - 1), len(x))) else ("x", i + 1 + m * (n - 1), len(x))
assert outOfBounds(!(0 < n) || 0.0 - f64(len(x)) < f64(m) * f64(n - 1) && f64(m) * f64(n - 1) < f64(len(x))) else ("x", f64(i + 1) + f64(m) * f64(n - 1), len(x))
for l in 0..n {
  s += x[i + 1 + m * l]
}`,
    )
    // the stride on either side, times a literal, or a sum
    expect(
      hoisted('fn f(s: f64, x: f64[], n: i32, m: i32) { for l in 1..n { s += x[(l * 2) * m + (m + 1) * l] } }'),
    ).toContain(
      '0.0 - f64(len(x)) < f64(m * 2 + (m + 1)) * (f64(n - 1) - 1.0) && f64(m * 2 + (m + 1)) * (f64(n - 1) - 1.0) < f64(len(x))',
    )
    // the accesses of one array with one stride share the check that nothing wraps between the ends
    const rows = hoisted(
      'fn f(s: f64, x: f64[], n: i32, m: i32, i: i32) { for l in 0..n { s += x[i + m * l] * x[i + 1 + m * l] } }',
    )
    expect(rows.split('\n').filter((l) => l.includes('f64(m) * f64(n - 1) < f64(len(x))'))).toHaveLength(1)
    expect(rows.split('\n').filter((l) => l.startsWith('assert'))).toHaveLength(5)
    // not: a stride the body writes, a stride that reads the variable, an element in the stride
    const kept = (src: string) => {
      const out = hoisted(src)
      expect(out.slice(0, out.indexOf('for l')), out).not.toContain('"x"')
    }
    kept('fn f(s: f64, x: f64[], n: i32, m: i32) { for l in 0..n { m += 1\n s += x[m * l]\n m -= 1 } }')
    kept('fn f(s: f64, x: f64[], n: i32, m: i32) { for l in 0..n { s += x[(m + l) * l] } }')
    kept('fn f(s: f64, x: f64[], k: i32[], n: i32) { for l in 0..n { s += x[k[0] * l] } }')
  })

  it('keeps one of the hoisted asserts of the same condition (one element accessed twice)', () => {
    const out = hoisted(
      'fn f(s: f64, x: f64[], n: i32) { for i in 0..n { s += x[i]\n s += 2.0 * x[i]\n s += x[i + 1] } }',
    )
    expect(out.split('\n').filter((l) => l.startsWith('assert'))).toHaveLength(4)
    expect(out.split('\n')[4]).toBe('for i in 0..n {')
  })

  it('hoists from inner loops to before them (once per outer iteration)', () => {
    const out = hoisted(
      'fn f(s: f64, x: f64[], n: i32, d: i32) { for i in 0..n { for j in 0..d { s += x[i * d + j] } } }',
    )
    expect(out.split('\n')[0]).toBe('for i in 0..n {')
    expect(out).toContain('$inrange(i * d + (d - 1), len(x))')
    expect(out).toContain('$inrange(i * d, len(x))')
    expect(out).not.toMatch(/for j in 0\.\.d \{\n\s*assert/)
    // an index the inner loop does not change: once, before it
    expect(
      hoisted('fn f(y: f64[], a: f64[], n: i32) { for i in 0..n { for j in 0..n { y[i] += a[j] } } }').split('\n')[1],
    ).toBe('  assert outOfBounds(!(0 < n) || $inrange(i, len(y))) else ("y", i, len(y))')
  })
})
