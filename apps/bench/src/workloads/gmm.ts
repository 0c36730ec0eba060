import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { generateGmm, gmmParameterCount, readGmm, type GmmInstance } from '../data/gmm-data.js'
import { lazy } from '../harness/check.js'
import type { CaseOptions, CaseSpec, Workload } from '../harness/types.js'
import { createRng } from '../math/prng.js'
import {
  createGmmWorkspace,
  gmmGradientPlain,
  gmmObjectivePlain,
  gmmPackParameters,
  gmmWithParameters,
} from '../objectives/gmm.js'

export interface GmmCase {
  inst: GmmInstance
  /** float64 objective (plain TS) */
  objective: () => number
  /** float64 gradient, ADBench order (plain TS, hand-derived, validated against FD and ADBench) */
  gradient: () => Float64Array
}

export function gmmCase(inst: GmmInstance): GmmCase {
  return {
    inst,
    objective: lazy(() => gmmObjectivePlain(inst)),
    gradient: lazy(() => gmmGradientPlain(inst)),
  }
}

const QUICK: [number, number, number][] = [
  [2, 5, 1000],
  [10, 25, 10000],
]
// ADBench's grid: d ∈ {2, 10, 20, 32} × K ∈ {5, 10, 25, 50, 100, 200} × n ∈ {1000, 10000}
const FULL: [number, number, number][] = [1000, 10000].flatMap((n) =>
  [2, 10, 20, 32].flatMap((d) => [5, 10, 25, 50, 100, 200].map((k): [number, number, number] => [d, k, n])),
)

function cases(options: CaseOptions): CaseSpec<GmmCase>[] {
  const sizes = options.full ? FULL : QUICK
  return sizes.flatMap(([d, k, n]): CaseSpec<GmmCase>[] => {
    const label = `d=${d} K=${k} n=${n >= 1000 ? `${n / 1000}k` : n}`
    if (options.adbenchDir) {
      const path = join(
        options.adbenchDir,
        'gmm',
        n === 1000 ? '1k' : n === 10000 ? '10k' : `${n}`,
        `gmm_d${d}_K${k}.txt`,
      )
      if (!existsSync(path)) return []
      return [{ label, params: { d, k, n, source: path }, make: () => gmmCase(readGmm(path)) }]
    }
    return [
      {
        label,
        params: { d, k, n, parameters: gmmParameterCount(d, k) },
        make: () => gmmCase(generateGmm({ d, k, n, seed: 1000 * d + k })),
      },
    ]
  })
}

/**
 * Directional finite-difference check of a gradient: g·u against (f(x+hu) − f(x−hu))/2h for a
 * random unit u — two objective evaluations, affordable on every case.
 */
export function directionalCheck(c: GmmCase, g: Float64Array): { ok: boolean; error: number } {
  const x = gmmPackParameters(c.inst)
  const rng = createRng(7)
  const u = Float64Array.from({ length: x.length }, rng.normal)
  let norm = 0
  for (const v of u) norm += v * v
  norm = Math.sqrt(norm)
  let dot = 0
  for (let i = 0; i < u.length; i++) dot += (u[i] /= norm) * g[i]
  const h = 1e-6
  const f = (s: number): number =>
    gmmObjectivePlain(
      gmmWithParameters(
        c.inst,
        x.map((v, i) => v + s * u[i]),
      ),
    )
  const fd = (f(h) - f(-h)) / (2 * h)
  const error = Math.abs(dot - fd) / Math.max(1, Math.abs(fd))
  return { ok: error < 1e-5, error }
}

export const gmmWorkload: Workload<GmmCase> = {
  id: 'gmm',
  title: 'Gaussian mixture model (ADBench)',
  description:
    "ADBench's GMM objective (log-sum-exp over components, Wishart prior) and its gradient with respect to alphas, means and inverse-covariance factors.",
  cases,
  baseline: {
    name: 'plain TS objective',
    setup(c) {
      const ws = createGmmWorkspace(c.inst.d, c.inst.k)
      return { run: () => void gmmObjectivePlain(c.inst, ws) }
    },
  },
  rows: [
    {
      name: 'plain TS (hand-derived)',
      family: 'plain TS',
      kind: 'gradient',
      setup(c) {
        const ws = createGmmWorkspace(c.inst.d, c.inst.k)
        const out = new Float64Array(gmmParameterCount(c.inst.d, c.inst.k))
        return {
          run: () => void gmmGradientPlain(c.inst, out, ws),
          check: () => directionalCheck(c, gmmGradientPlain(c.inst, out, ws)),
        }
      },
    },
  ],
}
