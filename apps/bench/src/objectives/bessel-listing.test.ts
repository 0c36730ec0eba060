import { describe, expect, it } from 'vitest'
import { besselFunction } from '../tenet/programs.js'
import { besselJListing, besselJPlain } from './bessel.js'

describe('besselJListing: the paper’s listing in plain TS', () => {
  it('computes what the compiled Tenet program computes, bit for bit, and differs from the plain series in the last bits', () => {
    const F = besselFunction().core
    let differs = 0
    for (const nu of [0, 1, 2, 3, 5]) {
      for (let i = 0; i < 400; i++) {
        const z = 0.1 + (2.9 * i) / 400
        F(0, nu, z)
        expect(besselJListing(nu, z)).toBe(F.results[0])
        const plain = besselJPlain(nu, z)
        if (besselJListing(nu, z) !== plain) differs++
        // (the two loops may stop at different terms, whose size is about the series' atol)
        expect(Math.abs(besselJListing(nu, z) - plain)).toBeLessThan(1e-8)
      }
    }
    // the residues of the approximate multiplier change the answer somewhere: its divisions are needed
    expect(differs).toBeGreaterThan(0)
  })
})
