/**
 * Pass `jam` (`@tenet/ir`) on the unitary multiply of paper 000 (Listing 14, column-major
 * x[i + m·l]) and its gradient: compiled with the pass and without it (`disabledPasses`), on the
 * cpu and wasm backends with checks off, the objective and the gradient agree bit for bit, for
 * odd and even numbers of rotations per row (the pass's leftover iteration). The gradient is also
 * checked against central finite differences.
 */
import { describe, expect, it } from 'vitest'
import { wasmBackend } from '@tenet/backend-wasm'
import { disabledPasses } from '@tenet/ir/backend'
import { createRegistry, examples, grad, rev, TENET_FUNCTION, type TenetModule } from './index.js'

const registry = createRegistry().registerBackend(wasmBackend)
const source = `${examples.ummSource}
fn umm_loss(loss: f64, x: f64[], theta: f64[], c: f64[], m: i32, n: i32) {
  i_umm(x, theta, m, n)
  for i in 0..len(x) { loss += c[i] * x[i] }
}`
let fresh = 0
/** A fresh module (nothing cached) on `backend`, checks off, with `jam` on or off. */
function compile(backend: 'cpu' | 'wasm', jam: boolean): TenetModule {
  const tag = rev.with({ checks: false, backend, registry })
  const text = `${source}\n// ${fresh++}`
  if (!jam) disabledPasses.add('jam')
  try {
    const m = tag(Object.assign([text], { raw: [text] }) as unknown as TemplateStringsArray)
    // compile now, while the switch holds
    m.i_umm!(new Float64Array(2), new Float64Array(1), 2, 1)
    return m
  } finally {
    if (!jam) disabledPasses.delete('jam')
  }
}

function normals(n: number, seed: number): Float64Array {
  let s = seed
  const next = () => {
    s = (Math.imul(s, 1103515245) + 12345) | 0
    return ((s >>> 8) & 0xffff) / 0x10000 - 0.5
  }
  return Float64Array.from({ length: n }, next)
}

const sameBits = (a: Float64Array | Float32Array, b: Float64Array | Float32Array) =>
  a.length === b.length && a.every((v, i) => Object.is(v, b[i]))

describe('pass `jam` on the unitary multiply and its gradient', () => {
  for (const backend of ['cpu', 'wasm'] as const) {
    it(`${backend}: the objective and the gradient are the un-jammed code's, bit for bit`, () => {
      const on = compile(backend, true),
        off = compile(backend, false)
      if (backend === 'cpu') {
        // the switch holds: the generated code differs
        const text = (m: TenetModule) => m.i_umm![TENET_FUNCTION].compiled.sourceOf?.('i_umm', false)
        expect(text(on)).not.toBe(text(off))
      }
      for (const [M, N] of [
        [5, 3],
        [6, 4],
        [16, 16],
      ] as const) {
        const theta = normals((M * (M - 1)) / 2, M),
          x = normals(M * N, M + 1),
          c = normals(M * N, M + 2)
        const xa = x.slice(),
          xb = x.slice()
        on.i_umm!(xa, theta, M, N)
        off.i_umm!(xb, theta, M, N)
        expect(sameBits(xa, xb)).toBe(true)
        const gOn = grad(on.umm_loss!, { loss: 0 }),
          gOff = grad(off.umm_loss!, { loss: 0 })
        gOn.run(0, x.slice(), theta, c, M, N)
        gOff.run(0, x.slice(), theta, c, M, N)
        for (const b of [1, 2, 3]) expect(sameBits(gOn.buffers[b]!, gOff.buffers[b]!)).toBe(true)
        // and right: θ's gradient against central differences of the objective
        const loss = (t: Float64Array) => {
          const y = x.slice()
          off.i_umm!(y, t, M, N)
          return y.reduce((s, v, i) => s + v * c[i]!, 0)
        }
        for (const q of [0, theta.length - 1]) {
          const h = 1e-6,
            tp = theta.slice(),
            tm = theta.slice()
          tp[q]! += h
          tm[q]! -= h
          expect(gOn.buffers[2]![q]).toBeCloseTo((loss(tp) - loss(tm)) / (2 * h), 6)
        }
      }
    })
  }
})
