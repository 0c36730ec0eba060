import { describe, expect, it } from 'vitest'
import { checkGradient, finiteDifference, finiteDifferenceOfCall, relativeError } from './index.js'

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

describe('finiteDifferenceOfCall', () => {
  // results as a Tenet function returns them: y += a·Σx², x unchanged, n an integer held constant
  const f = (y: number, a: number, x: Float64Array, n: number) => [
    y + a * x.reduce((s, v) => s + v * v, 0) * n,
    a,
    x,
    n,
  ]
  it('perturbs numbers and float-array elements, holds skipped arguments, leaves the inputs alone', () => {
    const x = Float64Array.of(0.5, -1.5)
    const d = finiteDifferenceOfCall(f, [0, 2, x, 3], { loss: 0, skip: [3] })
    expect(d[0]).toBeCloseTo(1, 8)
    expect(d[1]).toBeCloseTo(3 * 2.5, 7)
    expect(d[2]![0 as never]).toBeCloseTo(2 * 2 * 0.5 * 3, 7)
    expect(d[2]![1 as never]).toBeCloseTo(2 * 2 * -1.5 * 3, 7)
    expect(d[3]).toBeNull()
    expect(Array.from(x)).toEqual([0.5, -1.5])
  })
  it('reads `f.results` when the call returns nothing (a compiled core function)', () => {
    const core = Object.assign(
      (y: number, a: number) => {
        core.results[0] = y + Math.sin(a)
      },
      { results: new Float64Array(2) },
    )
    expect(finiteDifferenceOfCall(core, [0, 0.3], { loss: 0 })[1]).toBeCloseTo(Math.cos(0.3), 8)
  })
})
