/**
 * The generated driver on a backend with resident memory (wasm) keeps the views of its array
 * arguments between calls: each call after the memory grew (which detaches every view), after an
 * argument changed length, and after `release` gives the cpu backend's gradient.
 */
import { describe, expect, it } from 'vitest'
import { createRegistry, parse } from '@tenet/ir'
import { cpuBackend } from '@tenet/backend-cpu'
import { createWasmBackend } from '@tenet/backend-wasm'
import { compileModule } from '@tenet/reversible'
import { grad } from './index.js'

const text = `fn f(y: f64, x: f64[], w: f64[], n: i32[]) {
  for i in 0..len(x) { y += w[i] * x[i] * x[i] * f64(n[i]) }
}
fn big(y: f64, m: i32) {
  t: f64[] <- zeros(m)
  t[0] += y
  t[0] -= y
  t -> zeros(m)
}`

describe('the driver’s resident views (wasm)', () => {
  it('give the cpu gradient after the memory grew, after a length changed and after release', () => {
    const registry = createRegistry().registerBackend(cpuBackend).registerBackend(createWasmBackend())
    const [wasm, cpu] = ['wasm', 'cpu'].map((backend) =>
      compileModule(parse({ text, name: 'dr' }), { registry, backend, checks: false }),
    )
    const gw = grad(wasm!.f!, { loss: 0 }),
      gc = grad(cpu!.f!, { loss: 0 })
    const args = (n: number, s: number) => [
      0,
      Float64Array.from({ length: n }, (_, i) => s + i),
      Float64Array.from({ length: n }, (_, i) => 0.5 * i - s),
      Int32Array.from({ length: n }, (_, i) => i + 1),
    ]
    const same = (n: number, s: number) => {
      gw.run(...args(n, s))
      gc.run(...args(n, s))
      expect(Array.from(gw.buffers[1]!)).toEqual(Array.from(gc.buffers[1]!))
      expect(Array.from(gw.buffers[2]!)).toEqual(Array.from(gc.buffers[2]!))
    }
    same(5, 1)
    same(5, 2)
    // an ancilla of 2²¹ doubles grows the memory shared with the gradient's program
    wasm!.big!(1, 2 ** 21)
    same(5, 3)
    same(7, 4)
    same(3, 5)
    gw.release()
    same(3, 6)
    same(0, 7)
    same(4, 8)
  })
})
