/**
 * The arithmetic behind `replay-bound` (see `replay-bound.ts`), checked on numbers:
 * - an f32 sum, difference, product, quotient or square root computed in doubles and rounded
 *   once with `Math.fround` is the IEEE f32 operation (WebAssembly's f32 instructions as the
 *   reference), subnormals, ±0, ±∞ and overflow included, so the cpu backend's f32 partial sums
 *   are correctly rounded f32 sums;
 * - the round-off a replay leaves in an element started at +0 is at most 2u·Q / (1 − m·u), Q the
 *   sum of the magnitudes of the element's m partial sums (f32 and f64, terms of mixed magnitudes
 *   and signs, subnormal, −0);
 * - the generated test `3 · u · P̂ <= tol` passes only where every element's residual is within
 *   the tolerance, and passes for the float32 leapfrog's accelerations (the bound over the terms'
 *   magnitudes did not).
 */
import { describe, expect, it } from 'vitest'
import { replayBoundTest } from './replay-bound.js'

let seed = 7
const rnd = () => {
  seed = (seed * 1103515245 + 12345) % 2147483648
  return seed / 2147483648
}

/** f32 add, sub, mul, div (f32, f32) → f32 and sqrt (f32) → f32, as WebAssembly computes them. */
function wasmF32(): Record<'a' | 's' | 'm' | 'd', (x: number, y: number) => number> & { q: (x: number) => number } {
  const bin = (op: number) => [0x07, 0x00, 0x20, 0x00, 0x20, 0x01, op, 0x0b]
  const bytes = new Uint8Array([
    ...[0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00],
    // types: (f32, f32) → f32, (f32) → f32
    ...[0x01, 0x0c, 0x02, 0x60, 0x02, 0x7d, 0x7d, 0x01, 0x7d, 0x60, 0x01, 0x7d, 0x01, 0x7d],
    ...[0x03, 0x06, 0x05, 0x00, 0x00, 0x00, 0x00, 0x01],
    ...[0x07, 0x15, 0x05],
    ...[0x01, 0x61, 0x00, 0x00, 0x01, 0x73, 0x00, 0x01, 0x01, 0x6d, 0x00, 0x02, 0x01, 0x64, 0x00, 0x03],
    ...[0x01, 0x71, 0x00, 0x04],
    ...[0x0a, 0x27, 0x05, ...bin(0x92), ...bin(0x93), ...bin(0x94), ...bin(0x95)],
    ...[0x05, 0x00, 0x20, 0x00, 0x91, 0x0b],
  ])
  // (the package's TypeScript library has no WebAssembly types: the two constructors used, typed here)
  const wa = (
    globalThis as unknown as {
      WebAssembly: { Instance: new (m: unknown) => { exports: unknown }; Module: new (b: Uint8Array) => unknown }
    }
  ).WebAssembly
  return new wa.Instance(new wa.Module(bytes)).exports as never
}

/** An f32 value: edge values, and random bit patterns (every exponent, subnormals, NaNs). */
function f32Value(): number {
  const edges = [0, -0, 1e-45, -1e-45, 1.1754942e-38, 1.17549435e-38, 3.4028235e38, -3.4028235e38, 1, 1 + 2 ** -23]
  const r = rnd()
  if (r < 0.15) return Math.fround(edges[Math.floor(rnd() * edges.length)]!)
  if (r < 0.2) return [Infinity, -Infinity, Number.NaN][Math.floor(rnd() * 3)]!
  const bits = new Uint32Array([Math.floor(rnd() * 2 ** 32)])
  // (half of them near one another, where sums cancel)
  return new Float32Array(bits.buffer)[0]!
}

const same = (a: number, b: number) => Object.is(a, b) || (Number.isNaN(a) && Number.isNaN(b))

describe('f32 arithmetic through doubles', () => {
  it('fround of the double sum, difference, product, quotient, square root is the IEEE f32 operation', () => {
    const w = wasmF32()
    const f = Math.fround
    const bad: string[] = []
    for (let k = 0; k < 200000; k++) {
      const a = f32Value()
      let b = f32Value()
      // (a neighbour of a: cancellation, Sterbenz, subnormal differences)
      if (k % 4 === 0) b = Math.fround(a * (1 + (rnd() - 0.5) * 2 ** -20))
      const checks: Array<[string, number, number]> = [
        ['+', f(a + b), w.a(a, b)],
        ['-', f(a - b), w.s(a, b)],
        ['*', f(a * b), w.m(a, b)],
        ['/', f(a / b), w.d(a, b)],
        ['sqrt', f(Math.sqrt(a)), w.q(a)],
      ]
      for (const [op, js, ref] of checks) if (!same(js, ref)) bad.push(`${a} ${op} ${b}: ${js} vs ${ref}`)
    }
    expect(bad.slice(0, 5)).toEqual([])
  })
})

/** A term of mixed magnitude and sign, in the element type (`round`). */
function term(round: (x: number) => number, scale: number): number {
  const r = rnd()
  if (r < 0.05) return -0
  if (r < 0.1) return round((rnd() < 0.5 ? -1 : 1) * 1e-45 * Math.floor(1 + rnd() * 4))
  const e = Math.floor(rnd() * 40) - 20
  return round((rnd() < 0.5 ? -1 : 1) * (0.5 + rnd()) * 2 ** e * scale)
}

