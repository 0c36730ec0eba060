import { describe, expect, it } from 'vitest'
import { MATH_REFERENCE } from './index.js'
import { mathModule } from './standalone.js'
import { twoOverPiWords } from './two-over-pi.js'
import { ulps } from './ulps.js'

/** A small deterministic generator (xorshift) of doubles: uniform, log-uniform and raw bit patterns. */
function generator(seed: number) {
  let s = BigInt(seed) | 1n
  const next = () => {
    s ^= (s << 13n) & 0xffffffffffffffffn
    s ^= s >> 7n
    s ^= (s << 17n) & 0xffffffffffffffffn
    return s
  }
  const d = new DataView(new ArrayBuffer(8))
  const unit = () => Number(next() >> 11n) / 2 ** 53
  return {
    unit,
    uniform: (a: number, b: number) => a + (b - a) * unit(),
    /** ±2^e with e uniform in [lo, hi), the significand random. */
    log: (lo: number, hi: number) => (unit() < 0.5 ? -1 : 1) * (1 + unit()) * 2 ** Math.floor(lo + (hi - lo) * unit()),
    /** Any double (every exponent, subnormals, infinities and NaNs included). */
    bits: () => {
      d.setBigUint64(0, next())
      return d.getFloat64(0)
    },
  }
}

const SPECIAL = [
  0,
  -0,
  5e-324,
  -5e-324,
  2.2250738585072014e-308,
  -2.2250738585072014e-308,
  1e-310,
  -1e-310,
  Number.MAX_VALUE,
  -Number.MAX_VALUE,
  Infinity,
  -Infinity,
  NaN,
  1,
  -1,
  0.5,
  -0.5,
  2,
  -2,
  1 + 2 ** -52,
  1 - 2 ** -53,
  -1 - 2 ** -52,
  -1 + 2 ** -53,
  Math.PI,
  -Math.PI,
  Math.PI / 2,
  Math.PI / 4,
  (3 * Math.PI) / 4,
  Math.E,
  Math.LN2,
  22,
  -22,
  709.782712893384,
  709.79,
  -745.1332191019411,
  -745.14,
  710.4758600739439,
  710.476,
  (2 ** 19 * Math.PI) / 2,
  (2 ** 20 * Math.PI) / 2,
  2 ** 1023,
  2 ** -1022,
  2 ** -1074,
  2 ** 31,
  2 ** 53,
  2 ** 64,
  2 ** 66,
  1e22,
  1e300,
  // the double nearest a multiple of π/2 (|x mod π/2| ≈ 4.7e-19)
  6381956970095103 * 2 ** 797,
  -6381956970095103 * 2 ** 797,
]

/** The inputs for a function of one argument: ≥ 10⁵ in all, over the ranges that matter to it. */
function inputs1(name: string): number[] {
  const g = generator(name.length * 7919 + name.charCodeAt(0))
  const xs: number[] = [...SPECIAL]
  for (const v of SPECIAL) if (Number.isFinite(v) && v !== 0) xs.push(v * (1 + 2 ** -52), v * (1 - 2 ** -53))
  for (let k = 0; k < 20000; k++) xs.push(g.bits())
  for (let k = 0; k < 20000; k++) xs.push(g.log(-1074, 1024))
  const near =
    name === 'asin' || name === 'acos'
      ? 1
      : name === 'exp' || name === 'expm1' || name.endsWith('h')
        ? 720
        : name === 'log'
          ? 1e6
          : 20
  for (let k = 0; k < 40000; k++) xs.push(g.uniform(-near, near))
  for (let k = 0; k < 20000; k++) xs.push(g.log(-60, name === 'log' || name === 'atan' ? 60 : 12))
  // near multiples of π/2 for the trigonometric functions; near the breakpoints for the rest
  for (let k = 0; k < 2000; k++) {
    const n = Math.floor(g.uniform(-1e6, 1e6))
    const c = n * (Math.PI / 2)
    xs.push(c, c * (1 + 2 ** -52), c * (1 - 2 ** -52))
  }
  return xs
}

