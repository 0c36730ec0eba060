/**
 * `fastExp` against a 200-bit reference (fixed-point BigInt arithmetic: ln 2 by its series,
 * exp by Taylor's), in ulps of the result, and against `Math.exp` on many more points.
 */
import { describe, expect, test } from 'vitest'
import { compile } from './compile.js'
import { fastExp } from './fast-exp.js'
import { logsumexp, op, v } from './term.js'
import { finiteDifferences, maxScaledError, rng } from './test-util.js'
import { arrayType, R } from './types.js'

const S = 200n
const ONE = 1n << S

/** ln 2 = Σ_{k≥1} 1/(k·2^k), to S fractional bits (and a few guard bits, dropped). */
const LN2 = (() => {
  const g = 16n
  let sum = 0n
  for (let k = 1n; k < S + g + 8n; k++) sum += (1n << (S + g)) / (k << k)
  return sum >> g
})()

/** The exact value of a double in fixed point with S fractional bits (|x| ≥ 2⁻¹⁴⁰, no rounding). */
function fixed(x: number): bigint {
  const f = new Float64Array([x])
  const bits = new BigUint64Array(f.buffer)[0]!
  const exponent = Number((bits >> 52n) & 0x7ffn)
  const mantissa = (bits & ((1n << 52n) - 1n)) | (exponent === 0 ? 0n : 1n << 52n)
  const e = BigInt(Math.max(exponent, 1) - 1075) + S
  const m = e >= 0n ? mantissa << e : mantissa >> -e
  return x < 0 ? -m : m
}

/** exp(x) = 2^k · e^r with e^r in fixed point (S bits), k an integer. */
function referenceExp(x: number): { k: number; er: bigint } {
  const X = fixed(x)
  const kq = (X + LN2 / 2n) / LN2 - (X < -LN2 / 2n ? 1n : 0n)
  const r = X - kq * LN2
  let term = ONE
  let sum = ONE
  for (let i = 1n; term !== 0n; i++) {
    term = (term * r) / (i << S)
    sum += term
  }
  return { k: Number(kq), er: sum }
}

/** The error of `y` as an approximation of exp(x), in ulps of y (normal results only). */
function ulpError(x: number, y: number): number {
  const { k, er } = referenceExp(x)
  const scaled = y * 2 ** -k // exact: a power of two, y normal
  const ulp = 2 ** (Math.floor(Math.log2(scaled)) - 52)
  return Number(fixed(scaled) - er) / Number(ONE) / ulp
}

describe('fastExp', () => {
  test('the reference is exact enough: exp(1), exp(ln 2 · 10)', () => {
    expect(ulpError(1, Math.E)).toBeLessThan(0.5)
    expect(Math.abs(ulpError(Math.LN2 * 10, 1024))).toBeLessThan(1)
  })

  test('within 0.52 ulp of the correctly rounded result on 20,000 points', () => {
    const next = rng(11)
    let worst = 0
    let worstMath = 0
    const points: number[] = []
    for (let i = 0; i < 8000; i++) points.push((next() * 2 - 1) * 708)
    for (let i = 0; i < 8000; i++) points.push(-40 * next()) // the range of logsumexp's exp(x − max)
    for (let i = 0; i < 4000; i++) points.push((next() * 2 - 1) * 2 ** (-60 * next()))
    for (const x of points) {
      worst = Math.max(worst, Math.abs(ulpError(x, fastExp(x))))
      worstMath = Math.max(worstMath, Math.abs(ulpError(x, Math.exp(x))))
    }
    expect(worst).toBeLessThan(0.52)
    // (Math.exp is within one ulp; printed for the README)
    console.log(`fastExp: max ${worst.toFixed(4)} ulp; Math.exp: max ${worstMath.toFixed(4)} ulp`)
  })

  test('within one ulp of Math.exp on 10⁶ points, equal at the table points', () => {
    const next = rng(5)
    const f = new Float64Array(2)
    const bits = new BigInt64Array(f.buffer)
    let worst = 0n
    for (let i = 0; i < 1_000_000; i++) {
      const x = (next() * 2 - 1) * 708
      f[0] = fastExp(x)
      f[1] = Math.exp(x)
      const d = bits[0]! - bits[1]!
      if ((d < 0n ? -d : d) > worst) worst = d < 0n ? -d : d
    }
    expect(worst).toBeLessThanOrEqual(1n)
    for (const x of [0, 1, -1, Math.LN2, -Math.LN2, 0.5, 700, -700]) {
      expect(Math.abs(ulpError(x, fastExp(x)))).toBeLessThan(0.52)
    }
    expect(fastExp(0)).toBe(1)
  })

  test('special and extreme arguments', () => {
    expect(fastExp(Number.NaN)).toBeNaN()
    expect(fastExp(Infinity)).toBe(Infinity)
    expect(fastExp(-Infinity)).toBe(0)
    expect(fastExp(710)).toBe(Infinity)
    expect(fastExp(-746)).toBe(0)
    expect(fastExp(-740)).toBe(Math.exp(-740)) // subnormal: Math.exp's
    expect(fastExp(-0)).toBe(1)
    expect(fastExp(5e-324)).toBe(1)
  })
})

describe('fastExp in generated code', () => {
  test('the built-in exp is `fexp` by default, `Math.exp` with fastExp: false; same values to an ulp', () => {
    const A = Float64Array.from({ length: 37 }, (_, i) => Math.sin(i) * 30)
    const fast = compile([['A', arrayType()]], logsumexp(v('A')))
    const plain = compile([['A', arrayType()]], logsumexp(v('A')), { fastExp: false })
    expect(fast.source.gradient).toContain('fexp(')
    expect(fast.source.value).toContain('fexp(')
    expect(fast.source.gradient).not.toContain('Math.exp')
    expect(plain.source.gradient).toContain('Math.exp(')
    expect(plain.source.gradient).not.toContain('fexp(')
    const [v1, [g1]] = fast.gradient(A)
    const [v2, [g2]] = plain.gradient(A)
    expect(Math.abs(v1 - v2)).toBeLessThan(4e-16 * Math.abs(v2))
    expect(maxScaledError(Array.from(g1 as Float64Array), Array.from(g2 as Float64Array))).toBeLessThan(1e-15)
    expect(
      maxScaledError(
        Array.from(g1 as Float64Array),
        finiteDifferences((a) => fast.value(a) as number, [A]),
      ),
    ).toBeLessThan(1e-6)
  })

  test('a scalar program: exp(sin x) and its derivative through fexp', () => {
    const c = compile([['x', R]], op('exp', op('sin', v('x'))))
    expect(c.source.gradient).toContain('fexp(')
    expect(c.gradient(0.3)[1][0]).toBeCloseTo(Math.exp(Math.sin(0.3)) * Math.cos(0.3), 14)
  })
})
