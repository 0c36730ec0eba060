/**
 * `fastTanh` against a 200-bit reference (fixed-point BigInt arithmetic: e^(2x) by range
 * reduction with ln 2 and Taylor's series, then (E − 1)/(E + 1)), in ulps of the result, beside
 * `Math.tanh` on the same points; special arguments; `ftanh` in generated code.
 */
import { describe, expect, test } from 'vitest'
import { compile } from './compile.js'
import { fastTanh } from './fast-tanh.js'
import { mlpObjective } from './models.js'
import { map, op, sum, v } from './term.js'
import { finiteDifferences, flat, maxScaledError, randomValue, rng } from './test-util.js'
import { arrayType, R } from './types.js'

const S = 200n
const ONE = 1n << S

/** ln 2 = Σ_{k≥1} 1/(k·2^k), to S fractional bits. */
const LN2 = (() => {
  const g = 16n
  let s = 0n
  for (let k = 1n; k < S + g + 8n; k++) s += (1n << (S + g)) / (k << k)
  return s >> g
})()

/** The exact value of a double in fixed point with S fractional bits (|x| ≥ 2⁻¹⁴⁰). */
function fixed(x: number): bigint {
  const f = new Float64Array([x])
  const bits = new BigUint64Array(f.buffer)[0]!
  const exponent = Number((bits >> 52n) & 0x7ffn)
  const mantissa = (bits & ((1n << 52n) - 1n)) | (exponent === 0 ? 0n : 1n << 52n)
  const e = BigInt(Math.max(exponent, 1) - 1075) + S
  const m = e >= 0n ? mantissa << e : mantissa >> -e
  return x < 0 ? -m : m
}

/** tanh(x) for x > 0 in fixed point: e^(2x) = 2^k e^r, |r| ≤ ln2/2, then (E − 1)/(E + 1). */
function referenceTanh(x: number): bigint {
  const X = 2n * fixed(x)
  const k = (X + LN2 / 2n) / LN2
  const r = X - k * LN2
  let term = ONE
  let er = ONE
  for (let i = 1n; term !== 0n; i++) {
    term = (term * r) / (i << S)
    er += term
  }
  const E = er << k
  return ((E - ONE) << S) / (E + ONE)
}

/** The error of y as an approximation of tanh(x), x > 0, in ulps of y. */
function ulpError(x: number, y: number): number {
  const ulp = 2 ** (Math.floor(Math.log2(y)) - 52)
  return Number(fixed(y) - referenceTanh(x)) / Number(ONE) / ulp
}

describe('fastTanh', () => {
  test('the reference: tanh(ln 3 / 2) = 1/2 to well under an ulp', () => {
    expect(Math.abs(ulpError(Math.log(3) / 2, 0.5))).toBeLessThan(1)
    expect(Math.abs(ulpError(1, Math.tanh(1)))).toBeLessThan(1)
  })

  test('within 1.1 ulp of tanh on 12,000 points over its range (Math.tanh: about 2)', () => {
    const next = rng(23)
    const points: number[] = []
    for (let i = 0; i < 4000; i++) points.push(0.55 * next())
    for (let i = 0; i < 4000; i++) points.push(0.55 + 18.5125 * next())
    for (let i = 0; i < 2000; i++) points.push(3 * next()) // the MLP's hidden units
    for (let i = 0; i < 2000; i++) points.push(2 ** (-6 - 50 * next())) // the polynomial
    points.push(0.015625, 0.0156249, 0.55, 0.5493061443340549, Math.LN2 / 2, 1e-3, 19.06, 18.72457452188246)
    let worst = 0
    let worstMath = 0
    for (const x of points) {
      const e = Math.abs(ulpError(x, fastTanh(x)))
      worst = Math.max(worst, e)
      worstMath = Math.max(worstMath, Math.abs(ulpError(x, Math.tanh(x))))
      expect(fastTanh(-x)).toBe(-fastTanh(x))
    }
    expect(worst).toBeLessThan(1.1)
    // printed for the README
    console.log(`fastTanh: max ${worst.toFixed(4)} ulp; Math.tanh: max ${worstMath.toFixed(4)} ulp`)
  })

  test('special and extreme arguments', () => {
    expect(fastTanh(Number.NaN)).toBeNaN()
    expect(fastTanh(Infinity)).toBe(1)
    expect(fastTanh(-Infinity)).toBe(-1)
    expect(fastTanh(19.0625)).toBe(1)
    expect(fastTanh(-30)).toBe(-1)
    expect(Math.tanh(19.0625)).toBe(1)
    // never above 1 in magnitude, monotone over the cut
    let prev = 0
    for (let x = 17; x < 19.2; x += 1 / 1024) {
      const t = fastTanh(x)
      expect(t).toBeLessThanOrEqual(1)
      expect(t).toBeGreaterThanOrEqual(prev)
      prev = t
    }
    expect(Object.is(fastTanh(-0), -0)).toBe(true)
    expect(fastTanh(0)).toBe(0)
    expect(fastTanh(5e-324)).toBe(5e-324)
    expect(fastTanh(1e-300)).toBe(1e-300)
  })
})

describe('fastTanh in generated code', () => {
  test('the built-in tanh is `ftanh` by default, `Math.tanh` with fastTanh: false; same values to 1e-15', () => {
    const body = sum(map(v('A'), (a) => op('tanh', op('*', a, v('s')))))
    const params: Array<[string, typeof R]> = [
      ['A', arrayType()],
      ['s', R],
    ]
    const fast = compile(params, body)
    const plain = compile(params, body, { fastTanh: false })
    expect(fast.source.gradient).toContain('ftanh(')
    expect(fast.source.value).toContain('ftanh(')
    expect(fast.source.gradient).not.toContain('Math.tanh')
    expect(plain.source.gradient).toContain('Math.tanh(')
    expect(plain.source.gradient).not.toContain('ftanh(')
    const A = Float64Array.from({ length: 23 }, (_, i) => Math.sin(i) * 3)
    const [v1, [g1, s1]] = fast.gradient(A, 0.7)
    const [v2, [g2, s2]] = plain.gradient(A, 0.7)
    expect(Math.abs(v1 - v2)).toBeLessThan(1e-15 * Math.abs(v2))
    expect(maxScaledError(Array.from(g1 as Float64Array), Array.from(g2 as Float64Array))).toBeLessThan(1e-15)
    expect(Math.abs((s1 as number) - (s2 as number))).toBeLessThan(1e-14)
    const fd = finiteDifferences((a, s) => fast.value(a, s) as number, [A, 0.7])
    expect(maxScaledError([...Array.from(g1 as Float64Array), s1 as number], fd)).toBeLessThan(1e-6)
  })

  test('the MLP gradient with ftanh against finite differences', () => {
    const { params, body } = mlpObjective()
    const r = rng(9)
    const R2 = arrayType(arrayType())
    const args = [
      randomValue(R2, r, (d) => (d === 0 ? 4 : 3)),
      randomValue(arrayType(), r, () => 4),
      randomValue(R2, r, (d) => (d === 0 ? 2 : 4)),
      randomValue(arrayType(), r, () => 2),
      randomValue(R2, r, (d) => (d === 0 ? 3 : 3)),
      randomValue(R2, r, (d) => (d === 0 ? 3 : 2)),
    ]
    const c = compile(params, body)
    expect(c.source.gradient).toContain('ftanh(')
    const [, g] = c.gradient(...args)
    const fd = finiteDifferences((...w) => c.value(...w, args[4], args[5]) as number, args.slice(0, 4))
    expect(maxScaledError(flat(g.slice(0, 4)), fd)).toBeLessThan(1e-6)
  })
})
