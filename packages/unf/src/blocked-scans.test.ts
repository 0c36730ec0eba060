/**
 * Blocked stored scans (`blocked-scans.ts`): the code each case emits (four chains for the
 * stored states, offsets applied where they are read, a fix-up loop only for other uses, the
 * block totals reused by a map over the opposite scan of the same array) and its values against
 * the interpreter at every length 0–13, zeros included.
 */
import { describe, expect, test } from 'vitest'
import { generate } from './codegen.js'
import { compile, compileText } from './compile.js'
import { evaluate, fromHost, toHost } from './evaluate.js'
import { OpTable } from './ops.js'
import * as T from './term.js'
import { c, v, type Term } from './term.js'
import { finiteDifferences, flat, maxScaledError, rng } from './test-util.js'
import { arrayType } from './types.js'

const R1 = arrayType()
const ops = new OpTable()
const loops = (src: string) => (src.match(/\bfor \(/g) ?? []).length
const last = (a: Term): Term => ({ k: 'last', array: a })
const times = (a: Term, b: Term) => T.mul(a, b)
const plus = (a: Term, b: Term) => T.add(a, b)
const S = v('S')

/** The generated function against the interpreter on the same term, lengths 0–13 (both fail, or both agree). */
function agreesAtEveryLength(term: Term): string {
  const g = generate(
    term,
    [
      { name: 'A', type: R1 },
      { name: 'B', type: R1 },
    ],
    ops,
  )
  const r = rng(3)
  let compared = 0
  for (let n = 0; n <= 13; n++) {
    const a = Float64Array.from({ length: n }, () => 0.6 + r())
    if (n > 5) a[n - 4] = 0 // a zero in a middle block
    const b = Float64Array.from({ length: n }, () => r() - 0.5)
    let expected: unknown
    try {
      expected = toHost(
        evaluate(
          term,
          new Map([
            ['A', fromHost(a)],
            ['B', fromHost(b)],
          ]),
          ops,
        ),
      )
    } catch {
      expect(() => g.fn(a, b)).toThrow()
      continue
    }
    for (let call = 0; call < 2; call++) {
      // twice: buffers kept by the function are reused
      expect(maxScaledError(flat(g.fn(a, b)), flat(expected))).toBeLessThan(1e-14)
    }
    compared++
  }
  expect(compared).toBeGreaterThan(10)
  return g.source
}

describe('blocked stored scans', () => {
  test('∇prod shape: four chains, the value from the last offset and total, the suffix map on the same blocks with their totals', () => {
    for (const z of [1, 1.5]) {
      const term = T.let_(
        'S',
        T.scanl(c(z), v('A'), times),
        T.tuple(last(S), T.map2(T.shift1R(S), T.scanr(c(1), T.shift1L(v('A')), times), times)),
      )
      const src = agreesAtEveryLength(term)
      // the stored scan: four chains in one loop (each reads its element, stores its local
      // state, then advances: the load before the store, loadsFirst)
      expect(src).toMatch(
        /for \(let (j\d+) = 0; \1 < (n\d+); \1\+\+\) \{\n {4}const (e\d+) = p0\[\1\];\n {4}(o\d+)\[\1\] = (acc\d+);\n {4}\5 = \5 \* \3;\n {4}const e\d+ = p0\[\2 \+ \1\];\n {4}\4\[\2 \+ \1\] = /,
      )
      expect(src).toMatch(/const t\d+ = f\d+ \* T\d+;/) // last S
      // the suffix map reads the element that advances its chain before it stores (loadsFirst)
      expect(src).toMatch(
        /const (e\d+) = p0\[(b\d+) - 1 - (j\d+) - 1 \+ 1\];\n {4}o\d+\[\2 - 1 - \3\] = t\d+;\n {4}(acc\d+) = \4 \* \1;/,
      )
      expect(loops(src)).toBe(4) // no totals pass, no fix-up
      expect(src).not.toMatch(/let acc\d+ = 1, acc\d+ = 1, acc\d+ = 1;/)
      // block 1's states read with their offset (the total of block 0, times z when z ≠ 1)
      expect(src).toMatch(z === 1 ? /const t\d+ = T\d+ \* e\d+;/ : /const t\d+ = f\d+ \* e\d+;/)
    }
  })

  test('a map over a scan of another array or operator: the same blocks, its own totals first', () => {
    const right = T.let_(
      'S',
      T.scanl(c(0.5), v('A'), plus),
      T.tuple(
        last(S),
        T.map2(T.shift1R(S), T.scanr(c(0.25), T.shift1L(v('B')), plus), (p, q) => T.sub(p, q)),
      ),
    )
    const src = agreesAtEveryLength(right)
    expect(src).toMatch(/let acc\d+ = 0, acc\d+ = 0, acc\d+ = 0;/) // the totals of B's blocks
    expect(loops(src)).toBe(6)
    const left = T.let_('S', T.scanl(c(1.25), v('A'), times), T.map2(S, T.scanl(c(0), v('B'), plus), times))
    expect(agreesAtEveryLength(left)).toMatch(/let acc\d+ = 0, acc\d+ = 0, acc\d+ = 0;/)
    // scanl over the same array and operator: S's totals
    const same = T.let_('S', T.scanl(c(1), v('A'), times), T.map2(S, T.scanl(c(2), v('A'), times), plus))
    const s = agreesAtEveryLength(same)
    expect(loops(s)).toBe(4)
    expect(s).not.toMatch(/let acc\d+ = 1, acc\d+ = 1, acc\d+ = 1;/)
  })

  test('any other use of the states fixes them up once, in place, where it is', () => {
    const fix = /(o\d+)\[(j\d+)\] = f\d+ [+*] \1\[\2\];/
    for (const term of [
      T.let_('S', T.scanl(c(1), v('A'), plus), T.tuple(last(S), S)),
      T.let_('S', T.scanl(c(2), v('A'), times), T.tuple(S, last(S))),
      T.let_(
        'S',
        T.scanl(c(0), v('A'), plus),
        T.map(S, (s) => T.mul(s, s)),
      ),
      T.let_('S', T.scanl(c(0.5), v('A'), plus), T.sum(T.map2(S, T.scanr(c(0), v('B'), plus), plus))),
    ]) {
      const src = agreesAtEveryLength(term)
      expect(src).toMatch(fix)
      expect(src.match(new RegExp(fix.source, 'g'))!.length).toBeLessThanOrEqual(4) // one loop's blocks
    }
  })

  test('a consumer that tries a blocked form and falls back still reads fixed-up states', () => {
    // the map's body has a loop: the blocked map over its scan gives up after reading S
    const body = (p: Term, q: Term) => T.mul(q, T.sum(T.map(v('B'), (b) => T.mul(b, p))))
    const term = T.let_('S', T.scanl(c(0.5), v('A'), plus), T.map2(T.scanl(c(1), v('A'), times), S, body))
    expect(agreesAtEveryLength(term)).toMatch(/(o\d+)\[(j\d+)\] = f\d+ \+ \1\[\2\];/)
    const reduced = T.let_('S', T.scanl(c(0.5), v('A'), plus), T.tuple(T.sum(S), last(S)))
    agreesAtEveryLength(reduced)
  })

  test('inside a loop body: ∇ Σ_rows prod(row) over rows of 3 to 11 elements, one with a zero', () => {
    const cp = compileText('(M: R[][]) => sum(map((r) => prod(r), M))')
    expect(cp.source.gradient).toMatch(/const T\d+/) // blocked, per row
    const M = Array.from({ length: 5 }, (_, i) =>
      Float64Array.from({ length: 3 + 2 * i }, (_, j) => (i === 3 && j === 2 ? 0 : 0.7 + 0.1 * ((i * 7 + j * 3) % 5))),
    )
    const [, [g]] = cp.gradient(M)
    expect(
      maxScaledError(
        flat(g),
        finiteDifferences((m) => cp.value(m) as number, [M]),
      ),
    ).toBeLessThan(1e-6)
  })

  test('states read in a loop body are not blocked (one chain, as before)', () => {
    const term = T.let_(
      'S',
      T.scanl(c(0), v('A'), plus),
      T.map(v('B'), (b) => T.mul(b, last(S))),
    )
    const src = agreesAtEveryLength(term)
    expect(src).not.toMatch(/const T\d+/)
  })

  test('∇prod of 1 to 40 elements with zeros: the products of the others, and finite differences', () => {
    const cp = compile([['A', R1]], T.prod(v('A')))
    const r = rng(8)
    for (let n = 1; n <= 40; n++) {
      const a = Float64Array.from({ length: n }, () => 0.5 + r())
      if (n > 3) a[Math.floor(n / 2)] = 0
      if (n > 9) a[n - 2] = 0
      const [value, [g]] = cp.gradient(a)
      let p = 1
      for (const x of a) p *= x
      expect(Math.abs(value - p)).toBeLessThan(1e-14)
      const expected = Array.from(a, (_, i) => a.reduce((q, x, j) => (j === i ? q : q * x), 1))
      expect(maxScaledError(Array.from(g as Float64Array), expected)).toBeLessThan(1e-14)
    }
    const a = Float64Array.from({ length: 23 }, () => 0.5 + r())
    expect(
      maxScaledError(
        Array.from(cp.gradient(a)[1][0] as Float64Array),
        finiteDifferences((x) => cp.value(x) as number, [a]),
      ),
    ).toBeLessThan(1e-6)
  })
})
