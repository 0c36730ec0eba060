/**
 * Tenet rows for higher orders (seed 002 §III): the k-th derivative of the Bessel function by
 * Taylor mode (one sweep carrying k + 1 coefficients) against the same derivative by nesting
 * the tangent (forward-mode) transform k times, and the graph-embedding Hessian by the
 * second-order adjoint (reverse-over-forward) beside `hessian`'s forward-over-reverse row.
 * cpu backend, `checks: false`, like the other Tenet rows.
 */
import { compileNestedTangent, compileTaylor, hessian, type TenetFunction } from 'tenet'
import { checkClose } from '../harness/check.js'
import { defineRowFamily } from '../harness/registry.js'
import type { NotApplicable, PreparedRow } from '../harness/types.js'
import { besselTermCount, factorial } from '../objectives/bessel.js'
import { PETERSEN_E1 as E1, PETERSEN_E2 as E2 } from '../objectives/graph-embedding.js'
import * as P from '../tenet/programs.js'
import type { BesselCase } from '../workloads/bessel.js'

const sink = new Float64Array(1)

/**
 * J_ν⁽ᵏ⁾(z) of the series truncated where the program truncates it (`besselTermCount` terms after
 * the first), differentiated term by term: the reference for the rows.
 */
export function besselTruncatedDerivative(nu: number, z: number, k: number): number {
  const M = besselTermCount(nu, z)
  let s = 0
  for (let m = 0; m <= M; m++) {
    const p = 2 * m + nu
    if (k > p) continue
    let c = 1
    for (let i = 0; i < k; i++) c *= p - i
    s += ((m % 2 === 0 ? 1 : -1) / (factorial(m) * factorial(m + nu)) / 2 ** p) * c * z ** (p - k)
  }
  return s
}

/**
 * Tolerances of the checks: the paper's program keeps its approximate multiplier's rounding
 * residue in a dirty ancilla and divides it by the later factors of the series, harmless for
 * J but amplified in high derivatives (measured against the term-by-term derivatives: 1e-10 at
 * k = 2, 4e-8 at k = 4, 4e-3 at k = 8, the same for Taylor mode and nested tangents where both run).
 */
const TOL: Record<number, number> = { 2: 1e-8, 4: 1e-6, 8: 1e-2 }

/** A direct caller of a compiled core with a fixed positional argument array (no spread per call). */
function caller(core: (...a: unknown[]) => void, argv: unknown[]): () => void {
  // identifiers only: no user text reaches the generated source
  return new Function('F', 'a', `return function call() { F(${argv.map((_, j) => `a[${j}]`).join(', ')}) }`)(
    core,
    argv,
  ) as () => void
}

function taylorRow(k: number) {
  return {
    name: `Tenet Taylor mode (J⁽${k}⁾)`,
    kind: 'higher-order' as const,
    setup(c: BesselCase): PreparedRow | NotApplicable {
      if (c.batch) return { na: 'single z only' }
      const ct = compileTaylor(P.besselFunction(), k)
      const out = ct.slots[0]!.index,
        z = ct.slots[2]!.index
      const argv: unknown[] = new Array(3 + 2 * k).fill(0)
      argv[1] = c.nu
      argv[2] = c.z
      argv[z] = 1
      const core = ct.taylor.core
      const call = caller(core, argv)
      const fk = factorial(k)
      const value = () => {
        call()
        return core.results[out + k - 1]! * fk
      }
      return {
        run: () => void (sink[0] += value()),
        check: () => {
          const r = checkClose([value()], [besselTruncatedDerivative(c.nu, c.z, k)], TOL[k]!, `J^(${k})`)
          return { ...r, reason: r.reason ?? `one Taylor sweep of order ${k}` }
        },
      }
    },
  }
}

function nestedRow(k: number) {
  return {
    name: `Tenet nested forward (J⁽${k}⁾)`,
    kind: 'higher-order' as const,
    setup(c: BesselCase): PreparedRow | NotApplicable {
      if (c.batch) return { na: 'single z only' }
      if (k > 4) {
        // measured: 0.3 s for k = 1 … 4 together, 56 s for k = 5, out of memory (4 GB heap) after 6 min for k = 8
        return {
          na: `nesting the tangent transform ${k} times does not compile in reasonable time or memory (each level multiplies the program by about 8)`,
        }
      }
      const { fn, layout } = compileNestedTangent(P.besselFunction() as TenetFunction, k)
      const all = (1 << k) - 1
      const argv = layout.map(([p, levels]) =>
        levels === 0 ? [0, c.nu, c.z][p] : p === 2 && (levels & (levels - 1)) === 0 ? 1 : 0,
      )
      const at = layout.findIndex(([p, levels]) => p === 0 && levels === all)
      const core = fn.core
      const call = caller(core, argv)
      const value = () => {
        call()
        return core.results[at]!
      }
      return {
        run: () => void (sink[0] += value()),
        check: () => {
          const r = checkClose([value()], [besselTruncatedDerivative(c.nu, c.z, k)], TOL[k]!, `J^(${k})`)
          return {
            ...r,
            reason: r.reason ?? `the tangent transform nested ${k} times (${layout.length} scalar arguments)`,
          }
        },
      }
    },
  }
}

export const tenetHigherOrderRows = defineRowFamily({
  family: 'Tenet',
  rows: {
    bessel: [2, 4, 8].flatMap((k) => [taylorRow(k), nestedRow(k)]),
    'graph-embedding': [
      {
        name: 'Tenet second-order adjoint',
        kind: 'hessian',
        setup(c) {
          const f = P.embeddingFunction()
          const args = [
            0,
            c.x,
            new Float64Array(15),
            new Float64Array(15),
            new Float64Array(30),
            new Float64Array(30),
            c.k,
            E1,
            E2,
          ]
          const h = () => hessian(f, args, { loss: 0, wrt: [1], method: 'reverse-over-forward' })
          return {
            run: () => void (sink[0] += h()[0]!),
            check: () => {
              const r = checkClose(h(), c.hessian(), 1e-6, 'Hessian')
              return {
                ...r,
                reason: r.reason ?? 'reverse-over-forward: one reverse sweep of the tangent program per column',
              }
            },
          }
        },
      },
    ],
  },
})
