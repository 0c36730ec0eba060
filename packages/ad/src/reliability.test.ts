/**
 * AD at its edges, on every engine: bad options are `TenetError`s with a code, an unstable
 * uncompute is reported instead of giving a silently wrong gradient, and a gradient never reads
 * past an array on wasm without checks.
 */
import { afterEach, describe, expect, it, vi } from 'vitest'
import { TenetError } from '@tenet/ir'
import { wasmBackend } from '@tenet/backend-wasm'
import { checkGrad, grad, gradient, hessian, hvp, jacobian, jvp } from './index.js'
import { tag, testRegistry } from './test-util.js'

const BACKENDS = ['interpreter', 'cpu', 'wasm'] as const
const on = (backend: string, checks = true) =>
  tag({ backend, checks, registry: testRegistry().registerBackend(wasmBackend) })

/** The error `run` throws (fails the test when it returns). */
function thrown(run: () => unknown): TenetError {
  try {
    run()
  } catch (e) {
    return e as TenetError
  }
  return expect.unreachable('expected an error') as never
}

afterEach(() => {
  vi.restoreAllMocks()
})

describe('bad AD options are ad/argument errors that name the option', () => {
  const m = on('cpu')`fn f(loss: f64, x: f64[], s: f64) { for i in 0..len(x) { loss += x[i] * x[i] * s } }`
  const args = () => [0, Float64Array.from([0.5, -1]), 2]
  const cases: Array<[string, () => unknown, RegExp]> = [
    [
      'gradient without options',
      () => (gradient as (...a: unknown[]) => unknown)(m.f!, args()),
      /`gradient` needs an options object with `loss`/,
    ],
    ['gradient with null options', () => gradient(m.f!, args(), null as never), /got null/],
    ['gradient without loss', () => gradient(m.f!, args(), {} as never), /needs `loss`/],
    ['gradient with arguments that are not an array', () => gradient(m.f!, 3 as never, { loss: 0 }), /as an array/],
    ['grad without options', () => (grad as (...a: unknown[]) => unknown)(m.f!), /`grad` needs an options object/],
    [
      'checkGrad with step 0',
      () => checkGrad(m.f!, args(), { loss: 0, step: 0 }),
      /`step` of `checkGrad` must be a finite number > 0, got 0/,
    ],
    ['checkGrad with a negative step', () => checkGrad(m.f!, args(), { loss: 0, step: -1e-6 }), /`step`/],
    [
      'checkGrad with a NaN tolerance',
      () => checkGrad(m.f!, args(), { loss: 0, atol: Number.NaN }),
      /`atol` of `checkGrad`/,
    ],
    [
      'hessian with width 0',
      () => hessian(m.f!, args(), { loss: 0, width: 0 }),
      /`width` of `hessian` must be a positive integer, got 0/,
    ],
    ['hessian with width 1.5', () => hessian(m.f!, args(), { loss: 0, width: 1.5 }), /`width`/],
    [
      'hessian with wrt a string',
      () => hessian(m.f!, args(), { loss: 0, wrt: 'x' as never }),
      /`wrt` of `hessian` must be an array of argument indices \(e\.g\. `\[1\]`\), got "x"/,
    ],
    ['jacobian with width 0', () => jacobian(m.f!, args(), { width: 0 }), /`width` of `jacobian`/],
    ['jacobian with inputs a number', () => jacobian(m.f!, args(), { inputs: 1 as never }), /`inputs` of `jacobian`/],
    ['jvp without a direction', () => jvp(m.f!, args(), {} as never), /`jvp` needs `v`/],
    ['hvp without a direction', () => hvp(m.f!, args(), { loss: 0 } as never), /`hvp` needs `v`/],
    [
      'grad with an unknown uncompute policy',
      () => grad(m.f!, { loss: 0, uncompute: 'maybe' as never }),
      /`uncompute` must be 'error', 'warn' or 'off'/,
    ],
    [
      'grad with a negative uncompute tolerance',
      () => grad(m.f!, { loss: 0, uncomputeTolerance: -1 }),
      /`uncomputeTolerance`/,
    ],
  ]
  for (const [what, run, message] of cases) {
    it(what, () => {
      const e = thrown(run)
      expect(TenetError.isInstance(e), String(e)).toBe(true)
      expect(e.code).toBe('ad/argument')
      expect(e.message).toMatch(message)
    })
  }

  it('a detached array argument is an ad/argument or call/detached error, not a TypeError', () => {
    const buffer = new ArrayBuffer(16)
    const x = new Float64Array(buffer)
    structuredClone(buffer, { transfer: [buffer] })
    for (const backend of BACKENDS) {
      const m = on(backend)`fn f(loss: f64, x: f64[]) { x[0] += 1.0\n loss += x[0] * x[0] }`
      for (const run of [
        () => gradient(m.f!, [0, x], { loss: 0 }),
        () => jvp(m.f!, [0, x], { v: [0, null] }),
        () => hessian(m.f!, [0, x], { loss: 0 }),
        () => jacobian(m.f!, [0, x]),
      ]) {
        const e = thrown(run)
        expect(TenetError.isInstance(e), `${backend}: ${String(e)}`).toBe(true)
        expect(e.message).toContain('detached')
      }
    }
  })
})

