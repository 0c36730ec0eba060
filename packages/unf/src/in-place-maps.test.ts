/**
 * In-place maps (`in-place-maps.ts`): what the analysis marks and what it leaves, the code it
 * gives (∇logsumexp scales its exponentials where they are), and values against the interpreter
 * and finite differences; results of successive calls stay distinct.
 */
import { describe, expect, test } from 'vitest'
import { generate } from './codegen.js'
import { compile } from './compile.js'
import { evaluate, fromHost, toHost } from './evaluate.js'
import { inPlaceMaps, trimmedScans } from './in-place-maps.js'
import { OpTable } from './ops.js'
import * as T from './term.js'
import { c, let_, lets, map, map2, mul, op, reduce, shift1L, tuple, v, type Term } from './term.js'
import { finiteDifferences, flat, maxScaledError, rng } from './test-util.js'
import { arrayType, R } from './types.js'

const R1 = arrayType()
const ops = new OpTable()
const params = [
  { name: 'A', type: R1 },
  { name: 's', type: R },
]
const expOf = (a: Term) => map(a, (x) => op('exp', x), 'x1')
const scaled = (b: Term) => map(b, (y) => mul(y, v('s')), 'y1')
const sumOf = (b: Term) => reduce(c(0), b, (p, q) => T.add(p, q))
const lastOf = (a: Term): Term => ({ k: 'last', array: a })

/** The generated code's value against the interpreter's, on a few arrays (every length 1–6). */
function agreesWithInterpreter(term: Term) {
  const g = generate(term, params, ops)
  for (let n = 1; n <= 6; n++) {
    const A = Float64Array.from({ length: n }, (_, i) => Math.sin(3 * i + 1))
    const got = flat(g.fn(A, 0.7))
    const want = flat(
      toHost(
        evaluate(
          term,
          new Map([
            ['A', fromHost(A)],
            ['s', fromHost(0.7)],
          ]),
          ops,
        ),
      ),
    )
    expect(maxScaledError(got, want)).toBeLessThan(1e-14)
  }
  return g.source
}

describe('inPlaceMaps: the analysis', () => {
  test('a map that is the last use of a let-bound map is marked, after a reduction of it', () => {
    const consumer = scaled(v('B'))
    const t = let_('B', expOf(v('A')), lets([['S', sumOf(v('B'))]], tuple(v('S'), tuple(consumer))))
    const marked = inPlaceMaps(t)
    expect([...marked]).toEqual([[consumer, 0]])
    const src = agreesWithInterpreter(t)
    // one array: the exponentials, scaled where they are and returned
    expect(src.split('new Float64Array(').length - 1).toBe(1)
    expect(src).toMatch(/return \[\w+, \[(o\d+)\]\];/)
    const out = /return \[\w+, \[(o\d+)\]\];/.exec(src)![1]!
    expect(src).toContain(`${out}[j`)
    expect(src).not.toContain('bufs[')
  })

  test('of two maps over B, the second (the last use) is marked; the first reads B intact', () => {
    const last = map(v('B'), (y) => T.add(y, c(1)))
    const t = let_('B', expOf(v('A')), lets([['C', scaled(v('B'))]], tuple(v('C'), last)))
    expect([...inPlaceMaps(t)]).toEqual([[last, 0]])
    const src = agreesWithInterpreter(t)
    expect(src.split('new Float64Array(').length - 1).toBe(2)
  })

  test('a map2 writes into the array it reads at the same index', () => {
    const consumer = map2(v('A'), v('B'), (a, b) => T.sub(b, a))
    const t = let_('B', expOf(v('A')), consumer)
    expect(inPlaceMaps(t).get(consumer)).toBe(1)
    const src = agreesWithInterpreter(t)
    expect(src.split('new Float64Array(').length - 1).toBe(1)
  })

  test('left alone: B read after the map, B returned beside it, an alias, a view, an argument, a rebinding', () => {
    const cases: Term[] = [
      // B is read again after each map over it
      let_(
        'B',
        expOf(v('A')),
        lets(
          [
            ['C', scaled(v('B'))],
            ['D', map(v('B'), (y) => T.add(y, c(1)))],
          ],
          tuple(v('C'), v('D'), sumOf(v('B'))),
        ),
      ),
      // B itself is part of the result
      let_('B', expOf(v('A')), tuple(v('B'), scaled(v('B')))),
      // an alias of B read after the map
      let_('B', expOf(v('A')), lets([['D', v('B')]], tuple(scaled(v('B')), sumOf(v('D'))))),
      // a shifted view of B taken before the map and read after it
      let_('B', expOf(v('A')), lets([['D', shift1L(v('B'))]], tuple(scaled(v('B')), sumOf(v('D'))))),
      // the body of the consuming map reads B
      let_(
        'B',
        expOf(v('A')),
        map(v('B'), (y) =>
          mul(
            y,
            reduce(c(0), v('B'), (p, q) => T.add(p, q)),
          ),
        ),
      ),
      // B is not a map (an argument)
      let_('B', v('A'), scaled(v('B'))),
      // a binder inside rebinds the name
      let_(
        'B',
        expOf(v('A')),
        tuple(
          scaled(v('B')),
          map(v('A'), (x) => x, 'B'),
        ),
      ),
      // the consumer runs once per element of another loop
      let_(
        'B',
        expOf(v('A')),
        map(v('A'), (a) => mul(a, sumOf(scaled(v('B'))))),
      ),
    ]
    for (const t of cases) {
      expect(inPlaceMaps(t).size).toBe(0)
      agreesWithInterpreter(t)
    }
  })
})

