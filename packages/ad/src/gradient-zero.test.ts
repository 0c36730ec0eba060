/**
 * A scalar ancilla's gradient starts at +0.0 (\`gradientZero\` of transform.ts: -0.0 would let a
 * first update be the value alone, but a zero gradient's sign then reaches the caller, see
 * \`gradient-zero-sign.test.ts\`); the RK4 kernel's gradients (stages uncomputed every step, the
 * stage history allocating each stage at its stored element) are bit for bit the interpreter's and
 * agree with central differences, with checks on and off.
 */
import { describe, expect, it } from 'vitest'
import { printFunction } from '@tenet/ir'
import { lvSource, rk4LossSource } from '@tenet/testing/programs'
import { AdjointBuilder } from './transform.js'
import { registryPartials } from './expr.js'
import { grad } from './index.js'
import { infoOf } from './compile.js'
import { expectClose, tag } from './test-util.js'

const text = `${lvSource}\n${rk4LossSource}`
const args = (): unknown[] => [0, Float64Array.of(1.2, 0.8), Float64Array.of(1.1, 0.4, 0.4, 0.1), 0.01, 20]

/** x·y after `steps` RK4 steps of the Lotka–Volterra system, in plain JS, for central differences. */
function rk4(x0: Float64Array, p: Float64Array, h: number, steps: number): number {
  const lv = (x: number, y: number) => [p[0]! * x - p[1]! * x * y, p[3]! * x * y - p[2]! * y] as const
  let [x, y] = [x0[0]!, x0[1]!]
  for (let t = 0; t < steps; t++) {
    const a = lv(x, y)
    const b = lv(x + (h / 2) * a[0], y + (h / 2) * a[1])
    const c = lv(x + (h / 2) * b[0], y + (h / 2) * b[1])
    const e = lv(x + h * c[0], y + h * c[1])
    x += (h / 6) * (a[0] + 2 * b[0] + 2 * c[0] + e[0])
    y += (h / 6) * (a[1] + 2 * b[1] + 2 * c[1] + e[1])
  }
  return x * y
}

describe('the zero of a scalar gradient', () => {
  it('is +0.0 where the adjoint allocates the gradient of a scalar ancilla (printed)', () => {
    const m = tag({ checks: true })`fn f(s: f64, x: f64[]) {
  routine { t <- 0.0; t += x[0] * x[1] }
  s += sin(t)
  ~routine
}`
    const info = infoOf(m.f!)
    const registry = info.registry.clone()
    const b = new AdjointBuilder(info.program, info.inverses, registry, registryPartials(registry, info.program.hosts))
    const name = b.request('f', false)
    const adjoint = printFunction(b.build().find((x) => x.name === name)!)
    // t's gradient: allocated where t is freed, freed (into the sink) where t is allocated
    expect(adjoint).toMatch(/g_t: f64 <- 0\.0/)
    expect(adjoint).toMatch(/g_t -> 0\.0/)
    expect(adjoint).not.toMatch(/-0\.0/)
  })

  for (const checks of [false, true])
    it(`gives the interpreter's gradients bit for bit, and central differences (RK4, checks ${checks ? 'on' : 'off'})`, () => {
      const cpu = grad(tag({ checks })(text).rk4_loss!, { loss: 0 })
      const ref = grad(tag({ checks, backend: 'interpreter' })(text).rk4_loss!, { loss: 0 })
      const a = cpu(...args()),
        b = ref(...args())
      for (const k of [1, 2, 3]) {
        const x = a[k] as number | Float64Array,
          y = b[k] as number | Float64Array
        const xs = typeof x === 'number' ? [x] : Array.from(x),
          ys = typeof y === 'number' ? [y] : Array.from(y)
        expect(xs.map((v, i) => Object.is(v, ys[i]))).toEqual(xs.map(() => true))
      }
      // central differences in x0, p and h
      const [, x0, p, h] = args() as [number, Float64Array, Float64Array, number]
      const d = 1e-6
      const fd = (f: (e: number) => number) => (f(d) - f(-d)) / (2 * d)
      const at = (v: Float64Array, i: number, e: number) => {
        const w = Float64Array.from(v)
        w[i]! += e
        return w
      }
      expectClose(
        a[1] as Float64Array,
        [0, 1].map((i) => fd((e) => rk4(at(x0, i, e), p, h, 20))),
        1e-6,
      )
      expectClose(
        a[2] as Float64Array,
        [0, 1, 2, 3].map((i) => fd((e) => rk4(x0, at(p, i, e), h, 20))),
        1e-6,
      )
      expectClose([a[3] as number], [fd((e) => rk4(x0, p, h + e, 20))], 1e-6)
    })
})
