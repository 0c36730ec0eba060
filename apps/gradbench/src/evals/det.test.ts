/** det's small and boundary sizes (the recordings have ℓ = 5…9) against an LU determinant and its finite differences. */
import { describe, expect, it } from 'vitest'
import { det, slotCounts } from './det.js'

function luDet(A: number[], n: number): number {
  const M = A.slice()
  let d = 1
  for (let k = 0; k < n; k++) {
    let p = k
    for (let i = k + 1; i < n; i++) if (Math.abs(M[i * n + k]!) > Math.abs(M[p * n + k]!)) p = i
    if (p !== k) {
      d = -d
      for (let j = 0; j < n; j++) [M[k * n + j], M[p * n + j]] = [M[p * n + j]!, M[k * n + j]!]
    }
    d *= M[k * n + k]!
    for (let i = k + 1; i < n; i++) {
      const f = M[i * n + k]! / M[k * n + k]!
      for (let j = k; j < n; j++) M[i * n + j]! -= f * M[k * n + j]!
    }
  }
  return d
}

describe('det by expansion by minors', () => {
  for (const ell of [1, 2, 3, 4, 6]) {
    it(`ℓ = ${ell}: the determinant and its gradient`, () => {
      const A = Array.from({ length: ell * ell }, (_, i) => Math.sin(i * i * 0.37 + i * 1.3 + 0.3))
      const p = det.primal!({ A, ell })
      p.run()
      expect(p.output() as number).toBeCloseTo(luDet(A, ell), 12)
      const g = det.gradient!({ A, ell })
      g.run()
      const grad = g.output() as number[]
      const h = 1e-6
      for (let i = 0; i < ell * ell; i++) {
        const Ap = A.slice(),
          Am = A.slice()
        Ap[i]! += h
        Am[i]! -= h
        expect(Math.abs(grad[i]! - (luDet(Ap, ell) - luDet(Am, ell)) / (2 * h))).toBeLessThan(1e-7)
      }
    })
  }
  it('keeps about 0.22·ℓ! sub-determinants', () => {
    // Σ_{r=1}^{ℓ−3} ℓ!/(ℓ−r)!: the minors of sizes ℓ−1 down to 3
    expect(slotCounts(11)[0]).toBe(11 + 110 + 990 + 7920 + 55440 + 332640 + 1663200 + 6652800)
    expect(slotCounts(3)[0]).toBe(0)
  })
})
