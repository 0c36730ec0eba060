import { expect, it } from 'vitest'
import { createRegistry, parse } from '@tenet/ir'
import { compileModule, interpreterBackend } from '@tenet/reversible'
import { cpuBackend } from '@tenet/backend-cpu'
import { wasmBackend } from '@tenet/backend-wasm'
import { grad } from './index.js'
import { flatWrt as flat } from './test-util.js'
const text = `
fn main_loss(loss: f64, x: f64[], n: i32, d: i32) {
  routine {
    s <- 0.0
    for t in 0..n {
      routine {
        a, b <- 0.0, 0.0
        a += x[0] * f64(t) + x[1]
        b += a * a
      }
      s += a * b * \${0}(d)
      ~routine
    }
  }
  loss += s * s
  ~routine
}
`
const registry = () =>
  createRegistry().registerBackend(cpuBackend).registerBackend(wasmBackend).registerBackend(interpreterBackend)
const run = (backend: string, fuse: boolean, same: boolean) => {
  const x = Float64Array.of(0.3, -0.7)
  let inner: ((...a: unknown[]) => unknown) | undefined
  let constant = 0
  // h(1): a value computed by a gradient of the same module (reentrant), else the same constant
  const h = (d: number) => {
    if (d > 0 && inner) {
      const r = inner(0, Float64Array.of(0.9, 0.2), 6, 0) as unknown[]
      return 1 + 1e-3 * flat(r, [1])[0]!
    }
    if (d > 0) return constant
    return 1
  }
  const f = compileModule(parse({ text, name: 'r' }, [h]), { registry: registry(), backend, checks: false }).main_loss!
  const g = grad(f, { loss: 0, fuse })
  inner = (same ? g : grad(f, { loss: 0 })) as never
  constant = h(1)
  let reentrant: unknown
  try {
    reentrant = flat(g(0, x, 5, 1) as unknown[], [1])
  } catch (e) {
    reentrant = (e as Error).message
  }
  inner = undefined
  const plain = flat(g(0, x, 5, 1) as unknown[], [1])
  return { reentrant, plain }
}
for (const backend of ['interpreter', 'cpu', 'wasm'])
  it(`a gradient with a stage history re-entered from a host function (another gradient object) on ${backend}`, () => {
    for (const fuse of [true, false]) {
      const { reentrant, plain } = run(backend, fuse, false)
      expect(reentrant).toEqual(plain)
    }
  })
// (was silently wrong at 96820fd: the inner call overwrote the outer call's buffers)
for (const backend of ['interpreter', 'cpu', 'wasm'])
  it(`the same gradient object re-entered from its own host function throws ad/reentrant, and works after, on ${backend}`, () => {
    for (const fuse of [true, false]) {
      const { reentrant, plain } = run(backend, fuse, true)
      expect(reentrant).toMatch(/was called again from inside its own call/)
      // (after the refused call the object works: the same values as a separate object gives)
      expect(plain).toEqual(run(backend, fuse, false).plain)
    }
  })