/** Pairs for atan2 and pow. */
function inputs2(name: string): Array<[number, number]> {
  const g = generator(name === 'pow' ? 4242 : 2424)
  const out: Array<[number, number]> = []
  const specials = [...SPECIAL, 3, -3, 0.25, 1e-300, -1e-300, 1074, -1074, 1075, 1023.5, 2 ** 52 + 1, 0.5 + 2 ** -53]
  for (const a of specials) for (const b of specials) out.push([a, b])
  for (let k = 0; k < 20000; k++) out.push([g.bits(), g.bits()])
  if (name === 'pow') {
    for (let k = 0; k < 30000; k++) out.push([g.uniform(0, 10), g.uniform(-30, 30)])
    for (let k = 0; k < 20000; k++) out.push([g.log(-1074, 1024), g.uniform(-4, 4)])
    for (let k = 0; k < 10000; k++) out.push([g.uniform(-10, 10), Math.round(g.uniform(-40, 40))])
    // results near overflow, underflow and subnormal
    for (let k = 0; k < 10000; k++) {
      const x = g.uniform(1.01, 100)
      out.push([x, g.uniform(-1080, 1030) / Math.log2(x)])
    }
    for (let k = 0; k < 10000; k++) out.push([1 + g.log(-60, -10), g.log(10, 62)])
  } else {
    for (let k = 0; k < 60000; k++) out.push([g.uniform(-10, 10), g.uniform(-10, 10)])
    for (let k = 0; k < 20000; k++) out.push([g.log(-1074, 1024), g.log(-1074, 1024)])
  }
  return out
}

const NAMES = Object.keys(MATH_REFERENCE)
const module = mathModule(NAMES)
const report = process.env.TENET_MATH_REPORT === '1'

describe('in-module math routines agree with Math.* within 1 ulp', () => {
  for (const name of NAMES) {
    it(`${name}`, () => {
      const fn = module[name]!,
        ref = MATH_REFERENCE[name]!
      const pairs: Array<[number, number]> = ref.length === 2 ? inputs2(name) : inputs1(name).map((x) => [x, 0])
      expect(pairs.length).toBeGreaterThanOrEqual(100000)
      let max = 0,
        differ = 0,
        worst: [number, number] = [0, 0]
      for (const [a, b] of pairs) {
        const got = fn(a, b),
          want = ref(a, b)
        const u = ulps(got, want)
        if (u > 0) {
          differ++
          if (u > max) {
            max = u
            worst = [a, b]
          }
        }
      }
      if (report)
        console.log(
          `${name}: ${pairs.length} inputs, ${differ} differ, max ${max} ulp${max ? ` at (${worst.join(', ')})` : ''}`,
        )
      expect(max, `${name}(${worst.join(', ')})`).toBeLessThanOrEqual(1)
    })
  }

  it('computes sin and cos in one (__sincos) as sin and cos do', () => {
    const m = mathModule(['__sincos', 'sin', 'cos']) as unknown as Record<string, (x: number) => number[]>
    const xs = inputs1('sincos').slice(0, 30000)
    for (const x of xs) {
      const [s, c] = m.__sincos!(x) as [number, number]
      expect(Object.is(s, (m.sin as unknown as (x: number) => number)(x)) || Number.isNaN(s), `sin ${x}`).toBe(true)
      expect(Object.is(c, (m.cos as unknown as (x: number) => number)(x)) || Number.isNaN(c), `cos ${x}`).toBe(true)
    }
  })

  it('keeps the signs of zero and infinities where Math.* does (0 ulp at the special values)', () => {
    for (const name of NAMES) {
      const fn = module[name]!,
        ref = MATH_REFERENCE[name]!
      for (const a of SPECIAL) {
        for (const b of ref.length === 2 ? SPECIAL : [0]) {
          const got = fn(a, b),
            want = ref(a, b)
          if (!Number.isFinite(want) || want === 0)
            expect(
              Object.is(got, want) || (Number.isNaN(got) && Number.isNaN(want)),
              `${name}(${a}, ${b}) = ${got}, Math: ${want}`,
            ).toBe(true)
        }
      }
    }
  })
})

describe('tables', () => {
  it('computes the known leading words of 2/π and high words of n·π/2', () => {
    // 2/π = 0.A2F9836E 4E441529 FC2757D1 F534DDC0 DB629599 … (hexadecimal)
    expect(twoOverPiWords().slice(0, 5)).toEqual([0xa2f9836e, 0x4e441529, 0xfc2757d1, 0xf534ddc0, 0xdb629599])
    // the reduction takes the high words of the doubles nearest n·π/2 from n times the double π/2
    const hiWord = (x: number) => {
      const d = new DataView(new ArrayBuffer(8))
      d.setFloat64(0, x)
      return d.getUint32(0)
    }
    expect([1, 2, 3, 4, 5, 6].map((n) => hiWord(n * (Math.PI / 2)))).toEqual([
      0x3ff921fb, 0x400921fb, 0x4012d97c, 0x401921fb, 0x401f6a7a, 0x4022d97c,
    ])
  })
  it('computes ulps', () => {
    expect(ulps(1, 1 + 2 ** -52)).toBe(1)
    expect(ulps(0, -0)).toBe(1)
    expect(ulps(5e-324, -5e-324)).toBe(3)
    expect(ulps(NaN, NaN)).toBe(0)
    expect(ulps(NaN, 1)).toBe(Infinity)
  })
})
