import { describe, expect, it } from 'vitest'
import { sameBits, sameValues } from './conformance.js'

/** A float64 NaN with the given high word (sign, exponent and payload bits). */
function nan(high: number): number {
  const v = new DataView(new ArrayBuffer(8))
  v.setUint32(0, high)
  v.setUint32(4, 1)
  return v.getFloat64(0)
}

describe('sameValues: results across backends', () => {
  const a = Float64Array.of(1, nan(0x7ff80000), -0)
  const b = Float64Array.of(1, nan(0xfff80000), -0)
  it('takes any NaN as any other in float typed arrays, where sameBits does not', () => {
    expect(Number.isNaN(a[1]!) && Number.isNaN(b[1]!)).toBe(true)
    expect(sameBits(a, b)).toBe(false)
    expect(sameValues(a, b)).toBe(true)
    expect(sameValues([0, a, 2], [0, b, 2])).toBe(true)
    expect(sameValues(Float32Array.of(Number.NaN), Float32Array.of(-Number.NaN))).toBe(true)
  })
  it('still tells every other difference: the sign of zero, a number for a NaN, lengths, types', () => {
    expect(sameValues(Float64Array.of(0), Float64Array.of(-0))).toBe(false)
    expect(sameValues(Float64Array.of(Number.NaN), Float64Array.of(1))).toBe(false)
    expect(sameValues(Float64Array.of(1, 2), Float64Array.of(1))).toBe(false)
    expect(sameValues(Float64Array.of(1), Float32Array.of(1))).toBe(false)
    expect(sameValues(Int32Array.of(1, 2), Int32Array.of(1, 3))).toBe(false)
    expect(sameValues([1, -0], [1, 0])).toBe(false)
    expect(sameValues(Int32Array.of(1, 2), Int32Array.of(1, 2))).toBe(true)
  })
})
