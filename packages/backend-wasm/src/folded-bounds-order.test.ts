/**
 * Pass \`zero-sums\` with run-time checks on (review 19d): a first update \`y += a - b\` is split
 * into \`y += a; y -= b\` only where no term calls a primitive, since a primitive may raise an error
 * of its own (\`dot\` of two arrays of other lengths) and the reference raises the statement's
 * bounds errors first (all its bounds asserts come before its value): \`y += dot(u, v) - p[k]\` is
 * \`runtime/out-of-bounds\` at \`p[k]\` on wasm, as in the reference. (Older, documented: the cpu
 * backend's folded bounds check tests \`p[k]\` where it is loaded, after \`dot\` ran, and a loop's
 * \`det\` of a matrix that is not square comes before the bounds error on both backends.) The rest
 * holds: bits (±0, ±∞, NaN) and the out-of-bounds error of each term, forwards and backwards,
 * checks on and off.
 */
import { describe, expect, it } from 'vitest'
import { cpuBackend } from '@tenet/backend-cpu'
import { createRegistry, det, dot } from '@tenet/ir'
import { disabledPasses } from '@tenet/ir/backend'
import { backendUnderTest, raisedError, referenceBackend } from '@tenet/testing'
import { wasmBackend } from './index.js'

const bits = (v: unknown): string =>
  JSON.stringify(v, (_k, x) =>
    typeof x === 'number'
      ? Object.is(x, -0)
        ? '-0'
        : String(x)
      : ArrayBuffer.isView(x)
        ? Array.from(x as Float64Array).map((e) => (Object.is(e, -0) ? '-0' : String(e)))
        : x,
  )
function outcome(run: () => unknown): string {
  try {
    return bits(run())
  } catch {
    return raisedError(run)
  }
}
const registry = () => createRegistry().registerPrimitive(dot).registerPrimitive(det)

const made = new Map<boolean, Record<'reference' | 'cpu' | 'wasm', ReturnType<typeof referenceBackend>>>()
/** The engines, made once per `checks` (each caches what it compiled, by source). */
function engines(checks: boolean) {
  let e = made.get(checks)
  if (!e) {
    e = {
      reference: referenceBackend({ checks, registry: registry() }),
      cpu: backendUnderTest(cpuBackend, { checks, registry: registry() }),
      wasm: backendUnderTest(wasmBackend, { checks, registry: registry() }),
    }
    made.set(checks, e)
  }
  return e
}

/** The outcome of `name` on the reference, cpu and wasm (forwards, and backwards from there when `inverse`). */
function outcomes(src: string, name: string, args: () => unknown[], checks: boolean, inverse = false) {
  const run = (m: Record<string, unknown>) => {
    const f = m[name] as ((...a: unknown[]) => unknown[]) & { inverse: (...a: unknown[]) => unknown[] }
    const forward = f(...args())
    return inverse ? [bits(forward), f.inverse(...forward)] : forward
  }
  const e = engines(checks)
  return {
    reference: outcome(() => run(e.reference.compile(src))),
    cpu: outcome(() => run(e.cpu.compile(src))),
    wasm: outcome(() => run(e.wasm.compile(src))),
  }
}

function expectAgree(src: string, args: () => unknown[], checks: boolean, inverse = false, only?: 'cpu' | 'wasm') {
  const o = outcomes(src, 'f', args, checks, inverse)
  if (only !== 'wasm') expect.soft(o.cpu, 'cpu').toBe(o.reference)
  if (only !== 'cpu') expect.soft(o.wasm, 'wasm').toBe(o.reference)
  return o.reference
}