describe('inPlaceMaps on random spines', () => {
  test('60 random let spines of maps, maps of two arrays, reductions and shifts: code = interpreter', () => {
    const next = rng(41)
    const pick = <X>(xs: X[]): X => xs[Math.floor(next() * xs.length)]!
    let marked = 0
    for (let p = 0; p < 60; p++) {
      // two pools of arrays: length n, and n − 1 (shifted); maps of two arrays take both from one
      const pools: string[][] = [['A'], []]
      const scalars = ['s']
      const bindings: Array<[string, Term]> = []
      const steps = 2 + Math.floor(next() * 4)
      for (let k = 0; k < steps; k++) {
        const name = `B${k}`
        const pool = pools[1]!.length > 0 && next() < 0.4 ? pools[1]! : pools[0]!
        const a = v(pick(pool)),
          b = v(pick(pool))
        const kind = next()
        if (kind < 0.35) bindings.push([name, map(a, (x) => op(pick(['exp', 'sin']), mul(x, v(pick(scalars)))))])
        else if (kind < 0.6) bindings.push([name, map2(a, b, (x, y) => T.add(mul(x, v(pick(scalars))), y))])
        else if (kind < 0.8) {
          bindings.push([`S${k}`, sumOf(a)])
          scalars.push(`S${k}`)
          continue
        } else if (pool === pools[0]) {
          bindings.push([name, map(shift1L(a), (x) => mul(x, c(2)))])
          pools[1]!.push(name)
          continue
        } else continue
        pool.push(name)
      }
      const arrays = [...pools[0]!, ...pools[1]!]
      const last = arrays.slice(-2)
      const result = tuple(
        T.add(v(pick(scalars)), sumOf(v(pick(arrays)))),
        tuple(...last.map((n) => map(v(n), (y) => mul(y, v(pick(scalars)))))),
      )
      const t = lets(bindings, result)
      marked += inPlaceMaps(t).size
      agreesWithInterpreter(t)
    }
    // (how often the rewrite applies on these spines)
    expect(marked).toBeGreaterThan(20)
  })
})

