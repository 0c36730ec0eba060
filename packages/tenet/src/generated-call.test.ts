/**
 * The public call generated per parameter list (`fast-call.ts` of @tenet/reversible) with the
 * number systems of the umbrella's registry: scalar conversions in the general wrapper's order,
 * an encoded scalar given back as passed where its representation did not change, and arrays
 * converted in place left to the general wrapper.
 */
import { describe, expect, it } from 'vitest'
import { TenetError, rev } from './index.js'

const code = (f: () => unknown): string => {
  try {
    f()
    return 'ok'
  } catch (e) {
    return TenetError.isInstance(e) ? (e as TenetError).code : String(e)
  }
}

describe('the generated call with converted scalars', () => {
  for (const checks of [false, true]) {
    it(`a fixed scalar out of range fails before a later argument's check, as in the general wrapper (checks ${checks ? 'on' : 'off'})`, () => {
      const m = rev.with({ checks })`fn f(y: fixed, x: f64[]) { y += x[0] }`
      expect(m.f!.length).toBe(2)
      expect(code(() => m.f!(1e300, 'nope'))).toBe('runtime/fixed-overflow')
      expect(code(() => m.f!(1, 'nope'))).toBe('call/type')
      expect(m.f!(1.5, Float64Array.of(2))).toEqual([3.5, Float64Array.of(2)])
    })

    it(`an unchanged ulog scalar comes back as passed, a changed one decoded (checks ${checks ? 'on' : 'off'})`, () => {
      const m = rev.with({ checks })`fn u(y: ulog, z: ulog) { y *= z }`
      expect(m.u!.length).toBe(2)
      const [y, z] = m.u!(2, 0.1) as [number, number]
      expect(z).toBe(0.1)
      expect(y).toBeCloseTo(0.2, 12)
      expect(m.u!.inverse(y, z)[0]).toBeCloseTo(2, 12)
    })
  }

  it('arrays converted in place (ulog, fixed) keep the general wrapper', () => {
    const m = rev.with({ checks: false })`
      fn g(y: ulog, a: ulog[]) { y *= a[0] }
      fn h(y: f64, a: fixed[]) { y += f64(a[0]) }`
    expect([m.g!.length, m.h!.length]).toEqual([0, 0])
    const a = Float64Array.of(0.1)
    expect(m.g!(2, a)[1]).toBe(a)
    expect(a[0]).toBe(0.1)
  })
})

describe('the call of a function with complex parameters (lowered to f64 parts)', () => {
  const m = rev.with({ checks: false })`
    fn f(y: complex, x: complex, s: f64) { y += x * complex(s, 0.0) }
    fn g(y: complex[], x: complex) { y[0] += x }`
  it('gives the new values, takes real numbers for complex ones, and runs backwards', () => {
    expect(m.f!({ re: 1, im: 2 }, { re: 3, im: 4 }, 2)).toEqual([{ re: 7, im: 10 }, { re: 3, im: 4 }, 2])
    expect(m.f!(1, 3, 2)).toEqual([{ re: 7, im: 0 }, { re: 3, im: 0 }, 2])
    expect(m.f!.inverse({ re: 7, im: 10 }, { re: 3, im: 4 }, 2)).toEqual([{ re: 1, im: 2 }, { re: 3, im: 4 }, 2])
    const y = Float64Array.of(1, 1)
    expect(m.g!(y, { re: 2, im: 3 })[0]).toBe(y)
    expect([...y]).toEqual([3, 4])
  })
  it('names the argument in its errors, call after call', () => {
    for (let r = 0; r < 3; r++) {
      expect(code(() => m.f!({ re: 1 }, 0, 1))).toBe('call/type')
      expect(code(() => m.f!(0, 0))).toBe('call/arity')
    }
    let message = ''
    try {
      m.f!(0, { re: 'a', im: 0 }, 1)
    } catch (e) {
      message = (e as Error).message
    }
    expect(message).toMatch(/^argument 2 \(`x: complex`\) of `f` must be \{ re: number, im: number \}/)
    expect(code(() => m.g!(Float64Array.of(1), 0))).toBe('call/type')
  })

  it('names a real argument after complex ones by its position as written, in the order written (review 20b)', () => {
    const r = rev.with({ checks: true })`
      fn mix(a: f64, z: complex, b: f64[], w: complex[], n: i32) { a += z.re; b[n] += w[0].im }`
    const message = (f: () => unknown): string => {
      try {
        f()
      } catch (e) {
        return (e as Error).message
      }
      return 'ok'
    }
    expect(message(() => m.f!(0, 0, 'x'))).toMatch(/^argument 3 \(`s: f64`\) of `f` must be a number/)
    expect(message(() => r.mix!(1, 0, [1], Float64Array.of(1, 2), 0))).toMatch(/^argument 3 \(`b: f64\[\]`\) of `mix`/)
    expect(message(() => r.mix!(1, 0, Float64Array.of(1), Float64Array.of(1, 2), 'n'))).toMatch(
      /^argument 5 \(`n: i32`\) of `mix`/,
    )
    // the first bad argument as written, real or complex
    expect(message(() => r.mix!('a', 'z', 0, 0, 0))).toMatch(/^argument 1 \(`a: f64`\)/)
    expect(message(() => r.mix!(1, 'z', 0, 0, 0))).toMatch(/^argument 2 \(`z: complex`\)/)
    expect(r.mix!(1, { re: 2, im: 0 }, Float64Array.of(1), Float64Array.of(3, 4), 0)[2]).toEqual(Float64Array.of(5))
  })
})
