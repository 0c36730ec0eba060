import { describe, expect, it } from 'vitest'
import { trainAdam, trainNewton } from './embedding-training.js'

describe('Petersen embedding training (paper 001): Tenet gradient and Hessian', () => {
  it('Adam (lr 0.01) reaches loss ≈ 0 with l₂/l₁ = √2 at k = 5, and not at k = 3', () => {
    const k5 = trainAdam(5, 5000)
    expect(k5.finalLoss).toBeLessThan(1e-6)
    expect(k5.ratio).toBeCloseTo(Math.SQRT2, 3)
    const k3 = trainAdam(3, 5000)
    expect(k3.finalLoss).toBeGreaterThan(1e-2)
    // and the loss went down along the way
    expect(k5.history.at(-1)![1]).toBeLessThan(k5.history[0]![1])
  })

  it('damped Newton with the exact Tenet Hessian converges at k = 5 in a few tens of Hessians', () => {
    const r = trainNewton(5, { maxHessians: 60 })
    expect(r.finalLoss).toBeLessThan(1e-20)
    expect(r.hessians).toBeLessThanOrEqual(60)
    expect(r.ratio).toBeCloseTo(Math.SQRT2, 6)
  })
})
