import { cpuBackend } from '@tenet/backend-cpu'
import { createRegistry, InvertibilityError, parse, TenetStaticError } from '@tenet/ir'
import { compileModule, interpreterBackend, type TenetModule } from '@tenet/reversible'
import { describe, expect, it } from 'vitest'
import { fixedRound, logarithmicOps, registerNumbers } from './index.js'

const registry = registerNumbers(createRegistry()).registerBackend(cpuBackend).registerBackend(interpreterBackend)
const tn =
  (backend: string) =>
  (strings: TemplateStringsArray, ...values: unknown[]): TenetModule => {
    let text = strings[0]!
    for (let i = 0; i < values.length; i++) text += '${' + i + '}' + strings[i + 1]!
    return compileModule(parse({ text, name: 'test' }, values), { registry, backend })
  }
const L = logarithmicOps({ fractionBits: 42, rangeBits: 10 })
const rel = (a: number, b: number) => Math.abs(a - b) / Math.abs(b)

describe('ulog representation', () => {
  it('encodes sign and log-magnitude, order-preserving, zero as 0', () => {
    const xs = [-1e300, -5, -1, -1e-3, 0, 1e-200, 0.5, 1, 2, 3e100]
    const cs = xs.map(L.encode)
    for (let i = 1; i < cs.length; i++) expect(cs[i]!).toBeGreaterThan(cs[i - 1]!)
    for (const x of xs)
      expect(rel(L.decode(L.encode(x)) || 1e-300, x || 1e-300)).toBeLessThan(
        2e-13 * Math.max(1, Math.abs(Math.log(Math.abs(x) || 1))),
      )
    expect(L.encode(1)).toBe(1024)
    expect(L.log(L.encode(Math.E))).toBe(fixedRound(1, 42, 11))
    expect(
      () => L.mul(L.encode(1e300), L.encode(1e300)) && L.mul(L.mul(L.encode(1e300), L.encode(1e300)), L.encode(1e300)),
    ).toThrow(/outside the range/)
  })
})

for (const backend of ['cpu', 'interpreter']) {
  describe(`ulog (${backend})`, () => {
    const m = tn(backend)`
      // seed 000, Listing 16's idea: a power function by repeated *=
      fn power(y: ulog, x: ulog, n: i32) {
        for i in 0..n { y *= x }
      }
      fn sum(x: ulog, y: ulog, z: ulog) { x *= y + z }
      fn diff(x: ulog, y: ulog, z: ulog) { x *= y - z }
      fn rpow(x: ulog, y: ulog, r: f64) { x *= y ** r }
      fn mixed(x: ulog, a: f64) { x *= a; x /= 3.0 }
      fn lg(out: f64, x: ulog) { out += x.log }
      // exp(x) by its Taylor series: terms as logarithmic numbers, the sum in fixed point
      fn exp_taylor(y: fixed, x: ulog) {
        t: ulog <- 1.0
        k: i32 <- 0
        while (t.log >= -20.0, k > 0) {
          y += convert(t)
          k += 1
          t *= x / convert(k)
        }
        ~{
          while (t.log >= -20.0, k > 0) {
            k += 1
            t *= x / convert(k)
          }
        }
        k -> 0
        t -> 1.0
      }
    `

    it('power: x^n matches Math.pow within 1e-12 and the inverse restores y exactly', () => {
      for (const [x, n] of [
        [1.7, 5],
        [0.3, 8],
        [-2.5, 7],
        [-2.5, 6],
        [10, 8],
        [1.0000001, 3],
      ] as const) {
        const [y, xx] = m.power!(1, x, n) as number[]
        expect(rel(y!, Math.pow(x, n))).toBeLessThan(1e-12)
        const back = m.power!.inverse(y, xx, n) as number[]
        expect(back[0]).toBe(1)
        // bit-exact on the representation: forward then inverse of an already encoded value
        const [y2] = m.power!(back[0], xx, n) as number[]
        expect(y2).toBe(y)
      }
    })

    it('x *= y + z and x *= y - z (Gaussian logarithms) are exact bijections', () => {
      for (const [x, y, z] of [
        [2, 3, 4],
        [-1.5, 0.25, 7],
        [3, 5, -5 + 1e-9],
        [1, -2, 0.5],
        [4, 0, 3],
        [1e-5, 1e100, 1],
      ] as const) {
        const s = m.sum!(x, y, z) as number[]
        // each operand's log is rounded (≈1e-13 relative): the sum is exact up to that, so
        // cancellation (y ≈ −z) shows it relative to |y| + |z|
        expect(Math.abs(s[0]! - x * (y + z))).toBeLessThan(1e-12 * Math.abs(x) * (Math.abs(y) + Math.abs(z)))
        expect(m.sum!.inverse(...s)[0]).toBe(L.decode(L.encode(x)))
        const d = m.diff!(x, y, z) as number[]
        expect(Math.abs(d[0]! - x * (y - z))).toBeLessThan(1e-12 * Math.abs(x) * (Math.abs(y) + Math.abs(z)))
        expect(m.diff!.inverse(...d)[0]).toBe(L.decode(L.encode(x)))
      }
    })

    it('x *= y ** r, and *= by an f64 (converted)', () => {
      const [x] = m.rpow!(2, 3, 0.5) as number[]
      expect(rel(x!, 2 * Math.sqrt(3))).toBeLessThan(1e-12)
      expect(m.rpow!.inverse(x, 3, 0.5)[0]).toBe(L.decode(L.encode(2)))
      expect(() => m.rpow!(2, -3, 0.5)).toThrow(/non-integer power/)
      const [w] = m.mixed!(2, 6) as number[]
      expect(rel(w!, 4)).toBeLessThan(1e-12)
      expect(m.mixed!.inverse(w, 6)[0]).toBe(L.decode(L.encode(2)))
      expect(m.lg!(0, Math.E)[0]).toBeCloseTo(1, 12)
    })

    it('*= by zero is an InvertibilityError', () => {
      try {
        m.sum!(2, 3, -3)
        expect.unreachable()
      } catch (e) {
        expect(InvertibilityError.isInstance(e)).toBe(true)
        expect((e as InvertibilityError).code).toBe('runtime/ulog-zero-factor')
      }
    })

    it('exp Taylor series (while over ulog terms, sum in fixed point): exp(3.5) within 1e-10 relative', () => {
      for (const x of [3.5, 1, 0.25]) {
        const [y, xx] = m.exp_taylor!(0, x) as number[]
        // the omitted tail is below e^-20 ≈ 2e-9 in absolute terms (9.8e-10 for x = 3.5)
        if (x === 3.5) expect(rel(y!, Math.exp(x))).toBeLessThan(1e-10)
        expect(Math.abs(y! - Math.exp(x))).toBeLessThan(Math.exp(-20))
        expect(m.exp_taylor!.inverse(y, xx)[0]).toBe(0)
      }
    })

    it('arrays of ulog cross the host boundary as real values', () => {
      const a = tn(backend)`fn f(x: ulog[], y: ulog) { for i in 0..len(x) { x[i] *= y } }`
      const xs = new Float64Array([1, -2, 0.5, 0])
      a.f!(xs, 3)
      expect([...xs].map((v) => Math.round(v * 1e9) / 1e9)).toEqual([3, -6, 1.5, 0])
      a.f!.inverse(xs, 3)
      expect([...xs].map((v) => Math.round(v * 1e9) / 1e9)).toEqual([1, -2, 0.5, 0])
    })
  })
}

