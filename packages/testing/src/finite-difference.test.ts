import { describe, expect, it } from 'vitest'
import { checkGradient, finiteDifference, relativeError } from './index.js'

describe('finiteDifference', () => {
  it('gives the gradient of a scalar function', () => {
    const f = (x: number[]) => x[0]! * x[0]! * x[1]! + Math.sin(x[1]!)
    const g = finiteDifference(f, [3, 0.5])
    expect(g).toHaveLength(2)
    expect(g[0]).toBeCloseTo(2 * 3 * 0.5, 8)
    expect(g[1]).toBeCloseTo(9 + Math.cos(0.5), 8)
  })

  it('gives the Jacobian (rows of outputs) of a vector function', () => {
    const f = (x: number[]) => [x[0]! * x[1]!, Math.exp(x[0]!), x[1]!]
    const j = finiteDifference(f, [1, 2])
    expect(j).toHaveLength(3)
    const want = [
      [2, 1],
      [Math.E, 0],
      [0, 1],
    ]
    j.forEach((row, k) => row.forEach((v, i) => expect(v).toBeCloseTo(want[k]![i]!, 7)))
  })

  it('scales the step with large inputs and accepts typed arrays', () => {
    const g = finiteDifference((x) => x[0]! ** 2, new Float64Array([1e8]))
    expect(relativeError(g[0]!, 2e8)).toBeLessThan(1e-6)
  })

  it('rejects a non-positive step', () => {
    expect(() => finiteDifference((x) => x[0]!, [1], 0)).toThrow(RangeError)
  })
})

describe('checkGradient', () => {
  const f = (x: number[]) => x[0]! * x[1]!
  it('accepts a correct gradient', () => {
    const r = checkGradient(f, [2, 1], [1, 2])
    expect(r.ok).toBe(true)
    expect(r.maxError).toBeLessThan(1e-8)
  })
  it('rejects a wrong gradient and says where', () => {
    const r = checkGradient(f, [2, 1.5], [1, 2])
    expect(r.ok).toBe(false)
    expect(r.worst).toEqual([1])
    expect(r.maxError).toBeCloseTo(0.5 / 1.5, 6)
  })
  it('checks Jacobians entry by entry', () => {
    const v = (x: number[]) => [x[0]! + x[1]!, x[0]! * 3]
    expect(
      checkGradient(
        v,
        [
          [1, 1],
          [3, 0],
        ],
        [0.3, 0.7],
      ).ok,
    ).toBe(true)
    const bad = checkGradient(
      v,
      [
        [1, 1],
        [3, 1],
      ],
      [0.3, 0.7],
    )
    expect(bad.ok).toBe(false)
    expect(bad.worst).toEqual([1, 1])
  })
  it('treats NaN against a number as a failure', () => {
    expect(checkGradient(f, [Number.NaN, 1], [1, 2]).ok).toBe(false)
  })
})
