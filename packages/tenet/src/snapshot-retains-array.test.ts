/**
 * (Review 20a.) A module keeps no reference to the arrays passed to it where nothing needs one:
 * a view of a large buffer passed once to a one-array function is collected with its buffer after
 * the caller drops it, checks on and off (a first version of the generated call remembered the
 * last array passed as its snapshot's key, and with it the whole buffer).
 */
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { describe, expect, it } from 'vitest'
import { rev } from './index.js'

setFlagsFromString('--expose-gc')
const gc = runInNewContext('gc') as () => void
const settle = async (): Promise<void> => {
  for (let r = 0; r < 3; r++) {
    await new Promise((resolve) => setTimeout(resolve, 0))
    gc()
  }
}

describe('what a module keeps of the arrays passed to it', () => {
  it('checks on: a view of a 64 MiB buffer passed once is not kept alive by the module', async () => {
    const m = rev.with({ checks: true })`fn f(x: f64[]) { x[0] += 1.0 }`
    let ref: WeakRef<ArrayBuffer> | undefined
    ;(() => {
      const buf = new ArrayBuffer(64 << 20)
      ref = new WeakRef(buf)
      const x = new Float64Array(buf, 0, 4)
      m.f(x)
      expect(x[0]).toBe(1)
    })()
    await settle()
    expect(ref!.deref() === undefined).toBe(true)
    expect((m.f!(Float64Array.of(1))[0] as Float64Array)[0]).toBe(2)
  })

  it('checks off: not kept either', async () => {
    const m = rev.with({ checks: false })`fn f(x: f64[]) { x[0] += 1.0 }`
    let ref: WeakRef<ArrayBuffer> | undefined
    ;(() => {
      const buf = new ArrayBuffer(64 << 20)
      ref = new WeakRef(buf)
      m.f(new Float64Array(buf, 0, 4))
    })()
    await settle()
    expect(ref!.deref() === undefined).toBe(true)
    expect((m.f!(Float64Array.of(1))[0] as Float64Array)[0]).toBe(2)
  })
})
