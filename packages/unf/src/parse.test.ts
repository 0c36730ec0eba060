import { describe, expect, test } from 'vitest'
import { compile, compileText } from './compile.js'
import { mlpObjective } from './models.js'
import { parseProgram } from './parse.js'
import { finiteDifferences, flat, maxScaledError } from './test-util.js'

describe('the text syntax', () => {
  test('dot, prod and logsumexp are one line each', () => {
    const A = Float64Array.of(0.5, -1, 2),
      B = Float64Array.of(3, 0.25, -2)
    expect(compileText('(A: R[], B: R[]) => sum(map2((a, b) => a * b, A, B))').gradient(A, B)).toEqual([-2.75, [B, A]])
    expect(compileText('(A: R[]) => reduce((p, a) => p * a, 1, A)').gradient(A)[1][0]).toEqual(
      Float64Array.of(-2, 1, -0.5),
    )
    const lse = compileText(
      '(A: R[]) => let m = fold((m, a) => if a > m then a else m, -1e308, A) in m + log(sum(map(a => exp(a - m), A)))',
    )
    const [v, [g]] = lse.gradient(A)
    const s = Math.exp(0.5) + Math.exp(-1) + Math.exp(2)
    expect(v).toBeCloseTo(Math.log(s), 14)
    expect(
      maxScaledError(
        flat(g),
        [0.5, -1, 2].map((a) => Math.exp(a) / s),
      ),
    ).toBeLessThan(1e-14)
  })
  test('a two-layer MLP in text equals the builder version', () => {
    const text = `(w1: R[][], b1: R[], w2: R[][], b2: R[], xs: R[][], ys: R[][]) =>
      sum(map2((x, y) =>
        let h = map2((row, b) => tanh(dot(row, x) + b), w1, b1) in
        sum(map((o, b, t) => square(o + b - t), map(row => dot(row, h), w2), b2, y)), xs, ys))`
    const args = [
      [Float64Array.of(0.1, -0.2), Float64Array.of(0.3, 0.4), Float64Array.of(-0.5, 0.6)],
      Float64Array.of(0.1, 0.2, 0.3),
      [Float64Array.of(0.7, -0.1, 0.2)],
      Float64Array.of(0.05),
      [Float64Array.of(1, 2), Float64Array.of(-1, 0.5)],
      [Float64Array.of(0.3), Float64Array.of(-0.2)],
    ]
    const fromText = compileText(text)
    const { params, body } = mlpObjective()
    const fromBuilder = compile(params, body)
    expect(fromText.value(...args)).toBeCloseTo(fromBuilder.value(...args) as number, 14)
    expect(maxScaledError(flat(fromText.gradient(...args)[1]), flat(fromBuilder.gradient(...args)[1]))).toBeLessThan(
      1e-13,
    )
    expect(
      maxScaledError(
        flat(fromText.gradient(...args)[1]),
        finiteDifferences((...a) => fromText.value(...a) as number, args),
      ),
    ).toBeLessThan(1e-6)
  })
  test('tuples, projections, booleans', () => {
    const c = compileText(
      '(x: R, y: R) => let p = (x * y, x + y) in if p.1 > 0 and not (y < 0) then p.1 * p.2 else p.2',
    )
    expect(c.gradient(2, 3)).toEqual([30, [3 * 5 + 6, 2 * 5 + 6]])
  })
  test('syntax errors name the line and column', () => {
    expect(() => parseProgram('(x: R) => x +')).toThrow(/expected a name, found `end of input`.*1:14/s)
    expect(() => parseProgram('(x: Q) => x')).toThrow(/unknown type `Q`/)
    expect(() => parseProgram('(A: R[]) =>\n  map(A, A)')).toThrow(/function of 1 parameter.*2:3/s)
    try {
      parseProgram('(x: R) => x $ 1')
    } catch (e) {
      expect((e as { code: string }).code).toBe('unf/syntax')
    }
  })
})
