/**
 * The optimisations between partial evaluation and the JS: primal reuse between a map and its
 * transpose (`primal-reuse.ts`), the reduce/scanl sharing (`share-scans.ts`), and the code
 * generator's loop fusion of scans into maps, offset reads of shifted arrays, buffer reuse of
 * zero arrays, unrolled reductions and `reuseResults`. Each is checked on the code it emits and
 * on its values: against the interpreter on the unoptimised term (UNF⁻¹, before partial
 * evaluation) and against central finite differences.
 */
import { describe, expect, test } from 'vitest'
import { compile, type CompileOptions } from './compile.js'
import { generate } from './codegen.js'
import { ArrayValue, evaluate, fromHost, toHost, type Value } from './evaluate.js'
import { mlpObjective } from './models.js'
import { OpTable } from './ops.js'
import { partialEvaluate } from './partial-eval.js'
import { reusePrimals } from './primal-reuse.js'
import { shareScans } from './share-scans.js'
import * as T from './term.js'
import { c, canonicalNames, printTerm, v, type Term } from './term.js'
import { finiteDifferences, flat, maxScaledError, randomValue, rng } from './test-util.js'
import { arrayType, R, type Type } from './types.js'

const R1 = arrayType()
const R2 = arrayType(R1)
const ops = new OpTable()

/** Gradient = interpreter on the unoptimised term = finite differences; returns the compiled program. */
function agrees(params: Array<[string, Type]>, body: Term, args: unknown[], options: CompileOptions = {}) {
  const cp = compile(params, body, options)
  const [value, grad] = cp.gradient(...args)
  const env = new Map(params.map(([n, t], i) => [n, hostValue(args[i], t)]))
  const ref = toHost(evaluate(cp.stages.inverse, env, cp.ops)) as [number, unknown[]]
  expect(Math.abs(value - ref[0])).toBeLessThan(1e-12 * Math.max(1, Math.abs(ref[0])))
  expect(maxScaledError(flat(grad), flat(ref[1]))).toBeLessThan(1e-12)
  expect(
    maxScaledError(
      flat(grad),
      finiteDifferences((...a) => cp.value(...a) as number, args),
    ),
  ).toBeLessThan(1e-6)
  return cp
}

/** A host argument as an interpreter value (JS arrays are tuples to `fromHost`, so nested arrays are built here). */
function hostValue(x: unknown, t: Type): Value {
  if (t.kind === 'array' && t.elem.kind !== 'R')
    return new ArrayValue((x as unknown[]).map((e) => hostValue(e, (t as { elem: Type }).elem)))
  return fromHost(x)
}

/** How many times `Math[name]` is called while `run` runs. */
function mathCalls(name: 'exp' | 'tanh', run: () => unknown): number {
  const orig = Math[name]
  let count = 0
  Math[name] = (x: number) => {
    count++
    return orig(x)
  }
  try {
    run()
  } finally {
    Math[name] = orig
  }
  return count
}

