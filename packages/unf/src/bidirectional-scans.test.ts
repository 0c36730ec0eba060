/**
 * Bidirectional scan fusion (`bidirectional-scans.ts`): a map over a scanl and a scanr runs both
 * in one loop from both ends. The printed code before and after; every length 0–13 (odd, even,
 * empty) in both argument orders, inclusive and exclusive scans, with a third array; random
 * programs; results bit for bit those of the unfused code (`bidirectionalScans: false`) and of
 * the interpreter; a gradient through the fused map and ∇prod (with zeros, which this fusion
 * leaves to its blocked passes) against finite differences.
 */
import { describe, expect, test } from 'vitest'
import { generate } from './codegen.js'
import { compile } from './compile.js'
import { evaluate, fromHost, toHost } from './evaluate.js'
import { OpTable } from './ops.js'
import { reverseStages } from './pipeline.js'
import * as T from './term.js'
import { c, v, type Term } from './term.js'
import { finiteDifferences, flat, maxScaledError, rng } from './test-util.js'
import { arrayType } from './types.js'

const R1 = arrayType()
const ops = new OpTable()
const AB = [
  { name: 'A', type: R1 },
  { name: 'B', type: R1 },
]
/** not associative: one chain per scan in either form */
const affine = (a: Term, b: Term) => T.add(T.mul(a, c(0.5)), b)
const damped = (a: Term, b: Term) => T.sub(T.mul(a, c(0.75)), T.mul(b, c(0.25)))
const times = (a: Term, b: Term) => T.mul(a, b)
const plus = (a: Term, b: Term) => T.add(a, b)
const isAssociative = (f: unknown) => f === times || f === plus

const leftScan = (exclusive: boolean, z: number, f: (a: Term, b: Term) => Term, x: Term) =>
  exclusive ? T.shift1R(T.scanl(c(z), x, f)) : T.scanl(c(z), x, f)
const rightScan = (exclusive: boolean, z: number, f: (a: Term, b: Term) => Term, x: Term) =>
  exclusive ? T.shift1L(T.scanr(c(z), x, f)) : T.scanr(c(z), x, f)

const both = (term: Term) => ({
  fused: generate(term, AB, ops),
  unfused: generate(term, AB, ops, { bidirectionalScans: false }),
})

/** Runs f; its value, or the error's class when it throws. */
function outcome(f: () => unknown): { value?: number[]; error?: string } {
  try {
    return { value: flat(f()) }
  } catch (e) {
    return { error: (e as Error).constructor.name }
  }
}

/** Every element equal, NaN and the sign of zero included. */
function sameBits(a: number[] | undefined, b: number[] | undefined) {
  expect(a?.length).toBe(b?.length)
  a?.forEach((x, i) => {
    if (!Object.is(x, b![i])) expect([i, x]).toEqual([i, b![i]])
  })
}

/** Every element within 1e-13 (scaled) of the other's, NaN for NaN and ±Infinity for the same. */
function closeTo(a: number[] | undefined, b: number[] | undefined) {
  expect(a?.length).toBe(b?.length)
  a?.forEach((x, i) => {
    const y = b![i]!
    if (Object.is(x, y) || (Number.isNaN(x) && Number.isNaN(y))) return
    if (Math.abs(x - y) / Math.max(1, Math.abs(y)) < 1e-13) return
    expect([i, x]).toEqual([i, y])
  })
}

/** The generated source with its local names numbered in order of appearance. */
function canonical(src: string): string {
  const names = new Map<string, string>()
  return src.replace(/\b([a-zA-Z]+)(\d+)\b/g, (m, base: string) => {
    if (/^p\d+$/.test(m) || base === 'bufs') return m
    if (!names.has(m)) names.set(m, `${base}#${names.size}`)
    return names.get(m)!
  })
}

/**
 * Fused code = unfused code, bit for bit unless `close` (the unfused code runs a scan of + or ·
 * in four blocks: rounding), and = the interpreter, bit for bit unless `reduced` (a sum in four
 * partial results in both codes), at the given lengths.
 */
function agrees(term: Term, lengths: number[], seed: number, close = false, reduced = false) {
  const { fused, unfused } = both(term)
  const r = rng(seed)
  for (const n of lengths) {
    const a = Float64Array.from({ length: n }, () => 0.5 + r())
    const b = Float64Array.from({ length: n }, () => r() - 0.5)
    if (n > 4) a[n - 3] = 0
    if (n > 6) b[1] = 0
    const env = new Map([
      ['A', fromHost(a)],
      ['B', fromHost(b)],
    ])
    const want = outcome(() => toHost(evaluate(term, env, ops)))
    const got = outcome(() => fused.fn(a, b))
    const before = outcome(() => unfused.fn(a, b))
    expect(got.error).toBe(want.error === undefined ? undefined : 'UnfError')
    expect(before.error).toBe(got.error)
    if (got.error) continue
    if (reduced) closeTo(got.value, want.value)
    else sameBits(got.value, want.value)
    if (close) closeTo(got.value, before.value)
    else sameBits(got.value, before.value)
    sameBits(outcome(() => fused.fn(a, b)).value, got.value) // a second call (reused buffers)
  }
  return { fused: fused.source, unfused: unfused.source }
}