describe('the round-off of a replay: at most 2u·Q / (1 − m·u)', () => {
  for (const [name, round, u] of [
    ['f32', Math.fround, 2 ** -24],
    ['f64', (x: number) => x, 2 ** -53],
  ] as const)
    it(`${name}: random elements, forward sums and their replay in the element type`, () => {
      seed = name === 'f32' ? 11 : 13
      const bad: string[] = []
      let inexact = 0
      for (let k = 0; k < 20000; k++) {
        const m = 1 + Math.floor(rnd() * 40)
        const scale = [1, 2 ** -120, 2 ** 60, 1e-3][k % 4]!
        const terms = Array.from({ length: m }, () => term(round, scale))
        const ops = terms.map(() => rnd() < 0.5)
        let S = 0,
          Q = 0
        for (let j = 0; j < m; j++) {
          S = round(ops[j] ? S + terms[j]! : S - terms[j]!)
          Q += Math.abs(S)
        }
        let B = S
        for (let j = m - 1; j >= 0; j--) B = round(ops[j] ? B - terms[j]! : B + terms[j]!)
        if (B !== 0) inexact++
        if (!(Math.abs(B) <= (2 * u * Q) / (1 - m * u))) bad.push(`${terms} ${ops}: ${B} > ${Q}`)
      }
      expect(bad.slice(0, 3)).toEqual([])
      // (round-off left in many of them)
      expect(inexact).toBeGreaterThan(2000)
    })

  it('the generated test passes only where every element is within the tolerance (f32, several elements)', () => {
    seed = 17
    const test = (n: number, p: number, tol: number) =>
      new Function('n', 'p', '$tol', `return ${replayBoundTest('n', 'p', 'f32', '$tol')}`)(n, p, tol) as boolean
    let passed = 0
    for (let k = 0; k < 5000; k++) {
      const elements = 1 + Math.floor(rnd() * 6)
      const a = new Array<number>(elements).fill(0)
      const log: Array<[number, number]> = []
      let P = -0
      const n = 1 + Math.floor(rnd() * 60)
      const scale = 2 ** -(Math.floor(rnd() * 40) + 10)
      for (let j = 0; j < n; j++) {
        const i = Math.floor(rnd() * elements)
        const t = term(Math.fround, scale)
        a[i] = Math.fround(a[i]! + t)
        P += Math.abs(a[i]!)
        log.push([i, t])
      }
      for (let j = n - 1; j >= 0; j--) {
        const [i, t] = log[j]!
        a[i] = Math.fround(a[i]! - t)
      }
      for (const tol of [1e-8, 1e-12, 1e-15, 1e-300, 0]) {
        if (!test(n, P, tol)) continue
        passed++
        for (const v of a) expect(Math.abs(v)).toBeLessThanOrEqual(tol)
      }
    }
    expect(passed).toBeGreaterThan(1000)
  })

  it("passes for the float32 leapfrog's first step (216 terms), where the bound over the terms did not", () => {
    // the Sun and eight planets (AU, solar masses, G in AU³/day²), the accelerations of one step
    const f = Math.fround
    const x = Float32Array.from([
      0, 0, 0, 0.31, 0.17, -0.01, 0.12, -0.72, -0.02, -0.18, 0.97, 0, 1.38, -0.04, -0.03, 3.8, 3.2, -0.1, 5.5, -8.3,
      -0.07, 15.3, 12.6, -0.15, 29.4, -5.5, -0.57,
    ])
    const m = Float32Array.from([1, 1.66e-7, 2.45e-6, 3.04e-6, 3.23e-7, 9.55e-4, 2.86e-4, 4.37e-5, 5.15e-5])
    const G = 2.9591220828559093e-4
    const a = new Float32Array(27)
    let n = 0,
      P = 0,
      V = 0
    for (let i = 0; i < 9; i++)
      for (let j = 0; j < 9; j++) {
        if (i === j) continue
        const d = [0, 1, 2].map((c) => f(x[3 * j + c]! - x[3 * i + c]!))
        const r2 = f(f(f(d[0]! * d[0]!) + f(d[1]! * d[1]!)) + f(d[2]! * d[2]!))
        const s = f(f(G * m[j]!) / f(r2 * f(Math.sqrt(r2))))
        for (let c = 0; c < 3; c++) {
          const t = f(s * d[c]!)
          a[3 * i + c] = f(a[3 * i + c]! + t)
          P += Math.abs(a[3 * i + c]!)
          V += Math.abs(t)
          n++
        }
      }
    const test = (p: number) =>
      new Function('n', 'p', '$tol', `return ${replayBoundTest('n', 'p', 'f32', '$tol')}`)(n, p, 1e-8) as boolean
    expect(n).toBe(216)
    expect(test(P)).toBe(true)
    // (the terms' bound, 5·N·u·V, is ~20 times the tolerance)
    expect(5 * n * 2 ** -24 * V).toBeGreaterThan(1e-8)
  })
})
