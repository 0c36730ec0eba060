/**
 * Pass `finite-steps` of `@tenet/ir` and gradients with run-time checks on: the gradient of the
 * RK4 kernel's loss (a trajectory in a history array, four stages per step in scalars, all
 * uncomputed by `~routine`, which the pass rewrites) is the same bits with the pass and without,
 * on cpu and wasm, and matches central differences of the objective.
 */
import { cpuBackend } from '@tenet/backend-cpu'
import { wasmBackend } from '@tenet/backend-wasm'
import { createRegistry, parse } from '@tenet/ir'
import { disabledPasses } from '@tenet/ir/backend'
import { compileModule, interpreterBackend } from '@tenet/reversible'
import { finiteDifference, lvSource, rk4LossSource } from '@tenet/testing'
import { describe, expect, it } from 'vitest'
import { gradient } from './index.js'

const registry = () =>
  createRegistry().registerBackend(cpuBackend).registerBackend(interpreterBackend).registerBackend(wasmBackend)

// the kernels' RK4 (Lotka–Volterra) listing, the same text as the bench's
const src = `\n${lvSource}\n${rk4LossSource}`

/** The module with pass `finite-steps` on or off (a source of its own: the compile caches key on it). */
function compile(backend: string, on: boolean) {
  if (!on) disabledPasses.add('finite-steps')
  try {
    return compileModule(parse({ text: on ? src : `${src}\n`, name: 'test' }), {
      registry: registry(),
      backend,
      checks: true,
    })
  } finally {
    disabledPasses.delete('finite-steps')
  }
}

const x0 = Float64Array.from([1.2, 0.8])
const p = Float64Array.from([1.1, 0.4, 0.4, 0.1])

describe.each(['cpu', 'wasm'] as const)('gradients with checks on and pass finite-steps (%s)', (backend) => {
  it('are the same bits with the pass and without, and match central differences', () => {
    const on = compile(backend, true)
    const off = compile(backend, false)
    const g = (m: typeof on) => gradient(m.rk4_loss!, [0, x0, p, 0.05, 20], { loss: 0 })
    const flat = (r: unknown[]) => r.map((x) => (ArrayBuffer.isView(x) ? Array.from(x as Float64Array) : x))
    expect(flat(g(on))).toEqual(flat(g(off)))
    // (against central differences of the objective in x0, in p and in h)
    const first = (r: unknown): number => (typeof r === 'number' ? r : (r as ArrayLike<number>)[0]!)
    const got = g(on)
    const fx = finiteDifference(
      (v: number[]) => first(on.rk4_loss!(0, Float64Array.from(v), p, 0.05, 20)),
      Array.from(x0),
    )
    fx.forEach((d, i) => expect((got[1] as Float64Array)[i]).toBeCloseTo(d, 6))
    const fp = finiteDifference(
      (v: number[]) => first(on.rk4_loss!(0, x0, Float64Array.from(v), 0.05, 20)),
      Array.from(p),
    )
    fp.forEach((d, i) => expect((got[2] as Float64Array)[i]).toBeCloseTo(d, 6))
    const fh = finiteDifference((v: number[]) => first(on.rk4_loss!(0, x0, p, v[0]!, 20)), [0.05])
    expect(got[3] as number).toBeCloseTo(fh[0]!, 6)
  })
})
