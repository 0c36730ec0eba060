import { checkClose, lazy } from '../harness/check.js'
import type { CaseSpec, Workload } from '../harness/types.js'
import { finiteDifferenceGradient } from '../math/finite-difference.js'
import { createRng } from '../math/prng.js'
import {
  unitaryGradientPlain,
  unitaryLossPlain,
  unitaryStepInversePlain,
  unitaryStepPlain,
} from '../objectives/unitary.js'

export interface UnitaryCase {
  M: number
  N: number
  theta: Float64Array
  x: Float64Array
  /** loss weights: L = Σ c ⊙ U(θ)x */
  c: Float64Array
  gradient: () => { gx: Float64Array; theta: Float64Array }
}

export const unitaryWorkload: Workload<UnitaryCase> = {
  id: 'unitary',
  title: 'Unitary matrix multiply (Givens decomposition)',
  description:
    'x ← U(θ)x for an M × N matrix with M(M−1)/2 rotation angles (paper 000 Listing 14); inverse and gradient of Σ c ⊙ U(θ)x.',
  cases: (o): CaseSpec<UnitaryCase>[] =>
    (o.full
      ? [
          [16, 16],
          [64, 64],
          [128, 32],
        ]
      : [
          [16, 16],
          [64, 64],
        ]
    ).map(([M, N]) => ({
      label: `M=${M} N=${N}`,
      params: { M, N, angles: (M * (M - 1)) / 2 },
      make: () => {
        const rng = createRng(M * 1000 + N)
        const theta = Float64Array.from({ length: (M * (M - 1)) / 2 }, rng.normal)
        const x = Float64Array.from({ length: M * N }, rng.normal)
        const c = Float64Array.from({ length: M * N }, rng.normal)
        return { M, N, theta, x, c, gradient: lazy(() => unitaryGradientPlain(x, M, N, theta, c)) }
      },
    })),
  baseline: {
    name: 'plain TS objective',
    setup(c) {
      const x = c.x.slice()
      return { run: () => unitaryStepPlain(x, c.M, c.N, c.theta) }
    },
  },
  rows: [
    {
      name: 'plain TS (hand-derived)',
      family: 'plain TS',
      kind: 'inverse',
      setup(c) {
        const x = c.x.slice()
        return {
          run: () => unitaryStepInversePlain(x, c.M, c.N, c.theta),
          check: () => {
            const y = c.x.slice()
            unitaryStepPlain(y, c.M, c.N, c.theta)
            unitaryStepInversePlain(y, c.M, c.N, c.theta)
            return checkClose(y, c.x, 1e-12, 'x after U⁻¹U')
          },
        }
      },
    },
    {
      name: 'plain TS (reversible, no tape)',
      family: 'plain TS',
      kind: 'gradient',
      setup(c) {
        const out = {
          x: new Float64Array(c.x.length),
          theta: new Float64Array(c.theta.length),
          gx: new Float64Array(c.x.length),
        }
        return {
          run: () => void unitaryGradientPlain(c.x, c.M, c.N, c.theta, c.c, out),
          check: () => {
            const g = unitaryGradientPlain(c.x, c.M, c.N, c.theta, c.c, out)
            const scratch = new Float64Array(c.x.length)
            const fd = finiteDifferenceGradient(
              (t) => unitaryLossPlain(c.x, c.M, c.N, t, c.c, scratch),
              c.theta.slice(),
            )
            return checkClose(g.theta, fd, 1e-6, '∂L/∂θ')
          },
        }
      },
    },
  ],
}
