import { describe, expect, test } from 'vitest'
import { compile } from './compile.js'
import { gmmObjective, mlpObjective } from './models.js'
import { dot, logsumexp, prod, sum, v } from './term.js'
import { finiteDifferences, flat, maxScaledError, randomValue, rng } from './test-util.js'
import { arrayType } from './types.js'

const R1 = arrayType()

function check(
  params: Parameters<typeof compile>[0],
  body: Parameters<typeof compile>[1],
  args: unknown[],
  tol = 1e-6,
) {
  const c = compile(params, body)
  const [value, grad] = c.gradient(...args)
  expect(value).toBeCloseTo(c.value(...args) as number, 10)
  const fd = finiteDifferences((...a) => c.value(...a) as number, args)
  expect(maxScaledError(flat(grad), fd)).toBeLessThan(tol)
  return c
}

describe("gradients of the paper's examples and the models match finite differences", () => {
  const r = rng(1)
  const A = () => Float64Array.from({ length: 7 }, () => r() * 2 - 1)
  test('sum, dot, logsumexp', () => {
    check([['A', R1]], sum(v('A')), [A()])
    check(
      [
        ['A', R1],
        ['B', R1],
      ],
      dot(v('A'), v('B')),
      [A(), A()],
    )
    check([['A', R1]], logsumexp(v('A')), [A()])
  })
  test('prod, with zeros in A (no division: scans of products)', () => {
    check([['A', R1]], prod(v('A')), [Float64Array.of(0.5, 0, 2, -1.5, 0.7)])
    const c = check([['A', R1]], prod(v('A')), [Float64Array.of(0, 3, 0, 2)])
    expect(Array.from(c.gradient(Float64Array.of(0, 3, 0, 2))[1][0] as Float64Array)).toEqual([0, 0, 0, 0])
    expect(Array.from(c.gradient(Float64Array.of(2, 3, 0, 5))[1][0] as Float64Array)).toEqual([0, 0, 30, 0])
  })
  test('GMM log-likelihood (ADBench objective, functional form)', () => {
    const { params, body } = gmmObjective()
    const d = 3,
      k = 2,
      n = 4
    const lower = Array.from({ length: k }, () =>
      Array.from({ length: d }, (_, row) => Float64Array.from({ length: d }, (_, col) => (col < row ? r() - 0.5 : 0))),
    )
    const args = [
      A().subarray(0, k).slice(),
      Array.from({ length: k }, () => randomValue(R1, r, () => d)),
      Array.from({ length: k }, () => randomValue(R1, r, () => d)),
      lower,
      Array.from({ length: n }, () => randomValue(R1, r, () => d)),
      1.3,
      2,
      n,
      0.25,
    ]
    const all = check(params, body, args, 1e-5)
    // wrt: only the model parameters (the data's cotangents are not computed)
    const some = compile(params, body, { wrt: ['alphas', 'means', 'logdiag', 'lower'] })
    const [va, ga] = all.gradient(...args),
      [vs, gs] = some.gradient(...args)
    expect(vs).toBe(va)
    // the same cotangents; the additions into an accumulator may be grouped differently when
    // fewer cotangents are computed (destination passing depends on what reads a sweep's parts)
    const fa = flat(ga.slice(0, 4)),
      fs = flat(gs.slice(0, 4))
    expect(fs.length).toBe(fa.length)
    fs.forEach((x, i) => expect(Math.abs(x - fa[i]!)).toBeLessThanOrEqual(1e-12 * Math.max(1, Math.abs(fa[i]!))))
    expect(gs.slice(4)).toEqual([[], [], [], [], []])
    expect(some.source.gradient.length).toBeLessThan(all.source.gradient.length)
    expect(() => compile(params, body, { wrt: ['nope'] })).toThrow(/not a parameter/)
  })
  test('two-layer perceptron', () => {
    const { params, body } = mlpObjective()
    const D = 4,
      H = 3,
      O = 2,
      N = 3
    const mat = (rows: number, cols: number) => Array.from({ length: rows }, () => randomValue(R1, r, () => cols))
    const c = check(
      params,
      body,
      [mat(H, D), randomValue(R1, r, () => H), mat(O, H), randomValue(R1, r, () => O), mat(N, D), mat(N, O)],
      1e-5,
    )
    expect(c.source.gradient).toContain('bufs[') // intermediate arrays are reused across calls
    // a second call with other arguments (reused buffers) matches a fresh compilation
    const args2 = [
      mat(H, D),
      randomValue(R1, r, () => H),
      mat(O, H),
      randomValue(R1, r, () => O),
      mat(N + 2, D),
      mat(N + 2, O),
    ]
    const first = c.gradient(...args2)
    expect(flat(c.gradient(...args2))).toEqual(flat(first))
    expect(flat(first)).toEqual(flat(compile(params, body).gradient(...args2)))
  })
})
