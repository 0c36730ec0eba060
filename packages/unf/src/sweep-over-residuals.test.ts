/**
 * A map whose value only feeds a comparison (or only gives a length) has a zero cotangent, but
 * primal reuse may still have made it store its residuals (an array of tuples) for a sweep to
 * read: code generation reads such an array, typed as its representation (a tuple of arrays),
 * element by element. Values against the interpreter, gradients against finite differences.
 */
import { expect, test } from 'vitest'
import { compileText } from './compile.js'
import { evaluate, fromHost, toHost } from './evaluate.js'
import { finiteDifferences, flat, maxScaledError } from './test-util.js'

test('a sweep over the stored residuals of a map that only feeds a comparison', () => {
  const cp = compileText(
    '(x: R, y: R, A: R[], B: R[]) => if sum(map((e) => sum(scanl((a, q) => tanh(q * e), y, A)), B)) < x then x * y else y * sum(A)',
  )
  expect(cp.source.gradient).toContain('for (')
  for (const x of [0.3, 40]) {
    const args = [x, 0.2, Float64Array.of(1, -2, 0.5), Float64Array.of(3, 4)]
    const [value, grad] = cp.gradient(...args)
    const env = new Map(['x', 'y', 'A', 'B'].map((n, i) => [n, fromHost(args[i])] as const))
    const ref = toHost(evaluate(cp.stages.optimized, env, cp.ops)) as [number, unknown[]]
    expect(value).toBeCloseTo(ref[0], 12)
    expect(maxScaledError(flat(grad), flat(ref[1]))).toBeLessThan(1e-12)
    const fd = finiteDifferences((...a) => cp.value(...a) as number, args)
    expect(maxScaledError(flat(grad), fd)).toBeLessThan(1e-6)
  }
})
