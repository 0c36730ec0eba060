/**
 * Edge cases of value holders found by an adversarial review (`value-holders.ts`, the adjoint's
 * `readHeldValue` in `transform.ts`).
 */
import { describe, expect, it } from 'vitest'
import { createRegistry, parse } from '@tenet/ir'
import { compileModule } from '@tenet/reversible'
import { cpuBackend } from '@tenet/backend-cpu'
import { wasmBackend } from '@tenet/backend-wasm'
import { grad } from './index.js'

const registry = () => createRegistry().registerBackend(cpuBackend).registerBackend(wasmBackend)
const compile = (text: string, backend: string, checks: boolean) =>
  compileModule(parse({ text, name: 'test' }), { registry: registry(), backend, checks })

describe('value holders', () => {
  // a[t · 2³⁰] is a[0] for t = 0 and for t = 4 (i32 indices wrap); the index polynomial's
  // coefficient 2³⁰ is a positive constant, so the mixed-radix argument (over the integers) takes
  // the update for the only write of each element: the adjoint of t = 4 reads a[0] = tanh(x0) +
  // tanh(x4) as if it were tanh(x4)
  const wrap = `fn f(loss: f64, x: f64[]) {
  routine {
    a: f64[] <- zeros(4)
    for t in 0..5 {
      if (t == 0 || t == 4, ~) { a[t * 1073741824] += tanh(x[t]) }
    }
  }
  loss += a[0] * a[0]
  ~routine
}`
  const x = Float64Array.of(0.3, 0.1, 0.1, 0.1, 0.5)
  const a0 = Math.tanh(0.3) + Math.tanh(0.5)
  // loss = (tanh x0 + tanh x4)²
  const want = [2 * a0 * (1 - Math.tanh(0.3) ** 2), 0, 0, 0, 2 * a0 * (1 - Math.tanh(0.5) ** 2)]
  for (const backend of ['cpu', 'wasm'])
    for (const checks of [true, false])
      for (const fuse of [true, false])
        it(`an element written twice through a wrapping i32 index is no holder (${backend}, checks ${checks ? 'on' : 'off'}, ${fuse ? 'fused' : 'two sweeps'})`, () => {
          const m = compile(wrap, backend, checks)
          expect((m.f!(0, x.slice()) as unknown[])[0]).toBeCloseTo(a0 * a0, 14)
          const g = grad(m.f!, { loss: 0, fuse })(0, x.slice()) as unknown[]
          const got = Array.from(g[1] as Float64Array)
          for (let k = 0; k < 5; k++) expect([k, got[k]]).toEqual([k, expect.closeTo(want[k]!, 12)])
        })

  // `s -= sqrt(x)` holds −sqrt(x) as 0 − sqrt(x): for x = +0 that is +0, and the adjoint's −s is
  // −0 where sqrt(x) is +0, so 0.5 / sqrt(x) turns from +∞ into −∞ (the doc's "−0 becomes +0"
  // caveat covers `+=` of −0; for `-=` it is `+=`'s everyday +0)
  const sqrtSource = `fn f(loss: f64, x: f64) {
  routine {
    s <- 0.0
    s -= sqrt(x)
  }
  loss += s
  ~routine
}`
  for (const backend of ['cpu', 'wasm'])
    it(`d(−sqrt x)/dx at x = 0 is −∞, as as before value holders and fused (${backend}, checks off, two sweeps)`, () => {
      const m = compile(sqrtSource, backend, false)
      expect((grad(m.f!, { loss: 0, fuse: true })(0, 0) as number[])[1]).toBe(Number.NEGATIVE_INFINITY)
      expect((grad(m.f!, { loss: 0, fuse: false })(0, 0) as number[])[1]).toBe(Number.NEGATIVE_INFINITY)
    })
})
