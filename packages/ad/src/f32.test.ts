import { describe, expect, it } from 'vitest'
import { gradient } from './index.js'
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
    const c = Math.cos(0.5), s = Math.sin(0.5)
    // after ROT, y' = c·y − s·a with y = (sin 0.25 + sin 1)·a²
    const S = Math.sin(0.25) + Math.sin(1)
    expect(g[1]).toBeCloseTo(c * 2 * 0.5 * S - s, 5)
    expect(g[2]).toBeInstanceOf(Float32Array)
    expect((g[2] as Float32Array)[1]).toBeCloseTo(c * Math.cos(1) * 0.25, 5)
  })
})