describe.each(BACKENDS)('an unstable uncompute on %s', (backend) => {
  // the loop is a linear map with eigenvalues 2 ± √3: forwards every step is accurate, but
  // uncomputing it multiplies the last rounding errors by about 3.7³², so the x that the sweep
  // recomputes for \`loss += sin(x)\` is about 5.2, not 0.3 (a tape would have stored it)
  const unstable = `fn f(loss: f64, x: f64, y: f64) {
  loss += sin(x)
  for k in 0..16 {
    y += 2.0 * x
    x += y
  }
}`
  const stable = unstable.replace('fn f(', 'fn g(').replace('0..16', '0..4')
  const m = on(backend)(unstable + '\n' + stable)
  const args = () => [0, 0.3, 0.1]

  it('is an ad/uncompute error by default, naming an argument and both values', () => {
    const e = thrown(() => gradient(m.f!, args(), { loss: 0 }))
    expect(e.code).toBe('ad/uncompute')
    expect(e.message).toMatch(
      /did not bring argument \d \(`\w+`\) back to its input: it recomputed \S+ where the input was \S+/,
    )
    expect(e.message).toContain('numerically unstable')
    expect(thrown(() => grad(m.f!, { loss: 0 })(...args())).code).toBe('ad/uncompute')
    expect(thrown(() => checkGrad(m.f!, args(), { loss: 0 })).code).toBe('ad/uncompute')
  })

  it('the gradient it stops is wrong: with the check off it disagrees with finite differences and with forward mode', () => {
    const ad = gradient(m.f!, args(), { loss: 0, uncompute: 'off' })[1] as number
    // the right value: only \`loss += sin(x)\` touches the loss, before the loop
    const right = Math.cos(0.3)
    expect(jvp(m.f!, args(), { v: [0, 1, 0] }).tangent[0]).toBeCloseTo(right, 12)
    expect(Math.abs(ad - right)).toBeGreaterThan(0.1)
    const fd = checkGrad(m.f!, args(), { loss: 0, uncompute: 'off' })
    expect(fd.ok).toBe(false)
    expect(fd.worst!.fd).toBeCloseTo(right, 6)
  })

  it("'warn' warns once per gradient function and returns the gradient", () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {})
    const off = gradient(m.f!, args(), { loss: 0, uncompute: 'off' })[1] as number
    const g = grad(m.f!, { loss: 0, uncompute: 'warn' })
    for (let k = 0; k < 3; k++) expect(g(...args())[1]).toBe(off)
    expect(warn).toHaveBeenCalledTimes(1)
    expect(String(warn.mock.calls[0]![0])).toContain('did not bring argument')
  })

  it('a stable program passes the check; a tolerance wide enough lets the unstable one through', () => {
    const r = checkGrad(m.g!, args(), { loss: 0 })
    expect(r.ok, JSON.stringify(r.worst)).toBe(true)
    expect(typeof gradient(m.f!, args(), { loss: 0, uncomputeTolerance: 1e3 })[1]).toBe('number')
  })
})

describe.each(BACKENDS)('an unstable uncompute of an array element on %s', (backend) => {
  // the unstable loop of the scalar case on element p of x (the driver checks arrays two elements
  // per pass first, then finds the element that fails)
  // (x first: the driver checks the arguments in order, and the loss drifts with x[p])
  const m = on(backend)`fn h(x: f64[], loss: f64, y: f64[], p: i32) {
  loss += sin(x[p])
  for k in 0..16 {
    y[p] += 2.0 * x[p]
    x[p] += y[p]
  }
}`
  const args = (n: number, p: number) => [
    Float64Array.from({ length: n }, (_, i) => 0.3 + i / 8),
    0,
    Float64Array.from({ length: n }, () => 0.1),
    p,
  ]

  it('names the element that came back wrong, at an even or odd position, the last of an odd length included', () => {
    for (const [n, p] of [
      [5, 4],
      [5, 0],
      [6, 3],
      [1, 0],
    ] as const) {
      const e = thrown(() => gradient(m.h!, args(n, p), { loss: 1 }))
      expect(e.code, `n ${n}, p ${p}`).toBe('ad/uncompute')
      expect(e.message).toContain(`, element ${p},`)
    }
  })

  it('passes arrays that come back within the tolerance, infinite elements that come back equal included', () => {
    const ok = on(backend)`fn k(loss: f64, x: f64[], z: f64[]) {
  for i in 0..len(x) { x[i] *= 3.0 }
  loss += z[0] * z[0]
  for i in 0..len(x) { x[i] /= 3.0 }
}`
    for (const n of [1, 4, 7]) {
      const x = Float64Array.from({ length: n }, (_, i) => (i === n - 1 ? Number.POSITIVE_INFINITY : i / 7 + 0.1))
      expect(() => gradient(ok.k!, [0, x, Float64Array.from([0.5])], { loss: 0 }), `n ${n}`).not.toThrow()
    }
  })
})

describe('gradients on wasm without checks never read past an array', () => {
  it('an out-of-range index in the program is runtime/out-of-bounds, in the forward run and in the adjoint', () => {
    const m = on('wasm', false)`fn f(loss: f64, x: f64[], y: f64[], i: i32) { loss += x[i] * y[0] }`
    const x = Float64Array.from([1, 2]),
      y = Float64Array.from([3, 4])
    expect(gradient(m.f!, [0, x, y, 1], { loss: 0 })[1]).toEqual(Float64Array.from([0, 3]))
    for (const i of [2, -1])
      expect(thrown(() => gradient(m.f!, [0, x, y, i], { loss: 0 })).code).toBe('runtime/out-of-bounds')
  })
})