describe("review19-d: zero-sums with checks on, the order of a term's own error and the next term's bounds check", () => {
  const dotSrc = `
fn f(out: f64, u: f64[], v: f64[], p: f64[], k: i32) {
  p[0] += 1.0
  y <- 0.0
  y += dot(u, v) - p[k]
  out += y
  y -= dot(u, v) - p[k]
  y -> 0.0
}`
  const dotArgs = () => [0, Float64Array.of(1, 2), Float64Array.of(1), Float64Array.of(1, 2), 5]

  it("wasm, `y += dot(u, v) - p[k]`, u and v of other lengths and k out of range: out-of-bounds at p[k] first, as the reference (got dot's runtime/length: the split)", () => {
    const want = expectAgree(dotSrc, dotArgs, true, false, 'wasm')
    expect(want).toContain('runtime/out-of-bounds')
  })

  it("wasm without pass zero-sums raises the reference's error", () => {
    disabledPasses.add('zero-sums')
    try {
      expectAgree(`${dotSrc}\n`, dotArgs, true, false, 'wasm')
    } finally {
      disabledPasses.delete('zero-sums')
    }
  })

  it("checks off: both raise dot's error (no bounds asserts)", () => {
    expect(expectAgree(dotSrc, dotArgs, false)).toContain('runtime/length')
  })

  it('holds: out-of-bounds of each term in a loop, forwards and backwards, the first failing index as the reference', () => {
    const src = `
fn f(out: f64[], x: f64[], p: f64[], q: f64[], n: i32, m: i32) {
  for t in 0..n {
    y <- 0.0
    y += x[t] * p[t + m] - x[t + 1] * q[t] + p[2 * t] / q[t - m]
    out[t] += y
    y -= x[t] * p[t + m] - x[t + 1] * q[t] + p[2 * t] / q[t - m]
    y -> 0.0
  }
}`
    for (const [nx, np, nq, n, m] of [
      [5, 5, 5, 4, 1],
      [3, 9, 9, 4, 0],
      [9, 3, 9, 4, 0],
      [9, 9, 2, 4, 0],
      [9, 9, 9, 4, -1],
      [9, 9, 3, 5, -3],
    ] as const)
      for (const inverse of [false, true])
        expectAgree(
          src,
          () => [
            new Float64Array(n),
            new Float64Array(nx).fill(1.5),
            new Float64Array(np).fill(2),
            new Float64Array(nq).fill(-3),
            n,
            m,
          ],
          true,
          inverse,
        )
  })

  it('holds: the bits of split sums (±0, ±∞, NaN, subnormals) in a loop and a branch, f64 and f32, checks on and off, both directions', () => {
    // (s[t] is written by the loop: the first updates of y are split, checks on too)
    const src = (T: string) => `
fn f(s: ${T}[], x: ${T}[], p: ${T}[], n: i32) {
  for t in 0..n {
    y: ${T} <- 0.0
    y += s[t] * p[0] - x[t + 1] * p[1] + x[t + 2]
    if (x[t] > 0.0) {
      z: ${T} <- 0.0
      z -= s[t] - y - p[2]
      s[t + 1] += z
      z += s[t] - y - p[2]
      z -> 0.0
    }
    s[t + 1] += y
    y -= s[t] * p[0] - x[t + 1] * p[1] + x[t + 2]
    y -> 0.0
  }
}`
    const cases = [
      [
        [-0, 0, -0, -0, 0],
        [-0, 0, -0, -0, 0, -0],
        [-0, 0, -0],
      ],
      [
        [0, -0, 0, 0, 0],
        [0, -0, -0, 1, -1, 0],
        [-0, -0, 0],
      ],
      [
        [1, 2, 0, 0, 0],
        [Infinity, -Infinity, NaN, 1e308, 1e308, -0],
        [2, 1, -0],
      ],
      [
        [1e-320, 0, 0, 0, 0],
        [1e-320, -1e-320, 5e-324, 3, 0.1, 2 ** 53],
        [0.5, -0.5, 1e-310],
      ],
      [
        [1e30, 0, 0, 0, 0],
        [3e38, -3e38, 1e-45, 16777217, 0.1, 1],
        [1.5, 1e-30, 3e38],
      ],
    ]
    for (const T of ['f64', 'f32'])
      for (const checks of [true, false])
        for (const [s0, x, p] of cases)
          for (const inverse of [false, true]) {
            const A = T === 'f64' ? Float64Array : Float32Array
            expectAgree(src(T), () => [A.from(s0!), A.from(x!), A.from(p!), 4], checks, inverse)
          }
  })
})
