import { describe, expect, it } from 'vitest'
import { compileAdjoint, grad, gradient } from './index.js'
import { tag } from './test-util.js'

describe.each(['cpu', 'interpreter'] as const)('arguments held constant (%s)', (backend) => {
  const rev = tag({ backend })
  const m = rev`
    fn sq(out: f64, a: f64, d: f64) { out += (a - d) * (a - d) }
    fn inner(out: f64, x: f64[], d: f64[]) { for i in 0..len(x) { sq(out, x[i], d[i]) } }
    fn fit(out: f64, x: f64[], data: f64[], w: f64) {
      for i in 0..len(x) { out += (x[i] * w - data[i]) * (x[i] * w - data[i]) }
      inner(out, x, data)
    }
    fn rot(a: f64, b: f64, t: f64) { ROT(a, b, t) }
    fn rec(out: f64, x: f64, c: f64, n: i32) {
      if (n > 0, ~) {
        out += x * c
        rec(out, x, c, n - 1)
      }
    }
    fn writes(out: f64, x: f64, c: f64) { c += x; out += c * c; c -= x }`
  const x = Float64Array.of(0.5, -1, 2),
    data = Float64Array.of(1, 0.25, -0.5)

  it('no gradient for them, the same gradients for the others (updates, calls, whole arrays)', () => {
    const all = gradient(m.fit!, [0, x, data, 1.5], { loss: 0 })
    const held = gradient(m.fit!, [0, x, data, 1.5], { loss: 0, constants: [2] })
    expect(held[2]).toBeNull()
    expect(Array.from(held[1] as Float64Array)).toEqual(Array.from(all[1] as Float64Array))
    expect(held[3]).toBe(all[3])
    const both = grad(m.fit!, { loss: 0, constants: [2, 3] })(0, x, data, 1.5)
    expect(both[3]).toBeNull()
    expect(Array.from(both[1] as Float64Array)).toEqual(Array.from(all[1] as Float64Array))
    // the adjoint has no gradient parameter for them
    const adj = compileAdjoint(m.fit!, 1, [2, 3]).adjoint
    expect(adj.ir.params.map((p) => p.name)).toEqual(['out', 'x', 'data', 'w', 'g_out', 'g_x', 'g$sink'])
  })

  it('a bijection reading one (the angle of ROT), and recursion passing it on', () => {
    const all = gradient(m.rot!, [1, 2, 0.7], { loss: 0 })
    expect(gradient(m.rot!, [1, 2, 0.7], { loss: 0, constants: [2] })).toEqual([all[0], all[1], null])
    const r = gradient(m.rec!, [0, 2, 3, 4], { loss: 0, constants: [2] })
    expect(r).toEqual([1, 12, null, null])
  })

  it('the plan says why the two-sweep program runs (constants; stack parameters)', () => {
    const plan = grad(m.fit!, { loss: 0, constants: [2] }).plan
    expect(plan.program).toBe('two-sweep')
    expect(plan.toString()).toMatch(/held constant/)
    const s = rev`fn f(out: f64, x: f64, st: stack<f64>) { out += x * x; push(st, x) }`
    expect(grad(s.f!, { loss: 0, mode: 'reverse' }).plan.toString()).toMatch(/stack parameter/)
  })

  it('only arguments the function only reads; never the loss', () => {
    expect(() => gradient(m.writes!, [0, 1, 2], { loss: 0, constants: [2] })).toThrow(
      /written by `writes`, so it cannot be held constant/,
    )
    expect(() => gradient(m.fit!, [0, x, data, 1], { loss: 0, constants: [0] })).toThrow(
      /loss .* cannot be held constant/,
    )
    expect(() => gradient(m.rec!, [0, 2, 3, 4], { loss: 0, constants: [3] })).toThrow(/not a float scalar or array/)
    expect(() => gradient(m.rot!, [1, 2, 0.7], { loss: 0, constants: [2], mode: 'forward' })).toThrow(/reverse mode/)
  })
})
