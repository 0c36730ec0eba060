/**
 * The host boundary refuses an array argument longer than 2³¹ − 1 (`call/length`): `len(a)` is an
 * i32, and the compilers prove bounds and aliasing with that (an adversarial review found checks
 * that `proven-bounds` left out for a 2³² − 1 element `bool[]`, whose `len` wraps to −1). Each test
 * allocates a 2 GiB `Uint8Array` that nothing touches (no pages are written).
 */
import { describe, expect, it } from 'vitest'
import { createRegistry, parse, TenetError } from '@tenet/ir'
import { compileModule, interpreterBackend } from '@tenet/reversible'
import { cpuBackend } from '@tenet/backend-cpu'
import { wasmBackend } from '@tenet/backend-wasm'
import { grad } from './index.js'

const registry = () =>
  createRegistry().registerBackend(interpreterBackend).registerBackend(cpuBackend).registerBackend(wasmBackend)
const source = `
fn f(y: f64, b: bool[], u: f64[]) {
  for i in 1..3 { u[len(b) + i] += u[i - 1] * 2.0 }
  y += u[0] * u[1]
}
`
const compiled = (backend: string, checks: boolean) =>
  compileModule(parse({ text: source, name: 'length' }), { registry: registry(), backend, checks })

function raised(run: () => unknown): TenetError {
  try {
    run()
  } catch (e) {
    if (TenetError.isInstance(e)) return e
    throw e
  }
  throw new Error('no error')
}

describe('array arguments longer than 2³¹ − 1', () => {
  const long = new Uint8Array(2 ** 31)
  for (const backend of ['interpreter', 'cpu', 'wasm'])
    for (const checks of [true, false]) {
      it(`are refused before anything runs (${backend}, checks ${checks ? 'on' : 'off'})`, () => {
        const m = compiled(backend, checks)
        const u = Float64Array.from([1, 2, 3, 4])
        const f = m.f as (...a: unknown[]) => unknown
        for (const call of [
          () => f(0, long, u),
          () => (f as unknown as { inverse: (...a: unknown[]) => unknown }).inverse(0, long, u),
        ]) {
          const e = raised(call)
          expect(e.code).toBe('call/length')
          expect(e.message).toMatch(
            /argument 2 \(`b: bool\[\]`\) of `f` has 2147483648 elements; an array argument holds at most 2³¹ − 1/,
          )
          expect(Array.from(u)).toEqual([1, 2, 3, 4])
        }
        // an array of an allowed length runs
        const short = new Uint8Array(0)
        expect(() => f(0, short, Float64Array.from([1, 2, 3, 4]))).not.toThrow()
      })
      it(`are refused by the gradient (${backend}, checks ${checks ? 'on' : 'off'})`, () => {
        const g = grad(compiled(backend, checks).f as never, { loss: 0 }) as unknown as (...a: unknown[]) => unknown
        const e = raised(() => g(0, long, Float64Array.from([1, 2, 3, 4])))
        expect(e.code).toBe('call/length')
        // the same function runs with a short array
        expect(() => g(0, new Uint8Array(0), Float64Array.from([1, 2, 3, 4]))).not.toThrow()
      })
    }
})
