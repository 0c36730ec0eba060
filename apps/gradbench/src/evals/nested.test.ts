/**
 * The nested derivatives of particle and saddle, in every (outer, inner) mode, against central
 * finite differences of the objectives they differentiate; the modes agree with each other.
 */
import { describe, expect, it } from 'vitest'
import { finiteDifference } from '@tenet/testing'
import { particleFunctions } from './particle.js'
import { saddleFunctions } from './saddle.js'

const MODES = [
  ['r', 'r'],
  ['f', 'f'],
  ['f', 'r'],
  ['r', 'f'],
] as const

describe('particle: d cost / d w through the trajectory and the inner gradient', () => {
  for (const [outer, inner] of MODES) {
    it(`${outer}${inner} matches central differences`, () => {
      const f = particleFunctions(outer, inner)
      for (const w of [0, 0.1, 0.25]) {
        const [fd] = finiteDifference(([v]: number[]) => f.cost(v!), [w], 1e-6)
        const ad = f.derivative(w)
        expect(Math.abs(ad - fd)).toBeLessThan(1e-6 * Math.max(1, Math.abs(fd)))
      }
    })
  }
  it('the four modes give the same derivative to rounding', () => {
    const ds = MODES.map(([o, i]) => particleFunctions(o, i).derivative(0.05))
    for (const d of ds) expect(d).toBeCloseTo(ds[0]!, 10)
  })
})

describe('saddle: ∇F for F(p₁) = max over p₂ of f(p₁, p₂), through the inner ascent', () => {
  const start = Float64Array.from([1, 1])
  for (const [outer, inner] of MODES) {
    it(`${outer}${inner} matches central differences of the replayed ascent`, () => {
      const s = saddleFunctions(outer, inner)
      const F = s.outer(start)
      const a = Float64Array.from([0.7, -0.3])
      const g = new Float64Array(2)
      F.gradient(a, g)
      // F(p₁) = p₁·p₁ − p₂*·p₂*, where the ascent's path does not depend on p₁: ∇F = 2 p₁
      expect(g[0]).toBeCloseTo(1.4, 10)
      expect(g[1]).toBeCloseTo(-0.6, 10)
      const fd = finiteDifference((v) => F.value(Float64Array.from(v)), a, 1e-6)
      for (let i = 0; i < 2; i++) expect(Math.abs(g[i]! - fd[i]!)).toBeLessThan(1e-6)
    })
  }
})
