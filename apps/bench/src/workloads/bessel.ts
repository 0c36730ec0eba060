import { checkClose, lazy } from '../harness/check.js'
import type { CaseSpec, Workload } from '../harness/types.js'
import {
  besselJDerivative,
  besselJListing,
  besselJPlain,
  besselJSecondDerivative,
  besselTermCount,
  factorial,
  powInt,
} from '../objectives/bessel.js'
import { finiteDifferenceGradient } from '../math/finite-difference.js'
import { createRng } from '../math/prng.js'

/** A batch of different z (throughput case): J, J′, J″ at every z, lazily, by the recurrences. */
export interface BesselBatch {
  zs: Float64Array
  /** J_ν(z_i) by the series with atol 1e-8 (the objective's own answer) */
  value: () => Float64Array
  derivative: () => Float64Array
  second: () => Float64Array
}

export interface BesselCase {
  nu: number
  /** the single z (the first of the batch in the batch case) */
  z: number
  /** J'_ν(z) and J''_ν(z) by the recurrences (full precision) */
  derivative: number
  second: number
  /** present in the batch case: rows work on every z of it (gradient of Σ J(z_i), i.e. J′(z_i) each) */
  batch?: BesselBatch
}

/** Batch size of the throughput case. */
export const BESSEL_BATCH = 100_000

/** z uniformly in [0.1, 3] (z = 0 would make the series' ratio vanish in `imul`'s division). */
export function besselBatch(n: number, nu: number, seed = 2): BesselBatch {
  const rng = createRng(seed)
  const zs = Float64Array.from({ length: n }, () => 0.1 + 2.9 * rng.uniform())
  return {
    zs,
    value: lazy(() => zs.map((z) => besselJPlain(nu, z))),
    derivative: lazy(() => zs.map((z) => besselJDerivative(nu, z))),
    second: lazy(() => zs.map((z) => besselJSecondDerivative(nu, z))),
  }
}

/**
 * Timed results are added here, so their work is never dead code: a typed array, since a module
 * variable holds a double as a heap number and allocated a box on every store (about 5 ns, which
 * the single-z Bessel baseline counted: 8.4 ns with the array, so every ratio to it read low).
 */
const sink = new Float64Array(1)

/** The series with a fixed number of terms after the first (smooth in z, unlike the atol stop). */
function besselJTerms(nu: number, z: number, terms: number): number {
  const half = z / 2
  let s = powInt(half, nu) / factorial(nu)
  let out = s
  for (let k = 1; k <= terms; k++) {
    s *= -(half * half) / (k * (k + nu))
    out += s
  }
  return out
}

/**
 * Central differences at every z of the series truncated where the atol stop truncates it at z
 * (differencing across a change of the term count would pick up its jump).
 */
function finiteDifferenceBatch(
  nu: number,
  zs: Float64Array,
  terms: Int32Array,
  out: Float64Array,
  h = 1e-6,
): Float64Array {
  for (let i = 0; i < zs.length; i++)
    out[i] = (besselJTerms(nu, zs[i]! + h, terms[i]!) - besselJTerms(nu, zs[i]! - h, terms[i]!)) / (2 * h)
  return out
}

export const besselWorkload: Workload<BesselCase> = {
  id: 'bessel',
  title: 'Bessel J₂(z) by its series',
  description:
    'The first-kind Bessel function by its Taylor series with atol = 1e-8 (the paper’s `besselj`), its derivative and second derivative at z = 1; and a throughput case over a batch of 10⁵ different z ∈ [0.1, 3] (objective and J′, J″ at every z; the baseline is the plain-TS loop over the batch).',
  cases: (): CaseSpec<BesselCase>[] => [
    {
      label: 'ν=2 z=1.0',
      params: { nu: 2, z: 1 },
      make: () => ({ nu: 2, z: 1, derivative: besselJDerivative(2, 1), second: besselJSecondDerivative(2, 1) }),
    },
    {
      label: `ν=2 batch of 10⁵ z`,
      params: { nu: 2, batch: BESSEL_BATCH },
      make: () => {
        const batch = besselBatch(BESSEL_BATCH, 2)
        const z = batch.zs[0]!
        return { nu: 2, z, derivative: besselJDerivative(2, z), second: besselJSecondDerivative(2, z), batch }
      },
    },
  ],
  baseline: {
    name: 'plain TS objective',
    setup: (c) => {
      const b = c.batch
      if (!b) return { run: () => void (sink[0] += besselJPlain(c.nu, c.z)) }
      const out = new Float64Array(b.zs.length)
      return {
        run: () => {
          for (let i = 0; i < b.zs.length; i++) out[i] = besselJPlain(c.nu, b.zs[i]!)
          sink[0] += out[0]!
        },
      }
    },
  },
  rows: [
    {
      // the Tenet listing's own arithmetic by hand (approximate multipliers, residues carried):
      // how close the generated code comes to it, where the baseline does less arithmetic
      name: 'plain TS (the listing’s arithmetic)',
      family: 'plain TS',
      kind: 'objective',
      setup(c) {
        const b = c.batch
        if (b) {
          const out = new Float64Array(b.zs.length)
          const run = () => {
            for (let i = 0; i < b.zs.length; i++) out[i] = besselJListing(c.nu, b.zs[i]!)
          }
          return {
            run: () => {
              run()
              sink[0] += out[0]!
            },
            check: () => {
              run()
              return checkClose(out, b.value(), 1e-8, 'J')
            },
          }
        }
        return {
          run: () => void (sink[0] += besselJListing(c.nu, c.z)),
          check: () => checkClose([besselJListing(c.nu, c.z)], [besselJPlain(c.nu, c.z)], 1e-10, 'J'),
        }
      },
    },
    {
      name: 'plain TS (finite differences)',
      family: 'plain TS',
      kind: 'gradient',
      setup(c) {
        const b = c.batch
        if (b) {
          const out = new Float64Array(b.zs.length)
          const terms = Int32Array.from(b.zs, (z) => besselTermCount(c.nu, z))
          return {
            run: () => void finiteDifferenceBatch(c.nu, b.zs, terms, out),
            check: () => checkClose(finiteDifferenceBatch(c.nu, b.zs, terms, out), b.derivative(), 1e-7, 'dJ/dz'),
          }
        }
        const x = Float64Array.of(c.z)
        const f = (v: Float64Array) => besselJPlain(c.nu, v[0])
        return {
          run: () => void (sink[0] += finiteDifferenceGradient(f, x, 1e-6)[0]),
          check: () => checkClose(finiteDifferenceGradient(f, x, 1e-6), [c.derivative], 1e-7, 'dJ/dz'),
        }
      },
    },
  ],
}
