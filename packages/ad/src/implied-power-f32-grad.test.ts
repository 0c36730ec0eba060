/**
 * Review 18 (d) of pass `implied-checks` (`@tenet/ir`), checks on, in gradient programs: in an f32
 * expression `h ** 1e-50` evaluates `h ** 0`, which is 1 for h = ±∞ or NaN, so the power's check
 * passes, and the check of h that it is taken to decide — the one that fails on the reference
 * interpreter — is left out. The gradient on cpu and wasm returns numbers (fused) or raises
 * `ad/uncompute` (two sweeps) where the interpreter raises h's `runtime/dealloc`.
 */
import { describe, expect, it } from 'vitest'
import { cpuBackend } from '@tenet/backend-cpu'
import { createWasmBackend } from '@tenet/backend-wasm'
import { createRegistry, parse } from '@tenet/ir'
import { compileModule, interpreterBackend, type TenetModule } from '@tenet/reversible'
import { raisedError } from '@tenet/testing'
import { grad } from './index.js'

const text = (T: 'f32' | 'f64', c: string) => `
fn pw(out: ${T}, x: ${T}) {
  h: ${T} <- 0.0
  h += x / 2.0
  p: ${T} <- 0.0
  p += h ** ${c}
  out += p * x
  p -= h ** ${c}
  p -> 0.0
  h -= x / 2.0
  h -> 0.0
}
`
const make = (backend: string, source: string): TenetModule =>
  compileModule(parse({ text: source, name: `review18d-${backend}` }), {
    registry: createRegistry()
      .registerBackend(cpuBackend)
      .registerBackend(createWasmBackend())
      .registerBackend(interpreterBackend),
    backend,
    checks: true,
  })

/** The gradients' outcomes (fused and two sweeps) on `backend`, for x. */
const outcomes = (backend: string, source: string, x: number) => {
  const f = make(backend, source).pw!
  return [true, false].map((fuse) => raisedError(() => grad(f, { loss: 0, fuse })(0, x)).split('\n')[0])
}

describe('review18-d: implied-checks in gradient programs, h ** c', () => {
  it("f32 h ** 1e-50 at x = ±∞, NaN: the gradients raise h's check, as the interpreter's", () => {
    const src = text('f32', '1e-50')
    for (const x of [Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, Number.NaN]) {
      const want = outcomes('interpreter', src, x)
      expect(want[0]).toMatch(/^runtime\/dealloc \| cannot deallocate `h`/)
      for (const backend of ['cpu', 'wasm']) expect(outcomes(backend, src, x), `${backend} x=${x}`).toEqual(want)
    }
  })

  it('holds: f64 h ** 2.5 at x = ∞, NaN, 1e200 (the power overflows), 3', () => {
    const src = text('f64', '2.5')
    for (const x of [Number.POSITIVE_INFINITY, Number.NaN, 1e200, 3]) {
      const want = outcomes('interpreter', src, x)
      for (const backend of ['cpu', 'wasm']) expect(outcomes(backend, src, x), `${backend} x=${x}`).toEqual(want)
    }
  })
})
