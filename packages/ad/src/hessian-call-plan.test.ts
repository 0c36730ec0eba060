/**
 * The per-function call plan of `hessian` (the adjoint, the default width and per loss argument the
 * default `wrt` and the drivers by width, looked up once per function instead of per call): results
 * stay right when a call changes the loss, `wrt`, the width or the function, and bad input still
 * throws an `ad/argument` error after the plan exists. Checked against the analytic Hessian and
 * against central differences of the exact gradient.
 */
import { describe, expect, it } from 'vitest'
import { finiteDifference } from '@tenet/testing'
import { gradient, hessian } from './index.js'
import { expectClose, tag } from './test-util.js'

// two float scalar losses over the same array: ∂²a/∂x_i² = 2cos x_i − x_i sin x_i, ∂²c/∂x_i² = 6 x_i
const source = `
fn g(a: f64, c: f64, x: f64[]) {
  for i in 0..len(x) {
    a += sin(x[i]) * x[i]
    c += x[i] * x[i] * x[i]
  }
}`

/** The n×n diagonal matrix with diagonal d (row-major). */
function diagonal(d: number[]): Float64Array {
  const n = d.length
  const H = new Float64Array(n * n)
  d.forEach((v, i) => {
    H[i * n + i] = v
  })
  return H
}

/** Central differences over x of the exact gradient of loss `loss` with respect to x. */
function fdOverX(f: Parameters<typeof hessian>[0], args: unknown[], loss: number): Float64Array {
  const x = args[2] as Float64Array
  const J = finiteDifference(
    (v) => Array.from(gradient(f, [args[0], args[1], Float64Array.from(v)], { loss })[2] as Float64Array),
    Array.from(x),
    1e-5,
  )
  const n = x.length
  const H = new Float64Array(n * n)
  for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) H[i * n + j] = J[i]![j]!
  return H
}

/** The `code` of the error `run` throws (undefined when it does not throw). */
function code(run: () => unknown): string | undefined {
  try {
    run()
  } catch (e) {
    return (e as { code?: string }).code ?? 'no code'
  }
  return undefined
}

describe.each([
  ['cpu', true],
  ['cpu', false],
] as const)('hessian call plans on %s (checks %s)', (backend, checks) => {
  const m = tag({ backend, checks })(source)
  const xs = [0.3, -1.1, 0.7, 2.0, -0.4]
  const args = [0, 0, Float64Array.from(xs)]

  it('follows changes of the loss, the width and wrt between calls on one function', () => {
    const f = m.g!
    const hA = diagonal(xs.map((x) => 2 * Math.cos(x) - x * Math.sin(x)))
    const hC = diagonal(xs.map((x) => 6 * x))
    for (let round = 0; round < 2; round++) {
      for (const width of [undefined, 1, 2, 5]) {
        expectClose(hessian(f, args, { loss: 0, wrt: [2], width }), hA, 1e-12, `∂²a (width ${width})`)
        expectClose(hessian(f, args, { loss: 1, wrt: [2], width }), hC, 1e-12, `∂²c (width ${width})`)
      }
      // the default wrt is per loss: [c, x] for loss a (c does not enter a), [a, x] for loss c
      const n = xs.length + 1
      const Ha = hessian(f, args, { loss: 0 })
      const Hc = hessian(f, args, { loss: 1 })
      expect(Ha.length).toBe(n * n)
      for (let i = 0; i < xs.length; i++) {
        expect(Ha[0 * n + 1 + i]).toBe(0)
        expect(Ha[(1 + i) * n + 1 + i]).toBeCloseTo(hA[i * xs.length + i]!, 12)
        expect(Hc[(1 + i) * n + 1 + i]).toBeCloseTo(hC[i * xs.length + i]!, 12)
      }
      expectClose(hessian(f, args, { loss: 0, wrt: [2] }), fdOverX(f, args, 0), 1e-6, '∂²a vs differences')
      expectClose(hessian(f, args, { loss: 1, wrt: [2] }), fdOverX(f, args, 1), 1e-6, '∂²c vs differences')
    }
  })

  it('keeps a plan per function: a new function of the same source and new lengths give their own Hessians', () => {
    const f = m.g!
    const h = tag({ backend, checks })(source).g!
    const short = [0, 0, Float64Array.from([0.5, -0.25])]
    expectClose(hessian(f, args, { loss: 1, wrt: [2] }), diagonal(xs.map((x) => 6 * x)), 1e-12, 'f')
    expectClose(hessian(h, short, { loss: 1, wrt: [2] }), diagonal([3, -1.5]), 1e-12, 'h, 2 elements')
    expectClose(hessian(f, short, { loss: 1, wrt: [2] }), diagonal([3, -1.5]), 1e-12, 'f, 2 elements')
    expectClose(hessian(f, args, { loss: 1, wrt: [2] }), diagonal(xs.map((x) => 6 * x)), 1e-12, 'f, 5 elements')
  })

  it('still rejects bad input once the plan exists, and answers right after', () => {
    const f = m.g!
    const good = () => hessian(f, args, { loss: 0, wrt: [2] })
    const hA = good()
    expect(code(() => hessian(f, args, { loss: 2, wrt: [2] }))).toBe('ad/argument') // an array loss
    expect(code(() => hessian(f, args, { loss: 7 }))).toBe('ad/argument') // no such argument
    expect(code(() => hessian(f, args, { loss: 0, wrt: [5] }))).toBe('ad/argument')
    expect(code(() => hessian(f, args, { loss: 0, wrt: [2], width: 0 }))).toBe('ad/argument')
    expect(code(() => hessian(f, [0, 0], { loss: 0, wrt: [2] }))).toBe('call/arity')
    expect(code(() => hessian(f, [0, 0, [1, 2]], { loss: 0, wrt: [2] }))).toBe('call/type')
    expect(code(() => hessian(f, args, { loss: 0, wrt: [2], out: new Float64Array(3) }))).toBe('ad/argument')
    expect(code(() => hessian(f, args, undefined as never))).toBe('ad/argument')
    expect(Array.from(good())).toEqual(Array.from(hA))
  })
})
