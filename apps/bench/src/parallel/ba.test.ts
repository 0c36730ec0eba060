import { describe, expect, it } from 'vitest'
import { generateBa } from '../data/ba-data.js'
import { baJacobianPlain } from '../objectives/ba.js'
import { maxScaledError } from '../math/finite-difference.js'
import { createBaJacobianTenet } from '../tenet/ba.js'
import { createBaParallel } from './ba.js'

describe('the BA Jacobian on threads', () => {
  it('gives the one-thread Jacobian bit for bit (observations are independent), and the plain one to 1e-12', async () => {
    // 70 observations in 16 shards of 5 (the last ones short or empty), blocks of 256 inside
    const inst = generateBa({ n: 5, m: 12, p: 70, seed: 11 })
    inst.cams.fill(0, 0, 3) // the first-order Rodrigues branch too
    const par = await createBaParallel(inst, 1)
    try {
      const one = createBaJacobianTenet(inst).run().vals
      const many = par.run().vals
      expect(Array.from(many)).toEqual(Array.from(one))
      expect(maxScaledError(many, baJacobianPlain(inst).vals)).toBeLessThanOrEqual(1e-12)
      // a second run reuses the pool and the Jacobian
      expect(Array.from(par.run().vals)).toEqual(Array.from(one))
    } finally {
      await par.close()
    }
  })
})
