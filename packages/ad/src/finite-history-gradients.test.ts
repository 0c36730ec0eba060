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
import { finiteDifference, heatLossSource, hornerLossSource } from '@tenet/testing'
import { describe, expect, it } from 'vitest'
import { gradient } from './index.js'

const registry = () =>
  createRegistry().registerBackend(cpuBackend).registerBackend(interpreterBackend).registerBackend(wasmBackend)

const src = `
${hornerLossSource}
${heatLossSource}`

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
