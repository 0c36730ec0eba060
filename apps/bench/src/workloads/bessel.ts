import { checkClose } from '../harness/check.js'
import type { Workload } from '../harness/types.js'
import { besselJDerivative, besselJPlain, besselJSecondDerivative } from '../objectives/bessel.js'
import { finiteDifferenceGradient } from '../math/finite-difference.js'

export interface BesselCase {
  nu: number
  z: number
  /** J'_ν(z) and J''_ν(z) by the recurrences (full precision) */
  derivative: number
  second: number
}

let sink = 0

export const besselWorkload: Workload<BesselCase> = {
  id: 'bessel',
  title: 'Bessel J₂(z) by its series',
  description: 'The first-kind Bessel function by its Taylor series with atol = 1e-8 (the paper’s `besselj`), its derivative and second derivative at z = 1.',
  cases: () => [
    {
      label: 'ν=2 z=1.0',
      params: { nu: 2, z: 1 },
      make: () => ({ nu: 2, z: 1, derivative: besselJDerivative(2, 1), second: besselJSecondDerivative(2, 1) }),
    },
  ],
  baseline: {
    name: 'plain TS objective',
    setup: (c) => ({ run: () => void (sink += besselJPlain(c.nu, c.z)) }),
  },
  rows: [
    {
      name: 'plain TS (finite differences)',
      family: 'plain TS',
      kind: 'gradient',
      setup(c) {
        const x = Float64Array.of(c.z)
        const f = (v: Float64Array) => besselJPlain(c.nu, v[0])
        return {
          run: () => void (sink += finiteDifferenceGradient(f, x, 1e-6)[0]),
          check: () => checkClose(finiteDifferenceGradient(f, x, 1e-6), [c.derivative], 1e-7, 'dJ/dz'),
        }
      },
    },
  ],
}

export const besselSink = (): number => sink