describe('host arrays at the call boundary', () => {
  for (const backend of ['cpu', 'interpreter']) {
    it(`${backend}: a value that cannot be converted on entry leaves no other array encoded`, () => {
      const f = tn(backend)`fn f(y: f64, x: ulog[], t: tropical[]) { y += f64(x[0]) }`.f!
      const x = new Float64Array([2, 3]),
        t = new Float64Array([1, 1e9])
      expect(() => f(0, x, t)).toThrow(/tropical|range|overflow/)
      // decoded again (to ulog's precision), not left as log-encoded values near 1024
      expect(x[0]).toBeCloseTo(2, 10)
      expect(x[1]).toBeCloseTo(3, 10)
      // a good call still works and decodes x again
      const [y] = f(0, x, new Float64Array([1, 2])) as number[]
      expect(y).toBeCloseTo(2, 10)
      expect(x[0]).toBeCloseTo(2, 10)
    })
  }
})

describe('ulog static errors', () => {
  it('+= says to use *=', () => {
    expect(() => tn('cpu')`fn f(x: ulog, y: ulog) { x += y }`).toThrow(TenetStaticError)
    expect(() => tn('cpu')`fn f(x: ulog, y: ulog) { x += y }`).toThrow(/use `\*=`/)
  })
  it('transcendental functions and % are rejected', () => {
    expect(() => tn('cpu')`fn f(x: ulog, y: ulog) { x *= sin(y) }`).toThrow(/floating-point/)
    expect(() => tn('cpu')`fn f(x: ulog, y: ulog) { x *= y % y }`).toThrow(/not defined on ulog/)
  })
  it('generic bijections that compute (INC, NEG, AddConst) are rejected; SWAP moves values', () => {
    expect(() => tn('cpu')`fn f(x: ulog) { INC(x) }`).toThrow(/`INC` is not defined on ulog/)
    expect(() => tn('cpu')`fn f(x: ulog) { NEG(x) }`).toThrow(/`NEG` is not defined on ulog/)
    expect(() => tn('cpu')`fn f(x: tropical, y: tropical) { AddConst(x, y) }`).toThrow(/not defined on tropical/)
    expect(() => tn('cpu')`fn f(x: ulog, y: ulog) { SWAP(x, y) }`).not.toThrow()
  })
})

describe('ulog fields', () => {
  it('x.log is read-only (a static error)', () => {
    expect(() => tn('cpu')`fn f(x: ulog) { x.log += 1.0 }`).toThrow(/read-only/)
  })
})