describe('inPlaceMaps in the gradient', () => {
  test('∇logsumexp: one array, the exponentials scaled in place; interpreter, finite differences', () => {
    const cp = compile([['A', R1]], T.logsumexp(v('A')))
    const src = cp.source.gradient
    expect(src.split('new Float64Array(').length - 1).toBe(1)
    expect(src).not.toContain('bufs[')
    const next = rng(5)
    for (const n of [1, 2, 3, 7, 16]) {
      const A = Float64Array.from({ length: n }, () => next() * 6 - 3)
      const [value, [g]] = cp.gradient(A)
      const ref = toHost(evaluate(cp.stages.inverse, new Map([['A', fromHost(A)]]), cp.ops)) as [number, unknown[]]
      expect(Math.abs(value - ref[0])).toBeLessThan(1e-13)
      expect(maxScaledError(flat(g), flat(ref[1]))).toBeLessThan(1e-13)
      expect(
        maxScaledError(
          flat(g),
          finiteDifferences((a) => cp.value(a) as number, [A]),
        ),
      ).toBeLessThan(1e-6)
    }
  })

  test('each call returns a fresh array (the previous result is not overwritten); reuseResults keeps one', () => {
    const cp = compile([['A', R1]], T.logsumexp(v('A')))
    const g1 = cp.gradient(Float64Array.of(1, 2, 3))[1][0] as Float64Array
    const copy = g1.slice()
    const g2 = cp.gradient(Float64Array.of(-1, 0, 5))[1][0] as Float64Array
    expect(g2).not.toBe(g1)
    expect(g1).toEqual(copy)
    const kept = compile([['A', R1]], T.logsumexp(v('A')), { reuseResults: true })
    const k1 = kept.gradient(Float64Array.of(1, 2, 3))[1][0]
    const k2 = kept.gradient(Float64Array.of(-1, 0, 5))[1][0] as Float64Array
    expect(k2).toBe(k1)
    expect(maxScaledError(flat(k2), flat(g2))).toBeLessThan(1e-15)
  })

  test('per row: Σ_rows logsumexp(row · s), gradient against finite differences', () => {
    const R2 = arrayType(arrayType())
    const body = T.sum(T.map(v('X'), (row) => T.logsumexp(T.map(row, (x) => mul(x, v('s'))))))
    const cp = compile(
      [
        ['X', R2],
        ['s', R],
      ],
      body,
    )
    const X = [Float64Array.of(0.1, -2, 1.5), Float64Array.of(3, 0.2, -0.4), Float64Array.of(1, 1, 1)]
    const [, g] = cp.gradient(X, 0.8)
    const fd = finiteDifferences((x, s) => cp.value(x, s) as number, [X, 0.8])
    expect(maxScaledError(flat(g), fd)).toBeLessThan(1e-6)
  })
})

