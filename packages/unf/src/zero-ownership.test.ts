/**
 * A sweep whose sum starts from a zero array of arrays accumulates into that zero in place (it is
 * allocated row by row where the zero is, so no one else holds it): no deep copy per call.
 */
import { describe, expect, test } from 'vitest'
import { compileText } from './compile.js'
import { finiteDifferences, flat, maxScaledError, rng } from './test-util.js'

describe('zero arrays of arrays are owned accumulators', () => {
  test('the cotangent of a matrix read by rows is accumulated into its zero, not into a copy; repeated calls agree with finite differences', () => {
    const c = compileText('(X: R[][], M: R[][]) => sum(map((x) => sum(map((row) => square(dot(row, x)), M)), X))')
    const src = c.source.gradient
    const zero = /const (t\d+) = p1\.map\(\(q\) => new Float64Array\(q\.length\)\);/.exec(src)
    expect(zero).not.toBeNull()
    expect(src).not.toContain(`${zero![1]}.map((q) => Float64Array.from(q))`)
    const r = rng(2)
    const X = Array.from({ length: 3 }, () => Float64Array.from({ length: 4 }, () => r() - 0.5))
    const M = Array.from({ length: 2 }, () => Float64Array.from({ length: 4 }, () => r() - 0.5))
    const fd = finiteDifferences((...a: unknown[]) => c.value(...a) as number, [X, M])
    const first = flat(c.gradient(X, M)[1])
    expect(maxScaledError(first, fd)).toBeLessThan(1e-6)
    // a second call starts from a new zero (nothing accumulated by the first call leaks in)
    expect(flat(c.gradient(X, M)[1])).toEqual(first)
  })
})
