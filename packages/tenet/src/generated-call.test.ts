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