describe('in-place maps over stored scans', () => {
  const AB = [
    { name: 'A', type: R1 },
    { name: 'B', type: R1 },
  ]
  const S = v('S')
  const times = (a: Term, b: Term) => mul(a, b)
  const plus = (a: Term, b: Term) => T.add(a, b)
  const suffix = T.shift1L(T.scanr(c(1), v('A'), times))
  /** code = interpreter at every length 0–13 (zeros included), each call twice; the source */
  const agrees = (term: Term) => {
    const g = generate(term, AB, ops)
    const r = rng(9)
    for (let n = 0; n <= 13; n++) {
      const a = Float64Array.from({ length: n }, () => 0.6 + r())
      if (n > 5) a[n - 4] = 0
      const b = Float64Array.from({ length: n }, () => r() - 0.5)
      const want = flat(
        toHost(
          evaluate(
            term,
            new Map([
              ['A', fromHost(a)],
              ['B', fromHost(b)],
            ]),
            ops,
          ),
        ),
      )
      const first = g.fn(a, b)
      expect(maxScaledError(flat(first), want)).toBeLessThan(1e-14)
      expect(maxScaledError(flat(g.fn(a, b)), want)).toBeLessThan(1e-14)
      expect(maxScaledError(flat(first), want)).toBeLessThan(1e-14) // not overwritten by the second call
    }
    return g.source
  }
  const arrays = (src: string) => src.split('new Float64Array(').length - 1

  test('∇prod shape: the map over shift1R S is marked, S trimmed; one array, returned', () => {
    const consumer = map2(T.shift1R(S), suffix, times)
    const scan = T.scanl(c(1), v('A'), times)
    const t = let_('S', scan, tuple(lastOf(S), tuple(consumer)))
    expect([...inPlaceMaps(t)]).toEqual([[consumer, 0]])
    expect([...trimmedScans(t)]).toEqual([scan])
    const src = agrees(t)
    expect(arrays(src)).toBe(1)
    expect(src).toMatch(/const (o\d+) = new Float64Array\((n\d+)\);[\s\S]*return \[t\d+, \[\1\]\];/)
  })

  test('a map over S itself (all its states) writes into S, untrimmed; a sum, another operator', () => {
    const consumer = map2(S, T.scanl(c(0), v('B'), plus), (p, q) => T.sub(p, q))
    const scan = T.scanl(c(0.5), v('A'), plus)
    const t = let_('S', scan, tuple(sumOf(S), consumer))
    expect(inPlaceMaps(t).get(consumer)).toBe(0)
    expect(trimmedScans(t).size).toBe(0)
    expect(arrays(agrees(t))).toBe(1)
  })

  test('a consumer with a loop in its body (no blocked map): the trimmed states fixed up, then overwritten', () => {
    const consumer = map2(T.shift1R(S), v('B'), (p, b) => mul(b, sumOf(map(v('B'), (y) => mul(y, p)))))
    const t = let_('S', T.scanl(c(2), v('A'), times), tuple(lastOf(S), consumer))
    expect(trimmedScans(t).size).toBe(1)
    expect(arrays(agrees(t))).toBe(1)
    // the same with the suffix products fused into the map: a fresh result, correct states
    const fused = let_(
      'S',
      T.scanl(c(2), v('A'), times),
      tuple(
        lastOf(S),
        map2(T.shift1R(S), suffix, (p, q) => mul(q, sumOf(map(v('B'), (y) => mul(y, p))))),
      ),
    )
    agrees(fused)
  })

  test('left alone: S read after the map, S returned, S read whole beside the shift, a scan not + or ·', () => {
    const shifted = (f: (a: Term, b: Term) => Term) => map2(T.shift1R(S), suffix, f)
    const cases: Array<[Term, boolean]> = [
      // read after the consuming map (the map is not its last use)
      [let_('S', T.scanl(c(1), v('A'), times), tuple(shifted(times), lastOf(S))), false],
      [let_('S', T.scanl(c(1), v('A'), times), tuple(shifted(times), S)), false],
      // read whole before: marked (S intact until the map) but not trimmed
      [let_('S', T.scanl(c(1), v('A'), times), tuple(sumOf(S), shifted(times))), true],
      // a scan of another operator: marked and trimmed, but not blocked: a fresh result
      [
        let_(
          'S',
          T.scanl(c(1), v('A'), (a, x) => T.add(mul(a, x), c(0.5))),
          tuple(lastOf(S), shifted(times)),
        ),
        true,
      ],
    ]
    for (const [t, marked] of cases) {
      expect(inPlaceMaps(t).size).toBe(marked ? 1 : 0)
      agrees(t)
    }
  })

  test('a map over B after last B and a reduction of B in earlier result items: marked; before them: not', () => {
    const consumer = scaled(v('B'))
    const after = let_('B', expOf(v('A')), tuple(lastOf(v('B')), sumOf(v('B')), consumer))
    expect(inPlaceMaps(after).get(consumer)).toBe(0)
    expect(agreesWithInterpreter(after).split('new Float64Array(').length - 1).toBe(1)
    const before = let_('B', expOf(v('A')), tuple(consumer, lastOf(v('B'))))
    expect(inPlaceMaps(before).size).toBe(0)
    agreesWithInterpreter(before)
    // inside a loop body (a sweep's body tuple is not emitted in order): only the one-item rule
    const inner = map(v('A'), () => let_('B', expOf(v('A')), tuple(lastOf(v('B')), scaled(v('B')))))
    expect(inPlaceMaps(inner).size).toBe(0)
    const innerAlone = map(v('A'), (a) => let_('B', expOf(v('A')), tuple(a, scaled(v('B')))))
    expect(inPlaceMaps(innerAlone).size).toBe(1)
  })
})

