/**
 * Review 19 (d): gradients with run-time checks on after `rk4fwd` (zero-sums with checks,
 * finite-uncompute's "element a nonzero constant away", implied-checks through split updates),
 * cpu against the interpreter. The index polynomials' coefficients are doubles: above 2⁵³ they
 * round, so `xs[t·A³ + t + c + 1]` reads as an element 1 away from `xs[t·A³ + c]` (A = 1000003)
 * though for t = −1 both are `xs[0]`. The uncompute becomes `a -= a`: the interpreter raises
 * `runtime/dealloc`, the cpu gradient returns. What holds: the gradient of an explicit Euler
 * integrator whose steps write the history's next elements between a stage's compute and
 * uncompute (split first updates too), finite and ±∞ inputs with checks on, finite with checks off (±∞ with checks off differs
 * by design: pass `zero-updates` assumes finite values).
 */
import { describe, expect, it } from 'vitest'
import { raisedError } from '@tenet/testing'
import { gradient } from './index.js'
import { tag } from './test-util.js'

const bits = (v: unknown): string =>
  JSON.stringify(v, (_k, x) =>
    typeof x === 'number'
      ? Object.is(x, -0)
        ? '-0'
        : String(x)
      : ArrayBuffer.isView(x)
        ? Array.from(x as Float64Array).map(String)
        : x,
  )
function outcome(run: () => unknown): string {
  try {
    return bits(run())
  } catch {
    return raisedError(run)
  }
}
const modules = new Map<string, ReturnType<ReturnType<typeof tag>>>()
function expectAgree(src: string, args: () => unknown[], checks: boolean) {
  const [want, got] = ['interpreter', 'cpu'].map((backend) => {
    const k = `${backend} ${checks} ${src}`
    if (!modules.has(k)) modules.set(k, tag({ backend, checks })(src))
    const m = modules.get(k)!
    return outcome(() => gradient(m.f!, args(), { loss: 0 }))
  })
  expect(got, `cpu, checks ${checks}`).toBe(want)
  return want!
}

const K = 't * 1000003 * 1000003 * 1000003'

describe('review19-d: checked gradients after rk4fwd', () => {
  it("indices equal modulo 2^32, coefficients above 2^53 alike: the interpreter's dealloc error (cpu returns a gradient)", () => {
    const src = `
fn f(out: f64, xs: f64[], t: i32) {
  a <- 0.0
  a += xs[${K} + 583896283] * 2.0
  xs[${K} + t + 583896284] += 1.0
  out += a * a
  a -= xs[${K} + 583896283] * 2.0
  a -> 0.0
}`
    expect(expectAgree(src, () => [0, Float64Array.of(3, 4), -1], true)).toContain('runtime/dealloc')
  })

  const euler = `
fn f(out: f64, x0: f64, p: f64, h: f64, n: i32) {
  xs: f64[] <- zeros(2 * n + 2)
  xs[0] += x0
  for t in 0..n {
    a <- 0.0
    a += xs[2 * t] * p - xs[2 * t + 1] * h
    xs[2 * t + 2] += xs[2 * t] + h * a
    xs[2 * t + 3] += xs[2 * t + 1] - h * a
    a -= xs[2 * t] * p - xs[2 * t + 1] * h
    a -> 0.0
  }
  out += xs[2 * n] * xs[2 * n + 1]
  for t in reverse 0..n {
    a <- 0.0
    a += xs[2 * t] * p - xs[2 * t + 1] * h
    xs[2 * t + 3] -= xs[2 * t + 1] - h * a
    xs[2 * t + 2] -= xs[2 * t] + h * a
    a -= xs[2 * t] * p - xs[2 * t + 1] * h
    a -> 0.0
  }
  xs[0] -= x0
  xs -> zeros(2 * n + 2)
}`

  it("holds: an Euler integrator's gradient, its steps writing the next history elements, finite and ±∞ inputs (checks on), finite (checks off)", () => {
    for (const args of [
      [0, 0.7, -0.3, 0.1, 5],
      [0, Infinity, 1, 0.1, 2],
      [0, 1e200, 1e200, 1, 3],
    ])
      expectAgree(euler, () => [...args], true)
    // (checks off, ±∞ differs by design: pass \`zero-updates\` assumes finite values)
    for (const args of [[0, -0, 2, 0.5, 2]]) expectAgree(euler, () => [...args], false)
  })
})