const ALL = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13]
const loops = (src: string) => (src.match(/\bfor \(/g) ?? []).length
const allocations = (src: string) => (src.match(/new Float64Array\(/g) ?? []).length

describe('bidirectional scan fusion', () => {
  test('printed code: one loop from both ends, no stored scan (before: the scanr stored, then the map)', () => {
    const term = T.map2(leftScan(true, 0, affine, v('A')), rightScan(true, 0, damped, v('A')), (p, s) =>
      T.sub(T.mul(p, s), p),
    )
    const { fused, unfused } = agrees(term, ALL, 1)
    // before: the scanr's n + 1 states in an array, then the map with the scanl fused into it
    expect(unfused).toMatch(/new Float64Array\(n\d+ \+ 1\)/)
    expect(unfused).toMatch(/for \(let j\d+ = n\d+ - 1; j\d+ >= 0; j\d+--\)/)
    expect(allocations(unfused)).toBe(2)
    // after: the result only, both scans' states in locals, the middle index for odd n
    expect(allocations(fused)).toBe(1)
    expect(fused).not.toMatch(/\+ 1\)/)
    expect(fused).toMatch(/const (n\d+) = n\d+ >> 1;\n\s*let (j\d+) = 0;\n\s*for \(; \2 < \1; \2\+\+\) \{/)
    expect(fused).toMatch(/if \((j\d+) \+ \1 < n\d+\) \{/)
    expect(loops(fused)).toBe(2)
    expect(loops(unfused)).toBe(2)
  })

  for (const [excl, name] of [
    [true, 'exclusive (shift1R scanl, shift1L scanr)'],
    [false, 'inclusive (n + 1 states each)'],
  ] as const) {
    test(`${name}: every length 0–13, both argument orders, bit for bit`, () => {
      for (const [f, h, z] of [
        [affine, damped, 0.5],
        [damped, affine, 2],
        [times, affine, 1],
        [plus, times, 0],
        [times, times, 1],
      ] as const) {
        const close = isAssociative(f) || isAssociative(h)
        const L = leftScan(excl, z, f, v('A')),
          Rr = rightScan(excl, z + 1, h, v('B'))
        // g reads its arguments in either order (not symmetric): the stored state goes to its own parameter
        const src = agrees(
          T.map2(L, Rr, (p, s) => T.sub(p, T.mul(s, c(2)))),
          ALL,
          3,
          close,
        )
        expect(allocations(src.fused)).toBe(1)
        agrees(
          T.map2(Rr, L, (s, p) => T.sub(p, T.mul(s, c(2)))),
          ALL,
          4,
          close,
        )
        // a third array read at either end
        agrees(
          T.mapN([L, v('B'), Rr], (p, b, s) => T.add(T.mul(p, b), s)),
          excl ? ALL : [0],
          5,
          close,
        )
      }
    })
  }

  test('scans of different arrays, lengths checked; a mixed pair (inclusive over shift1L A, exclusive over A)', () => {
    agrees(T.map2(leftScan(true, 1, affine, v('A')), rightScan(true, 0, damped, v('B')), times), ALL, 6)
    // |A| states each: scanl over A without its first element, the suffix states of A
    agrees(
      T.map2(T.scanl(c(1), T.shift1L(v('A')), affine), rightScan(true, 0, damped, v('A')), (p, s) => T.div(p, s)),
      ALL,
      7,
    )
    // different lengths: the same shape error as before
    const { fused } = both(T.map2(leftScan(true, 1, affine, v('A')), rightScan(true, 0, damped, v('B')), times))
    expect(() => fused.fn(new Float64Array(3), new Float64Array(4))).toThrow(/different lengths/)
  })

  test('left alone: a map over one scan, two scans in the same direction, a tuple state, a stored scan', () => {
    const one = both(T.map2(leftScan(true, 1, affine, v('A')), v('B'), times))
    expect(one.fused.source).toBe(one.unfused.source)
    const same = both(T.map2(leftScan(true, 1, affine, v('A')), leftScan(true, 0, damped, v('B')), times))
    expect(same.fused.source).toBe(same.unfused.source)
    const S = v('S')
    const stored = T.let_(
      'S',
      T.scanl(c(1), v('A'), affine),
      T.tuple(T.map2(S, rightScan(false, 0, damped, v('A')), times), { k: 'last', array: S }),
    )
    const st = both(stored)
    expect(st.fused.source).toBe(st.unfused.source)
  })

  test('80 random programs (operators, forms, orders, consumers): fused = unfused = interpreter', () => {
    const next = rng(2024)
    const pick = <X>(xs: readonly X[]): X => xs[Math.floor(next() * xs.length)]!
    const leaf = (a: Term, x: Term): Term => pick([a, x, c(pick([0.5, -1.5, 2, 0.25]))])
    const body = (depth: number) => {
      const gen = (a: Term, x: Term, d: number): Term =>
        d === 0 || next() < 0.3 ? leaf(a, x) : T.op(pick(['+', '-', '*', '*']), gen(a, x, d - 1), gen(a, x, d - 1))
      // the state always read (else the scan is only its length)
      return (a: Term, x: Term) => T.add(T.mul(a, c(pick([0.5, 0.75, -0.5]))), gen(a, x, depth))
    }
    let fusedCount = 0
    for (let p = 0; p < 80; p++) {
      const excl = next() < 0.6
      const fl = pick([body(2), times, plus, affine]),
        fr = pick([body(2), times, damped])
      const L = leftScan(excl, pick([0, 1, -0.5]), fl, v('A'))
      const Rr = rightScan(excl, pick([0, 1, 2]), fr, v(pick(['A', 'B'])))
      const g = (p1: Term, s: Term, b: Term): Term =>
        pick([() => T.mul(p1, s), () => T.sub(p1, T.mul(s, b)), () => T.add(T.mul(p1, p1), T.div(s, T.add(b, c(3))))])()
      const third = excl && next() < 0.4
      let m = third
        ? T.mapN([Rr, v('B'), L], (s, b, p1) => g(p1, s, b))
        : next() < 0.5
          ? T.map2(L, Rr, (p1, s) => g(p1, s, c(0.5)))
          : T.map2(Rr, L, (s, p1) => g(p1, s, c(0.5)))
      const consumer = pick(['result', 'sum', 'map'])
      if (consumer === 'sum') m = T.sum(m)
      else if (consumer === 'map') m = T.map(m, (y) => T.mul(y, c(3)))
      const blocked = isAssociative(fl) || isAssociative(fr)
      const src = agrees(m, [0, 1, 2, 3, 4, 5, 8, 9], 100 + p, blocked, consumer === 'sum')
      if (/if \((j\d+) \+ \1 < n\d+\) \{/.test(src.fused)) fusedCount++
    }
    expect(fusedCount).toBe(80)
  })

  test('a gradient through the fused map (the value code) against finite differences', () => {
    const params: Array<[string, typeof R1]> = [['A', R1]]
    const body = T.sum(
      T.map2(leftScan(true, 0.5, affine, v('A')), rightScan(true, 1, damped, v('A')), (p, s) =>
        T.mul(T.mul(p, s), T.add(p, c(1))),
      ),
    )
    const cc = compile(params, body)
    expect(cc.source.value).toMatch(/if \((j\d+) \+ \1 < n\d+\) \{/)
    const r = rng(9)
    for (const n of [1, 2, 5, 8]) {
      const a = Float64Array.from({ length: n }, () => r() - 0.3)
      if (n > 4) a[2] = 0
      const [val, [g]] = cc.gradient(a)
      expect(val).toBeCloseTo(cc.value(a) as number, 12)
      const fd = finiteDifferences((x) => cc.value(x) as number, [Float64Array.from(a)])
      expect(maxScaledError(flat(g), fd)).toBeLessThan(1e-7)
    }
  })

  test('∇prod (zeros included) keeps its blocked passes, unchanged, and matches finite differences', () => {
    const body = T.prod(v('A'))
    const stages = reverseStages(body, [{ name: 'A', type: R1 }], c(1), ops)
    const on = generate(stages.optimized, [{ name: 'A', type: R1 }], ops)
    const off = generate(stages.optimized, [{ name: 'A', type: R1 }], ops, { bidirectionalScans: false })
    expect(on.source).toBe(off.source)
    const cc = compile([['A', R1]], body)
    const r = rng(11)
    for (const n of [1, 2, 3, 7, 12]) {
      for (const zeros of [[], [0], [n - 1], [0, n - 1]]) {
        const a = Float64Array.from({ length: n }, () => 0.5 + r())
        for (const z of zeros) a[z] = 0
        const [, [g]] = cc.gradient(a) as [number, Float64Array[]]
        const fd = finiteDifferences((x) => cc.value(x) as number, [Float64Array.from(a)])
        expect(maxScaledError(flat(g), fd)).toBeLessThan(1e-7)
      }
    }
  })

  test('a scalar result type is required: a map whose body is a tuple is left alone', () => {
    const t = T.map2(leftScan(true, 1, affine, v('A')), rightScan(true, 0, damped, v('A')), (p, s) => T.tuple(p, s))
    const { fused, unfused } = both(t)
    expect(canonical(fused.source)).toBe(canonical(unfused.source))
    const a = Float64Array.of(0.5, 2, 3)
    expect(flat(fused.fn(a, a))).toEqual(flat(unfused.fn(a, a)))
  })
})
