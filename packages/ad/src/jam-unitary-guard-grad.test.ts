/**
 * The gradient of the unitary rotations (jam's range guard marked `sameWork`, so that
 * `tabulate-sweeps` keeps the adjoint's tables), cpu and wasm, checks on and off, against the
 * interpreter's bits.
 */
import { describe, expect, it } from 'vitest'
import { createRegistry, parse } from '@tenet/ir'
import { compileModule, interpreterBackend } from '@tenet/reversible'
import { cpuBackend } from '@tenet/backend-cpu'
import { createWasmBackend } from '@tenet/backend-wasm'
import { gradient } from './index.js'

const source = `fn f(x: f64[], theta: f64[], m: i32, n: i32) {
  for l in 0..n {
    k: i32 <- 0
    for j in 0..m {
      for i in m - 2..=j by -1 {
        ROT(x[i + m * l], x[i + 1 + m * l], theta[k])
        INC(k)
      }
    }
    k -> len(theta)
  }
}
fn loss(out: f64, x: f64[], theta: f64[], w: f64[], m: i32, n: i32) {
  f(x, theta, m, n)
  for i in 0..len(x) { out += x[i] * w[i] }
}`
const registry = () =>
  createRegistry().registerBackend(cpuBackend).registerBackend(createWasmBackend()).registerBackend(interpreterBackend)
const show = (g: unknown): string =>
  JSON.stringify(g, (_, v) => (v instanceof Float64Array ? Array.from(v, (x) => (Object.is(x, -0) ? '-0' : x)) : v))

describe('unitary gradient: jam and tabulate-sweeps', () => {
  const ref = compileModule(parse({ text: source, name: 'p' }), {
    registry: registry(),
    backend: 'interpreter',
    checks: true,
  }) as never as { loss: never }
  for (const backend of ['cpu', 'wasm'])
    for (const checks of [true, false])
      it(`${backend}, checks ${checks}`, () => {
        const m = compileModule(parse({ text: source, name: 'p' }), {
          registry: registry(),
          backend,
          checks,
        }) as never as { loss: never }
        for (const [M, N] of [
          [1, 2],
          [2, 3],
          [3, 4],
          [5, 3],
          [8, 6],
          [9, 1],
        ] as const) {
          const args = () => [
            0,
            Float64Array.from({ length: M * N }, (_, i) => Math.sin(i + 1)),
            Float64Array.from({ length: (M * (M - 1)) / 2 }, (_, i) => 0.1 + 0.37 * i),
            Float64Array.from({ length: M * N }, (_, i) => Math.cos(i + 2)),
            M,
            N,
          ]
          expect(`${M} ${N}: ${show(gradient(m.loss, args(), { loss: 0 }))}`).toBe(
            `${M} ${N}: ${show(gradient(ref.loss, args(), { loss: 0 }))}`,
          )
        }
      })
})
