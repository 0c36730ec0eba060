/**
 * Gradient functions on wasm keep their work arrays in the module's memory: a dropped one must
 * give them back (FinalizationRegistry), `dispose()` at once, and a gradient array still held
 * keeps its memory. The test forces garbage collections (`--expose-gc` set at run time).
 */
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { describe, expect, it } from 'vitest'
import { createRegistry, parse, type TenetError } from '@tenet/ir'
import { compileModule } from '@tenet/reversible'
import { wasmBackend } from '@tenet/backend-wasm'
import { compileAdjoint, compileFused, grad } from './index.js'

setFlagsFromString('--expose-gc')
const gc = runInNewContext('gc') as () => void

/** Collects garbage and lets the finalizers run. */
async function collect(): Promise<void> {
  for (let k = 0; k < 3; k++) {
    gc()
    await new Promise((resolve) => setTimeout(resolve, 0))
  }
}

const N = 20_000
const x = Float64Array.from({ length: N }, (_, i) => Math.sin(i))
const y = x.map((v) => 3 * v)

/** A fresh module (its own memory and free list), its gradient's memory size, and one-shot gradients. */
function setup() {
  const m = compileModule(
    parse({ text: 'fn f(loss: f64, x: f64[]) { for i in 0..len(x) { loss += x[i] * x[i] } }', name: 'fin' }),
    { registry: createRegistry().registerBackend(wasmBackend), backend: 'wasm' },
  )
  /** The size of the linear memory of the module that runs the gradient (the fused program's) now. */
  const memoryBytes = (): number => {
    const r = (compileFused(m.f!, 0) ?? compileAdjoint(m.f!).adjoint).core.resident!.allocate('f64', 0)
    const bytes = r.array.buffer.byteLength
    r.release()
    return bytes
  }
  /** One gradient function, used once (at \`at\`) and dropped; checks its result. */
  const oneGradient = (at = x): void => {
    const g = grad(m.f!, { loss: 0 })
    const gx = g(0, at)[1] as Float64Array
    expect(gx[N - 1]).toBe(2 * at[N - 1]!)
    expect(gx[17]).toBe(2 * at[17]!)
  }
  return { m, memoryBytes, oneGradient }
}

describe('the memory of gradient functions on wasm', () => {
  it('dropped gradient functions give their arrays back when collected: 600 of them fit in the memory of a few', async () => {
    const { memoryBytes, oneGradient } = setup()
    oneGradient()
    await collect()
    const start = memoryBytes()
    // each holds 2 × 160 kB (values and gradients): without finalization, 600 of them need 190 MB
    for (let round = 0; round < 12; round++) {
      for (let k = 0; k < 50; k++) oneGradient()
      await collect()
    }
    expect(memoryBytes() - start).toBeLessThan(16 * 2 ** 20)
  })

  it('a gradient array still held keeps its memory; dispose() frees at once and later calls are ad/disposed', async () => {
    const { m, memoryBytes, oneGradient } = setup()
    // blocks on the free list first, so that nothing below grows the memory (which would detach
    // every view, the held one included, as the README says)
    let warm: unknown[] = Array.from({ length: 6 }, () => {
      const g = grad(m.f!, { loss: 0 })
      g(0, x)
      return g
    })
    expect(warm.length).toBe(6)
    warm = []
    await collect()
    const bytes = memoryBytes()
    // only the gradient array survives this function, not the gradient function
    const held = (): Float64Array => grad(m.f!, { loss: 0 })(0, x)[1] as Float64Array
    const kept = held()
    const copy = kept.slice()
    await collect()
    for (let round = 0; round < 5; round++) {
      // (at other values: a freed block reused by them would change the held gradient)
      for (let k = 0; k < 3; k++) oneGradient(y)
      await collect()
    }
    expect(memoryBytes()).toBe(bytes)
    expect(kept.length).toBe(N)
    expect(kept.every((v, i) => v === copy[i])).toBe(true)
    const before = memoryBytes()
    for (let k = 0; k < 100; k++) {
      const h = grad(m.f!, { loss: 0 })
      h(0, x)
      h.dispose()
      try {
        h(0, x)
        expect.unreachable()
      } catch (e) {
        expect((e as TenetError).code).toBe('ad/disposed')
      }
    }
    expect(memoryBytes() - before).toBeLessThan(4 * 2 ** 20)
  })
})
