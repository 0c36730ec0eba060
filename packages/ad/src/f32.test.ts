import { describe, expect, it } from 'vitest'
import { gradient, hessian, jvp } from './index.js'
import { tag } from './test-util.js'

describe.each(['cpu', 'interpreter'] as const)('f32 programs (%s)', (backend) => {
  it('gradients of f32 scalars and arrays are f32', () => {
    const m = tag({ backend })`fn f(y: f32, a: f32, x: f32[]) {
      t: f32 <- 0.0
      t += a * a
      for i in 0..len(x) { y += sin(x[i]) * t }
      t -= a * a
      t -> 0.0
      ROT(y, a, 0.5)
    }`
    const g = gradient(m.f!, [0, 0.5, Float32Array.from([0.25, 1])], { loss: 0 })
    const c = Math.cos(0.5),
      s = Math.sin(0.5)
    // after ROT, y' = c·y − s·a with y = (sin 0.25 + sin 1)·a²
    const S = Math.sin(0.25) + Math.sin(1)
    expect(g[1]).toBeCloseTo(c * 2 * 0.5 * S - s, 5)
    expect(g[2]).toBeInstanceOf(Float32Array)
    expect((g[2] as Float32Array)[1]).toBeCloseTo(c * Math.cos(1) * 0.25, 5)
  })

  it('mixed f32 and f64: derivatives cross the conversions in both modes (each side in its own precision)', () => {
    const m = tag({ backend })`fn up(y: f64, x: f32, z: f32) { y += f64(x * z) * 2.0 + f64(x) }
      fn down(y: f32, x: f64) { y += f32(x * x) }`
    const [x, z] = [Math.fround(1.5), Math.fround(-0.75)]
    const g = gradient(m.up!, [0, x, z], { loss: 0 })
    expect(g[1]).toBeCloseTo(2 * z + 1, 6)
    expect(g[2]).toBeCloseTo(2 * x, 6)
    expect(jvp(m.up!, [0, x, z], { v: [0, 1, 1] }).tangent[0]).toBeCloseTo(2 * z + 1 + 2 * x, 6)
    for (const mode of ['reverse', 'forward'] as const)
      expect(gradient(m.down!, [0, 0.3], { loss: 0, mode })[1]).toBeCloseTo(0.6, 6)
    expect(jvp(m.down!, [0, 0.3], { v: [0, 1] }).tangent[0]).toBeCloseTo(0.6, 6)
    expect(hessian(m.down!, [0, 0.3], { loss: 0, wrt: [1] })[0]).toBeCloseTo(2, 6)
  })
})
