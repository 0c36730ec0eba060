import { expect, it } from 'vitest'
import { createRegistry, parse } from '@tenet/ir'
import { compileModule } from '@tenet/reversible'
import { cpuBackend } from '@tenet/backend-cpu'
import { wasmBackend } from '@tenet/backend-wasm'
import { grad } from './index.js'

// the gradient of a map loop whose body runs a series from 1 dividing by its index: on
// wasm without checks the map loop runs in lanes, and its inner loop's peeled first iteration's
// x[j] / f64(1) was read back (lane memo) for every k before peel-ones left loops in lanes alone
const registry = () => createRegistry().registerBackend(cpuBackend).registerBackend(wasmBackend)
const source = `
fn series(x: f64[], y: f64[], m: i32) {
  for j in 0..len(x) {
    for k in 1..=m { y[j] += sin(x[j] / f64(k)) }
  }
}
fn f(loss: f64, x: f64[], m: i32) {
  routine {
    y: f64[] <- zeros(len(x))
    series(x, y, m)
  }
  for j in 0..len(x) { loss += y[j] * y[j] }
  ~routine
}`
const x = Float64Array.of(0.5, 1, 1.5, 2, 2.5, 3)
// loss = Σ_j (Σ_k sin(x_j / k))², ∂/∂x_j = 2 y_j Σ_k cos(x_j / k) / k
const want = Array.from(x, (xj) => {
  let y = 0,
    d = 0
  for (let k = 1; k <= 4; k++) {
    y += Math.sin(xj / k)
    d += Math.cos(xj / k) / k
  }
  return 2 * y * d
})
for (const fuse of [true, false])
  it(`the gradient of a map loop over a series from 1 on wasm without checks (${fuse ? 'fused' : 'two sweeps'})`, () => {
    const m = compileModule(parse({ text: source, name: 'test' }), {
      registry: registry(),
      backend: 'wasm',
      checks: false,
    })
    const g = grad(m.f!, { loss: 0, fuse })(0, x.slice(), 4) as unknown[]
    const got = Array.from(g[1] as Float64Array)
    for (let j = 0; j < x.length; j++) expect([j, got[j]]).toEqual([j, expect.closeTo(want[j]!, 10)])
  })
