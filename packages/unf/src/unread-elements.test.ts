/**
 * An array a loop keeps only for its length (a parameter whose element the body never reads,
 * kept so that its length is checked) has no element load in the loop: a load from a JS array
 * keeps its bounds and map checks even when its value is dead (the GMM gradient had nine such
 * loads per point and component). The length check stays.
 */
import { expect, test } from 'vitest'
import { compileText } from './compile.js'
import { finiteDifferences, flat, maxScaledError } from './test-util.js'

test('an array read only for its length: no element load, the length still checked', () => {
  const cp = compileText('(A: R[], B: R[], s: R) => sum(map2((a, b) => a * a * s, A, B))')
  for (const src of [cp.source.value, cp.source.gradient]) {
    expect(src).not.toMatch(/p1\[/)
    expect(src).toMatch(/p1\.length/)
  }
  const args = [Float64Array.of(0.5, -1, 2), Float64Array.of(9, 9, 9), 1.5]
  expect(cp.value(...args)).toBeCloseTo(7.875, 14)
  const [, grad] = cp.gradient(...args)
  expect(Array.from(grad[1] as Float64Array)).toEqual([0, 0, 0])
  expect(
    maxScaledError(
      flat(grad),
      finiteDifferences((...a) => cp.value(...a) as number, args),
    ),
  ).toBeLessThan(1e-7)
  expect(() => cp.value(Float64Array.of(1, 2), Float64Array.of(1), 1)).toThrow(
    expect.objectContaining({ code: 'unf/shape' }),
  )
  expect(() => cp.gradient(Float64Array.of(1, 2), Float64Array.of(1), 1)).toThrow(
    expect.objectContaining({ code: 'unf/shape' }),
  )
})

test('a sweep over user arrays it reads partly (the GMM gradient’s form): loads only of what is read', () => {
  const cp = compileText(
    '(X: R[][], M: R[][], W: R[]) => sum(map((x) => logsumexp(map2((m, w) => w - sum(map2((a, b) => square(a - b), x, m)), M, W)), X))',
  )
  // per data point and component, the transpose reads M's row and the stored residuals; W only
  // gives a length there (its cotangent is the sweep's sum)
  const X = [Float64Array.of(0.1, 0.5), Float64Array.of(-0.3, 0.2), Float64Array.of(1, -1)]
  const M = [Float64Array.of(0.3, 0.1), Float64Array.of(-0.5, 0.6)]
  const W = Float64Array.of(0.2, -0.1)
  const [, grad] = cp.gradient(X, M, W)
  const fd = finiteDifferences((...a) => cp.value(...a) as number, [X, M, W])
  expect(maxScaledError(flat(grad), fd)).toBeLessThan(1e-7)
})