const loops = (src: string) => (src.match(/\bfor \(/g) ?? []).length
const calls = (src: string, f: string) => src.split(f).length - 1

describe('primal reuse between a map and its transpose', () => {
  test('the sweep computes the map when its cotangent does not depend on it (MLP: one forward pass)', () => {
    const { params, body } = mlpObjective()
    const r = rng(3)
    const args = [
      randomValue(R2, r, (d) => (d === 0 ? 5 : 4)),
      randomValue(R1, r, () => 5),
      randomValue(R2, r, (d) => (d === 0 ? 3 : 5)),
      randomValue(R1, r, () => 3),
      randomValue(R2, r, (d) => (d === 0 ? 6 : 4)),
      randomValue(R2, r, (d) => (d === 0 ? 6 : 3)),
    ]
    const cp = agrees(params, body, args, { fastTanh: false }) // tanh as Math.tanh, counted
    // before: the value's own forward pass, the sweep's, and tanh twice more in the transpose
    // of the hidden layer; now one tanh per hidden unit and sample, in one pass over the samples
    // the loop over samples holds other loops: it is outlined into a function of its own
    expect(cp.source.gradient).toMatch(/^ {2}\(\(\) => \{\n {4}for \(let j\d+ = 0;/m)
    const samples = 6,
      hidden = 5
    expect(mathCalls('tanh', () => cp.gradient(...args))).toBe(samples * hidden)
    expect(mathCalls('tanh', () => cp.value(...args))).toBe(samples * hidden)
  })

  test('the sweep reads the map instead of recomputing a non-linear body (logsumexp: one exp per element)', () => {
    const A = Float64Array.of(0.3, -1.2, 2.5, 0.8, -0.1)
    agrees([['A', R1]], T.logsumexp(v('A')), [A])
    const cp = compile([['A', R1]], T.logsumexp(v('A')), { fastExp: false }) // exp as Math.exp, counted
    cp.gradient(A) // the first call also runs the feedback warm-up's short calls (codegen.ts)
    expect(mathCalls('exp', () => cp.gradient(A))).toBe(A.length)
  })

  test("a cheap body is not stored: ∇dot stays (B, A) and the paper's printed forms are unchanged", () => {
    const cp = compile(
      [
        ['A', R1],
        ['B', R1],
      ],
      T.dot(v('A'), v('B')),
    )
    expect(printTerm(canonicalNames(cp.stages.optimized))).toBe(
      '(reduce (a1, x1. a1 + x1) 0 (map2 (x2, y1. x2 * y1) A B), (B, A))',
    )
  })

  test('every tag is removed and the primal outputs nobody reads are pruned', () => {
    const body = T.sum(T.map(v('A'), (a) => T.op('tanh', T.mul(a, v('s')))))
    const cp = agrees(
      [
        ['A', R1],
        ['s', R],
      ],
      body,
      [Float64Array.of(0.2, -0.7, 1.4), 0.9],
    )
    const tags: string[] = []
    const find = (t: Term) => {
      if (t.k === 'mapAccum' && t.primal !== undefined) tags.push(t.primal)
      T.children(t).forEach(find)
    }
    find(cp.stages.optimized)
    expect(tags).toEqual([])
    // the rewrite alone, on an already optimised term, changes nothing
    expect(reusePrimals(cp.stages.optimized)).toEqual(cp.stages.optimized)
  })

  test('the map stores the arrays its transpose would recompute (residuals), in buffers kept across calls', () => {
    // per point x, a log-sum-exp over components m of Σ tanh(x − m)²: the components' cotangents
    // depend on all of them (the softmax), so the transpose cannot compute them; it reads the
    // stored tanh(x − m) instead of computing them again
    const body = T.sum(
      T.map(v('X'), (x) =>
        T.logsumexp(
          T.map(v('M'), (m) =>
            T.sum(
              T.map(
                T.map2(x, m, (a, b) => T.op('tanh', T.sub(a, b))),
                (t) => T.mul(t, t),
              ),
            ),
          ),
        ),
      ),
    )
    const r = rng(17)
    const data = (points: number) => [
      randomValue(R2, r, (d) => (d === 0 ? points : 3)),
      randomValue(R2, r, (d) => (d === 0 ? 4 : 3)),
    ]
    const args = data(5)
    const cp = agrees(
      [
        ['X', R2],
        ['M', R2],
      ],
      body,
      args,
      { fastTanh: false }, // tanh as Math.tanh, counted
    )
    expect(mathCalls('tanh', () => cp.gradient(...args))).toBe(5 * 4 * 3)
    // no allocation grows with the data (the gradient w.r.t. M only: X's has a row per point):
    // rows are refilled in place from the second call on
    const wrtM = compile(
      [
        ['X', R2],
        ['M', R2],
      ],
      body,
      { wrt: ['M'] },
    )
    const allocations = (a: unknown[]) => {
      const Real = globalThis.Float64Array
      let count = 0
      globalThis.Float64Array = new Proxy(Real, {
        construct(t, xs) {
          count++
          return new t(...(xs as [number]))
        },
      })
      try {
        wrtM.gradient(...a)
      } finally {
        globalThis.Float64Array = Real
      }
      return count
    }
    const small = data(3),
      large = data(12)
    wrtM.gradient(...small)
    const forSmall = allocations(small)
    wrtM.gradient(...large)
    expect(allocations(large)).toBe(forSmall)
  })

  test('maps inside maps: nested transposes (GMM-like) agree with the interpreter', () => {
    const X = [Float64Array.of(0.1, 0.5, -0.3), Float64Array.of(1.2, -0.4, 0.2)]
    const M = [Float64Array.of(0.3, 0.1, 0.7), Float64Array.of(-0.5, 0.6, 0.2), Float64Array.of(0.05, -0.2, 0.4)]
    const body = T.sum(
      T.map(v('X'), (x) =>
        T.logsumexp(
          T.map(v('M'), (m) => T.neg(T.sum(T.map2(x, m, (a, b) => T.op('square', T.op('tanh', T.sub(a, b))))))),
        ),
      ),
    )
    agrees(
      [
        ['X', R2],
        ['M', R2],
      ],
      body,
      [X, M],
    )
  })
})

describe('a reduce shares the loop of an equal scanl (share-scans.ts)', () => {
  test('∇prod: the value is the last prefix product; the suffix products are blocked chains in the map', () => {
    const cp = agrees([['A', R1]], T.prod(v('A')), [Float64Array.of(0.5, 2, -1.5, 0.7, 1.1)])
    const src = cp.source.gradient
    // the prefix products in four blocks (their last offset and total give the value), then the
    // map over the suffix products on the same blocks (blocked-scans.ts): four chains and the
    // last block's tail each
    expect(loops(src)).toBe(4)
    expect(src).toMatch(/const t\d+ = f\d+ \* T\d+;/)
    // one array: the prefix products (their first n states), overwritten by the gradient
    // (in-place-maps.ts) and returned
    expect(calls(src, 'new Float64Array(')).toBe(1)
    const arr = /const (o\d+) = new Float64Array\((n\d+)\);/.exec(src)!
    expect(src).toContain(`return [t`)
    expect(src).toMatch(new RegExp(`return \\[t\\d+, \\[${arr[1]}\\]\\];`))
    expect(src).not.toContain('subarray')
  })

  test('the rewrite on terms: reduce ⇝ last S when S = scanl of the same operator is in scope', () => {
    const t: Term = T.tuple(
      T.prod(v('A')),
      T.scanl(c(1), v('A'), (a, x) => T.mul(a, x)),
    )
    const shared = shareScans(t)
    expect(printTerm(canonicalNames(shared))).toMatch(
      /^let S1 = scanl \(a\d, x\d\. a\d \* x\d\) 1 A in\n\(last S1, S1\)$/,
    )
    const env = new Map([['A', fromHost(Float64Array.of(2, 3, 4))]])
    expect(toHost(evaluate(shared, env, ops))).toEqual(toHost(evaluate(t, env, ops)))
    // a different operator, initial value or array is not shared
    for (const other of [
      T.scanl(c(1), v('A'), (a, x) => T.add(a, x)),
      T.scanl(c(2), v('A'), (a, x) => T.mul(a, x)),
      T.scanl(c(1), v('B'), (a, x) => T.mul(a, x)),
    ]) {
      const u = T.tuple(T.prod(v('A')), other)
      expect(shareScans(u)).toEqual(u)
    }
  })
})

describe('code generation', () => {
  test("a scan consumed by a map is produced by the map's loop, in either direction", () => {
    const r = rng(5)
    const A = () => Float64Array.from({ length: 6 }, () => r() + 0.5)
    const left = T.sum(
      T.map2(
        T.scanl(c(0.5), v('A'), (a, x) => T.mul(a, x)),
        v('B'),
        (s, b) => T.mul(s, T.op('sin', b)),
      ),
    )
    const right = T.sum(
      T.map2(
        T.scanr(c(0.5), v('A'), (a, x) => T.add(a, T.mul(x, x))),
        v('B'),
        (s, b) => T.mul(s, b),
      ),
    )
    for (const body of [left, right])
      agrees(
        [
          ['A', R1],
          ['B', R1],
        ],
        body,
        [A(), Float64Array.from({ length: 7 }, () => r())],
      )
    // a map over a scan: one loop, in the scan's direction, and no array of states (a scan of
    // + or · alone is blocked instead, see below)
    for (const scan of [T.scanl, T.scanr]) {
      const term = T.map2(
        scan(c(0.5), v('A'), (a, x) => T.add(T.mul(a, x), c(0.25))),
        v('B'),
        (s, b) => T.mul(s, b),
      )
      const g = generate(
        term,
        [
          { name: 'A', type: R1 },
          { name: 'B', type: R1 },
        ],
        ops,
      )
      expect(loops(g.source)).toBe(1)
      expect(calls(g.source, 'new Float64Array(')).toBe(1) // the map's own result
      const a = A(),
        b = Float64Array.from({ length: 7 }, () => r())
      const expected = toHost(
        evaluate(
          term,
          new Map([
            ['A', fromHost(a)],
            ['B', fromHost(b)],
          ]),
          ops,
        ),
      ) as Float64Array
      expect(maxScaledError(Array.from(g.fn(a, b) as Float64Array), Array.from(expected))).toBeLessThan(1e-15)
    }
  })

  test('a map over a scan of + or · runs four blocks with their own chains; every length and direction agrees', () => {
    const r = rng(21)
    for (const scan of [T.scanl, T.scanr])
      for (const op of [T.mul, T.add])
        for (const of of [v('A'), T.map(v('A'), (a) => T.op('exp', a)), T.shift1L(v('A'))]) {
          const term = T.map2(
            scan(c(0.75), of, (a, x) => op(a, x)),
            v('B'),
            (s, b) => T.mul(T.op('tanh', s), b),
          )
          const g = generate(
            term,
            [
              { name: 'A', type: R1 },
              { name: 'B', type: R1 },
            ],
            ops,
          )
          // block totals, the four chains, the last block's tail; no array of states
          expect(loops(g.source)).toBe(3)
          expect(g.source).toContain('>> 2')
          expect(calls(g.source, 'new Float64Array(')).toBe(1)
          for (let n = of.k === 'shift1L' ? 1 : 0; n <= 13; n++) {
            const m = of.k === 'shift1L' ? n : n + 1
            const a = Float64Array.from({ length: n }, () => 0.5 + r())
            const b = Float64Array.from({ length: m }, () => r() - 0.5)
            const env = new Map([
              ['A', fromHost(a)],
              ['B', fromHost(b)],
            ])
            const expected = toHost(evaluate(term, env, ops)) as Float64Array
            const got = g.fn(a, b) as Float64Array
            expect(got.length).toBe(expected.length)
            expect(maxScaledError(Array.from(got), Array.from(expected))).toBeLessThan(1e-13)
          }
        }
    // a scan whose elements need a loop, or whose body is not the operator alone, is one chain
    const nested = generate(
      T.map(
        T.scanl(
          c(0),
          T.map(v('M'), (row) => T.sum(row)),
          (a, x) => T.add(a, x),
        ),
        (s) => T.mul(s, s),
      ),
      [{ name: 'M', type: R2 }],
      ops,
    )
    const affine = generate(
      T.map(
        T.scanl(c(0), v('A'), (a, x) => T.add(T.mul(a, x), c(1))),
        (s) => T.mul(s, s),
      ),
      [{ name: 'A', type: R1 }],
      ops,
    )
    for (const g of [nested, affine]) expect(g.source).not.toContain('>> 2')
    // and gradients through them against the interpreter and finite differences
    agrees(
      [['A', R1]],
      T.add(
        T.sum(
          T.map(
            T.scanl(c(0.5), v('A'), (a, x) => T.mul(a, x)),
            (s) => T.op('sin', s),
          ),
        ),
        T.sum(
          T.map(
            T.scanr(c(0.5), v('A'), (a, x) => T.add(a, x)),
            (s) => T.mul(s, s),
          ),
        ),
      ),
      [Float64Array.from({ length: 11 }, () => 0.5 + r())],
    )
  })

  test("the reductions of a stored map later in its scope run in the map's loop", () => {
    // ∇logsumexp: max, then exp stored and summed in one loop, then the softmax
    const cp = agrees([['A', R1]], T.logsumexp(v('A')), [Float64Array.of(0.3, -1.2, 2.5, 0.1, 0.9, -0.4)])
    expect(loops(cp.source.gradient)).toBe(6) // max, exp and sum, softmax: each a main loop and its remainder
    // both reductions of one map, and a reduce of another constant or operator, come from its loop
    const e = T.map(v('A'), (a) => T.op('exp', a))
    const body = T.let_(
      'E',
      e,
      T.add(
        T.mul(
          T.sum(v('E')),
          T.reduce(c(2), v('E'), (a, x) => T.mul(x, a)),
        ),
        T.sum(T.map2(v('E'), v('A'), (p, q) => T.mul(p, q))),
      ),
    )
    for (let n = 0; n <= 9; n++) {
      const A = Float64Array.from({ length: n }, (_, i) => 0.3 * i - 1)
      const g = generate(body, [{ name: 'A', type: R1 }], ops)
      expect(loops(g.source)).toBe(4) // E with both reductions; the last sum (each main and remainder)
      const expected = toHost(evaluate(body, new Map([['A', fromHost(A)]]), ops)) as number
      expect(Math.abs((g.fn(A) as number) - expected)).toBeLessThan(1e-12 * Math.max(1, Math.abs(expected)))
    }
    agrees([['A', R1]], body, [Float64Array.of(0.2, -0.7, 0.5, 1.1, -0.3)])
  })

  test('shifted arrays are read at an offset (no views); empty arrays keep their lengths', () => {
    const body = T.sum(T.map2(T.shift1L(v('A')), T.shift1R(v('A')), (a, b) => T.mul(a, b)))
    const cp = agrees([['A', R1]], body, [Float64Array.of(0.4, -1.1, 0.9, 2)])
    expect(cp.source.value).not.toContain('subarray')
    expect(cp.value(new Float64Array(0))).toBe(0)
  })

  test('reductions of + and · over loop-free elements use four partial results; every length agrees', () => {
    const s = compile([['A', R1]], T.sum(T.map(v('A'), (a) => T.mul(a, a))))
    const p = compile([['A', R1]], T.prod(v('A')))
    expect(s.source.value).toContain('+= 4')
    for (let n = 0; n <= 9; n++) {
      const A = Float64Array.from({ length: n }, (_, i) => 0.9 + 0.05 * i)
      let sq = 0,
        pr = 1
      for (const a of A) {
        sq += a * a
        pr *= a
      }
      expect(s.value(A)).toBeCloseTo(sq, 12)
      expect(p.value(A)).toBeCloseTo(pr, 12)
    }
    // a reduce whose elements need a loop is not unrolled (its code would be copied five times)
    const nested = compile([['M', R2]], T.sum(T.map(v('M'), (row) => T.sum(row))))
    expect(calls(nested.source.value, '+= 4')).toBe(1)
  })

  test('zero accumulators inside loops reuse a cleared buffer: repeated calls give the same gradient', () => {
    const { params, body } = mlpObjective()
    const r = rng(11)
    const args = [
      randomValue(R2, r, (d) => (d === 0 ? 4 : 3)),
      randomValue(R1, r, () => 4),
      randomValue(R2, r, (d) => (d === 0 ? 2 : 4)),
      randomValue(R1, r, () => 2),
      randomValue(R2, r, (d) => (d === 0 ? 5 : 3)),
      randomValue(R2, r, (d) => (d === 0 ? 5 : 2)),
    ]
    const cp = compile(params, body)
    expect(cp.source.gradient).toContain('.fill(0)')
    const first = flat(cp.gradient(...args)[1])
    const second = flat(cp.gradient(...args)[1])
    expect(second).toEqual(first)
    expect(
      maxScaledError(
        first,
        finiteDifferences((...a) => cp.value(...a) as number, args),
      ),
    ).toBeLessThan(1e-6)
  })

  test('reuseResults: arrays computed once per call are kept and overwritten by the next call', () => {
    const fresh = compile([['A', R1]], T.prod(v('A')))
    const kept = compile([['A', R1]], T.prod(v('A')), { reuseResults: true })
    const g1 = fresh.gradient(Float64Array.of(2, 3, 4))[1][0] as Float64Array
    const g2 = fresh.gradient(Float64Array.of(1, 1, 1))[1][0] as Float64Array
    expect(g1).not.toBe(g2)
    expect(Array.from(g1)).toEqual([12, 8, 6])
    const k1 = kept.gradient(Float64Array.of(2, 3, 4))[1][0] as Float64Array
    expect(Array.from(k1)).toEqual([12, 8, 6])
    const k2 = kept.gradient(Float64Array.of(1, 1, 1))[1][0] as Float64Array
    expect(k2).toBe(k1)
    expect(Array.from(k1)).toEqual([1, 1, 1])
    // a new length reallocates
    expect(Array.from(kept.gradient(Float64Array.of(2, 5))[1][0] as Float64Array)).toEqual([5, 2])
  })
})

describe("partial evaluation keeps its results on the paper's examples", () => {
  test('the optimised term is a fixpoint of a further round', () => {
    const cp = compile([['A', R1]], T.logsumexp(v('A')))
    expect(partialEvaluate(cp.stages.optimized)).toEqual(cp.stages.optimized)
  })
})
