/**
 * Adversarial programs for the pass `finite-cells` and gradients with checks on. A later iteration
 * that writes an earlier cell through a negated view passed to a call (the pass does not see the
 * write): the reference's gradient fails the deallocation check of A (the uncompute left a
 * residue there), and so do the compiled ones (the gradient programs do not take the rewritten shape).
 */
import { cpuBackend } from '@tenet/backend-cpu'
import { wasmBackend } from '@tenet/backend-wasm'
import { createRegistry, parse } from '@tenet/ir'
import { disabledPasses } from '@tenet/ir/backend'
import { compileModule, interpreterBackend } from '@tenet/reversible'
import { raisedError } from '@tenet/testing'
import { describe, expect, it } from 'vitest'
import { gradient } from './index.js'

const registry = () =>
  createRegistry().registerBackend(cpuBackend).registerBackend(interpreterBackend).registerBackend(wasmBackend)

const src = `
fn bump(y: f64) {
  y += 0.1
}
fn f(loss: f64, x: f64[], T: i32) {
  A: f64[] <- zeros(T + 2)
  B: f64[] <- zeros(T + 2)
  for t in 1..T {
    B[t] += x[t]
    bump(-B[t - 1])
    A[t] += B[t] * 1.0e300
  }
  loss += A[1]
  for t in reverse 1..T {
    A[t] -= B[t] * 1.0e300
    ~bump(-B[t - 1])
    B[t] -= x[t]
  }
  A -> zeros(T + 2)
  B -> zeros(T + 2)
}`

function compile(backend: string, on: boolean) {
  if (!on) disabledPasses.add('finite-cells')
  try {
    return compileModule(parse({ text: on ? src : `${src}\n`, name: 'fcga' }), {
      registry: registry(),
      backend,
      checks: true,
    })
  } finally {
    disabledPasses.delete('finite-cells')
  }
}

const outcome = (run: () => unknown[]): string => {
  try {
    return JSON.stringify(run().map((x) => (ArrayBuffer.isView(x) ? Array.from(x as Float64Array) : x)))
  } catch {
    return raisedError(run)
  }
}

describe('finite-cells and gradients with checks on', () => {
  it('a call writing an earlier cell through -B[t - 1]: the gradient fails the same check as the reference’s', () => {
    const x = Float64Array.of(1e-17, 1e-17, 1e-17, 1e-17, 1e-17)
    const g = (backend: string, on: boolean) =>
      outcome(() => gradient(compile(backend, on).f!, [0, x.slice(), 4], { loss: 0 }) as unknown[])
    const want = g('interpreter', true)
    expect(want).toMatch(/^runtime\//)
    for (const backend of ['cpu', 'wasm']) {
      expect(g(backend, false), `${backend} without the pass`).toBe(want)
      expect(g(backend, true), backend).toBe(want)
    }
  })
})
