import { createRegistry, parse } from '@tenet/ir'
import { compileModule, interpreterBackend } from '@tenet/reversible'
import { cpuBackend } from '@tenet/backend-cpu'
import { wasmBackend } from '@tenet/backend-wasm'
import { expect, it } from 'vitest'
import { grad } from './index.js'
import { centralDifferences, expectClose, flatWrt as flat } from './test-util.js'

// a pair in an outer loop's body (the history allocated per outer iteration, the counter rows of
// a step of 2), and one in a branch
const programs = `
fn outer_loss(loss: f64, x: f64[], n: i32) {
  for e in 0..n {
    routine {
      s <- 0.0
      for t in e..n + 3 by 2 {
        routine {
          a, b <- 0.0, 0.0
          a += x[0] * f64(t - e) + x[1]
          b += a * a * x[1]
        }
        s += a * b
        ~routine
      }
    }
    if (s > 0.0, ~) {
      routine {
        u <- 0.0
        for t in e..0 by -1 {
          routine {
            c <- 0.0
            c += x[1] * s * f64(t)
          }
          u += c * c
          ~routine
        }
      }
      loss += u
      ~routine
    }
    loss += s * x[0]
    ~routine
  }
}
`
const registry = () =>
  createRegistry().registerBackend(cpuBackend).registerBackend(wasmBackend).registerBackend(interpreterBackend)
it('pairs in an outer loop body and in a branch: fused = two sweeps = checks on = central differences', () => {
  const x = Float64Array.of(0.3, 0.7)
  for (const b of ['interpreter', 'cpu', 'wasm']) {
    const c = (checks: boolean) =>
      compileModule(parse({ text: programs, name: 'r' }), { registry: registry(), backend: b, checks }).outer_loss!
    const f = c(false)
    const fused = flat(grad(f, { loss: 0 })(0, x, 5) as unknown[], [1])
    const sweeps = flat(grad(f, { loss: 0, fuse: false })(0, x, 5) as unknown[], [1])
    const checked = flat(grad(c(true), { loss: 0 })(0, x, 5) as unknown[], [1])
    expectClose(fused, sweeps, 1e-13, b)
    expectClose(fused, checked, 1e-13, b)
    expectClose(fused, centralDifferences(c(true), [0, x, 5], [1]), 1e-6, b)
    expect(fused.every(Number.isFinite)).toBe(true)
  }
})
