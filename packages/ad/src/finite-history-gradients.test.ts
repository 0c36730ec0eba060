/**
 * Pass `finite-history` of `@tenet/ir` and gradients with run-time checks on: the gradients of
 * a Horner least-squares loss and of a heat stencil's (history arrays uncomputed by `~routine`,
 * which the pass rewrites) are the same bits with the pass and without, on cpu and wasm, and
 * match central differences of the objective.
 */
import { cpuBackend } from '@tenet/backend-cpu'
import { wasmBackend } from '@tenet/backend-wasm'
import { createRegistry, parse } from '@tenet/ir'
import { disabledPasses } from '@tenet/ir/backend'
import { compileModule, interpreterBackend } from '@tenet/reversible'
import { finiteDifference } from '@tenet/testing'
import { describe, expect, it } from 'vitest'
import { gradient } from './index.js'

const registry = () =>
  createRegistry().registerBackend(cpuBackend).registerBackend(interpreterBackend).registerBackend(wasmBackend)

const src = `
fn horner_loss(loss: f64, c: f64[], xs: f64[], ys: f64[]) {
  for j in 0..len(xs) {
    routine {
      acc: f64[] <- zeros(len(c))
      acc[len(c) - 1] += c[len(c) - 1]
      for k in len(c) - 2..=0 by -1 { acc[k] += acc[k + 1] * xs[j] + c[k] }
      e <- 0.0
      e += acc[0] - ys[j]
    }
    loss += e * e
    ~routine
  }
}
fn heat_loss(loss: f64, u0: f64[], w: f64[], r: f64, n: i32, T: i32) {
  routine {
    u: f64[] <- zeros((T + 1) * n)
    for i in 0..n { u[i] += u0[i] }
    for t in 0..T {
      for i in 1..n - 1 {
        u[(t + 1) * n + i] += u[t * n + i] + r * (u[t * n + i - 1] - 2.0 * u[t * n + i] + u[t * n + i + 1])
      }
    }
  }
  for i in 0..n { loss += w[i] * u[T * n + i] * u[T * n + i] }
  ~routine
}`

/** The module with pass `finite-history` on or off (a source of its own: the compile caches key on it). */
function compile(backend: string, on: boolean) {
  if (!on) disabledPasses.add('finite-history')
  try {
    return compileModule(parse({ text: on ? src : `${src}\n`, name: 'test' }), {
      registry: registry(),
      backend,
      checks: true,
    })
  } finally {
    disabledPasses.delete('finite-history')
  }
}

const c = Float64Array.from([0.3, -0.2, 0.5, 0.1, -0.4])
const xs = Float64Array.from([-0.9, -0.3, 0.2, 0.7])
const ys = Float64Array.from([0.1, -0.5, 0.4, 0.9])
const u0 = Float64Array.from([0, 0.5, 1, 0.25, -0.5, 0])
const w = Float64Array.from([1, 2, 0.5, 1.5, 1, 1])

describe.each(['cpu', 'wasm'] as const)('gradients with checks on and pass finite-history (%s)', (backend) => {
  it('are the same bits with the pass and without, and match central differences', () => {
    const on = compile(backend, true)
    const off = compile(backend, false)
    const gh = (m: typeof on) => gradient(m.horner_loss!, [0, c, xs, ys], { loss: 0 })
    const gt = (m: typeof on) => gradient(m.heat_loss!, [0, u0, w, 0.2, 6, 5], { loss: 0 })
    const flat = (g: unknown[]) => g.map((x) => (ArrayBuffer.isView(x) ? Array.from(x as Float64Array) : x))
    expect(flat(gh(on))).toEqual(flat(gh(off)))
    expect(flat(gt(on))).toEqual(flat(gt(off)))
    // (against central differences of the objective in c, and in u0)
    const first = (r: unknown): number => (typeof r === 'number' ? r : (r as ArrayLike<number>)[0]!)
    const hc = (v: number[]) => first(on.horner_loss!(0, Float64Array.from(v), xs, ys))
    const fd = finiteDifference(hc, Array.from(c))
    const got = gh(on)[1] as Float64Array
    fd.forEach((d, i) => expect(got[i]).toBeCloseTo(d, 6))
    const hu = (v: number[]) => first(on.heat_loss!(0, Float64Array.from(v), w, 0.2, 6, 5))
    const fdu = finiteDifference(hu, Array.from(u0))
    const gu = gt(on)[1] as Float64Array
    fdu.forEach((d, i) => expect(gu[i]).toBeCloseTo(d, 6))
  })
})
