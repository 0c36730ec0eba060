/** Review 14d: `call/length` at the other argument checks (vjp's borrowed arrays). */
import { describe, expect, it } from 'vitest'
import { createRegistry, parse, TenetError } from '@tenet/ir'
import { compileModule, interpreterBackend } from '@tenet/reversible'
import { cpuBackend } from '@tenet/backend-cpu'
import { wasmBackend } from '@tenet/backend-wasm'
import { hornerLossSource } from '@tenet/testing'
import { grad, vjp } from './index.js'

const source = `
fn f(y: f64, b: bool[], u: f64[]) {
  for i in 1..3 { u[len(b) + i] += u[i - 1] * 2.0 }
  y += u[0] * u[1]
}
`
describe('review 14d: vjp with borrowed arrays', () => {
  it('an array longer than 2^31 − 1 that f only reads is refused (call/length)', () => {
    const m = compileModule(parse({ text: source, name: 'length' }), {
      registry: createRegistry().registerBackend(interpreterBackend).registerBackend(cpuBackend),
      backend: 'cpu',
      checks: true,
    })
    const long = new Uint8Array(2 ** 31)
    const rule = vjp(m.f as never, { wrt: [2], outputs: [0], borrow: true })
    let code: string | undefined
    try {
      rule(0, long, Float64Array.from([1, 2, 3, 4]))
      code = 'no error'
    } catch (e) {
      code = TenetError.isInstance(e) ? e.code : `not a TenetError: ${String(e)}`
    }
    expect(code).toBe('call/length')
  })
})

describe('review 14d: value holders whose index coefficient is a multiple of 2^32', () => {
  const source = `
fn f(loss: f64, x: f64[]) {
  routine {
    h: f64[] <- zeros(1)
    for k in 0..len(x) { h[65536 * 65536 * k] += tanh(x[k]) }
  }
  loss += h[0] * h[0]
  ~routine
}`
  const x = Float64Array.of(0.5, 1, 1.5)
  // loss = (Σ tanh x_k)², ∂/∂x_k = 2 (Σ tanh) (1 − tanh² x_k)
  const s = Array.from(x).reduce((a, v) => a + Math.tanh(v), 0)
  const want = Array.from(x, (v) => 2 * s * (1 - Math.tanh(v) ** 2))
  for (const backend of ['interpreter', 'cpu'])
    for (const checks of [true, false])
      it(`every iteration writes h[0] (65536·65536 wraps to 0), ${backend}, checks ${checks}`, () => {
        const m = compileModule(parse({ text: source, name: 'holders' }), {
          registry: createRegistry().registerBackend(interpreterBackend).registerBackend(cpuBackend),
          backend,
          checks,
        })
        const g = grad(m.f as never, { loss: 0 }) as unknown as (...a: unknown[]) => unknown[]
        const got = Array.from(g(0, x.slice())[1] as Float64Array)
        for (let j = 0; j < x.length; j++) expect([j, got[j]]).toEqual([j, expect.closeTo(want[j]!, 10)])
      })
})

describe('review 14d: gradients on wasm without checks after a call that dirties memory', () => {
  const sources = [
    // the bench kernel's Horner least squares, entry named `f`
    hornerLossSource.replace('fn horner_loss(', 'fn f('),
    `fn f(loss: f64, c: f64[], xs: f64[], ys: f64[]) {
  routine {
    h: f64[] <- zeros(len(xs) + 1)
    h[0] += c[0]
    for t in 0..len(xs) { h[t + 1] += h[t] * c[1] + xs[t] * xs[t] - ys[t] }
  }
  for t in 0..len(xs) { loss += h[t + 1] * h[t + 1] }
  ~routine
}`,
  ]
  const reg = () =>
    createRegistry().registerBackend(interpreterBackend).registerBackend(cpuBackend).registerBackend(wasmBackend)
  const exactText = (r: unknown[]) =>
    JSON.stringify(
      r.map((v) =>
        ArrayBuffer.isView(v) ? Array.from(v as Float64Array, (x) => (Object.is(x, -0) ? '-0' : String(x))) : String(v),
      ),
    )
  for (const [i, source] of sources.entries())
    for (const fuse of [true, false])
      it(`program ${i}, ${fuse ? 'fused' : 'two sweeps'}: the interpreter's gradient bit for bit`, () => {
        const g = (backend: string) =>
          grad(
            compileModule(parse({ text: source, name: `g${i}` }), { registry: reg(), backend, checks: false })
              .f as never,
            { loss: 0, fuse },
          ) as unknown as (...a: unknown[]) => unknown[]
        const want = g('interpreter')
        const wasm = g('wasm')
        const dirty = (n: number) => Float64Array.from({ length: n }, (_, k) => [Number.NaN, 1e308, -0, -1e308][k % 4]!)
        for (const [n, m] of [
          [3, 2],
          [5, 4],
          [2, 1],
          [2, 0],
        ]) {
          try {
            wasm(0, dirty(300), dirty(300), dirty(300))
          } catch {}
          const args = () => [
            0,
            Float64Array.from({ length: n }, (_, k) => 0.5 - k / 4),
            Float64Array.from({ length: m }, (_, k) => 1.25 - k / 8),
            Float64Array.from({ length: m }, (_, k) => k / 3),
          ]
          expect(exactText(wasm(...args())), `${n} ${m}`).toBe(exactText(want(...args())))
        }
      })
})
