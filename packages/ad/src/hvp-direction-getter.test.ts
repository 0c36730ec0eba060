/**
 * In a file of its own (a fresh wasm memory, which the inner call
 * must grow): hvp with a direction whose element getter runs another hvp.
 */
import { expect, it } from 'vitest'
import { createRegistry, parse } from '@tenet/ir'
import { compileModule } from '@tenet/reversible'
import { wasmBackend } from '@tenet/backend-wasm'
import { hvp } from './index.js'

const registry = () => createRegistry().registerBackend(wasmBackend)

// (user code while hvp runs: a direction whose element getter runs an hvp of its own. The kept
// driver is busy and no call of the memory is under way; the inner call's allocation grows the
// memory, which detached the outer driver's views, and seeds written into them were lost: hvp
// now reads the direction before it starts, and the inner driver, not kept, holds host arrays.)
it('hvp whose direction getter runs another hvp (growing the wasm memory) keeps every seed', () => {
  const m = compileModule(
    parse({ text: 'fn f(loss: f64, x: f64[]) { for i in 0..len(x) { loss += x[i] * x[i] * x[i] } }', name: 'r' }),
    { registry: registry(), backend: 'wasm', checks: false },
  )
  const x = Float64Array.of(0.5, -1, 2)
  const want = hvp(m.f!, [0, x], { loss: 0, v: [0, [1, 2, 3]] })
  let fired = false
  const dir = new Proxy([1, 2, 3], {
    get(t, k, r) {
      if (!fired && k === '2') {
        fired = true
        const n = 1 << 20
        hvp(m.f!, [0, Float64Array.from({ length: n }, (_, i) => Math.sin(i))], {
          loss: 0,
          v: [0, new Float64Array(n).fill(1)],
        })
      }
      return Reflect.get(t, k, r)
    },
  })
  const got = hvp(m.f!, [0, x], { loss: 0, v: [0, dir] })
  expect(fired).toBe(true)
  // (want: [3, -12, 36]; got: [3, -12, 0], the seed of element 2 written into a detached view)
  expect(Array.from(got[1] as Float64Array)).toEqual(Array.from(want[1] as Float64Array))
})