describe('in-place maps over stored scans on random programs', () => {
  test('60 random uses of a stored scan (consumers, order, operators, other uses): code = interpreter', () => {
    const next = rng(77)
    const pick = <X>(xs: X[]): X => xs[Math.floor(next() * xs.length)]!
    const S = v('S')
    const ops2: Array<(a: Term, b: Term) => Term> = [
      (a, b) => mul(a, b),
      (a, b) => T.add(a, b),
      (a, b) => T.add(mul(a, b), c(0.25)),
    ]
    const AB = [
      { name: 'A', type: R1 },
      { name: 'B', type: R1 },
    ]
    let marked = 0
    let trimmed = 0
    for (let p = 0; p < 60; p++) {
      const op2 = pick(ops2)
      const x = pick(['A', 'B'])
      const suffixOver = pick(['A', 'B'])
      const consumers: Array<() => Term> = [
        // ∇prod-like: the prefix states against an exclusive suffix scan
        () => map2(T.shift1R(S), T.shift1L(T.scanr(c(1), v(suffixOver), pick(ops2))), (p1, q) => mul(p1, q)),
        () => map2(T.shift1R(S), v(pick(['A', 'B'])), (p1, b) => T.sub(p1, b)),
        () => map(T.shift1R(S), (p1) => op('exp', mul(p1, c(0.1)))),
        () =>
          map2(
            S,
            T.scanl(c(0), v('B'), (a, b) => T.add(a, b)),
            (p1, q) => T.add(p1, q),
          ),
        // a loop in the body: no blocked form
        () => map2(T.shift1R(S), v('B'), (p1, b) => mul(b, sumOf(map(v('A'), (y) => mul(y, p1))))),
      ]
      const others: Array<() => Term> = [() => lastOf(S), () => sumOf(S), () => sumOf(T.shift1R(S)), () => c(1)]
      const items = [pick(others)(), pick(consumers)()]
      if (next() < 0.25) items.push(pick(others)()) // a use after the consumer: not in place
      const t = let_('S', T.scanl(c(pick([1, 0.5, 2])), v(x), op2), tuple(...(next() < 0.5 ? items : [items[1]!])))
      marked += inPlaceMaps(t).size
      trimmed += trimmedScans(t).size
      const g = generate(t, AB, ops)
      for (const n of [0, 1, 2, 3, 4, 5, 7, 9]) {
        const a = Float64Array.from({ length: n }, () => 0.5 + next())
        const b = Float64Array.from({ length: n }, () => next() - 0.5)
        const env = new Map([
          ['A', fromHost(a)],
          ['B', fromHost(b)],
        ])
        const want = flat(toHost(evaluate(t, env, ops)))
        const first = g.fn(a, b)
        expect(maxScaledError(flat(first), want)).toBeLessThan(1e-13)
        expect(maxScaledError(flat(g.fn(a, b)), want)).toBeLessThan(1e-13)
        expect(maxScaledError(flat(first), want)).toBeLessThan(1e-13)
      }
    }
    // (how often each rewrite applies on these programs)
    expect(marked).toBeGreaterThan(20)
    expect(trimmed).toBeGreaterThan(10)
  })
})
