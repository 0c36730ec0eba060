import { existsSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { generateBa, readBa, type BaInstance } from '../data/ba-data.js'
import { checkClose, lazy } from '../harness/check.js'
import type { CaseOptions, CaseSpec, Workload } from '../harness/types.js'
import {
  baJacobianPlain,
  baObjectivePlain,
  createBaJacobian,
  createBaResiduals,
  type BaResiduals,
  type BaSparseJacobian,
} from '../objectives/ba.js'

export interface BaCase {
  inst: BaInstance
  /** quick set beyond ba1: the slow peers (TF.js, jax-js) skip this case */
  peersSkipped?: string
  residuals: () => BaResiduals
  /** float64 Jacobian in ADBench's CSR layout (hand-derived, validated against FD and ADBench) */
  jacobian: () => BaSparseJacobian
}

export function baCase(inst: BaInstance, peersSkipped?: string): BaCase {
  return {
    inst,
    residuals: lazy(() => baObjectivePlain(inst)),
    jacobian: lazy(() => baJacobianPlain(inst)),
    ...(peersSkipped ? { peersSkipped } : {}),
  }
}

const QUICK_PEER_NOTE = 'skipped beyond ba1 in the quick set (a Jacobian takes seconds per call); run with --full'

// ADBench's ba1..ba20 sizes (n cameras, m points, p observations)
const ADBENCH_SIZES: [number, number, number][] = [
  [49, 7776, 31843],
  [21, 11315, 36455],
  [161, 48126, 182072],
  [372, 47423, 204472],
  [257, 65132, 225911],
  [539, 65220, 277273],
  [93, 61203, 287451],
  [88, 64298, 383937],
  [810, 88814, 393775],
  [1197, 126327, 563734],
]

function cases(options: CaseOptions): CaseSpec<BaCase>[] {
  // ba1…ba5 by default (the slow peers only on ba1), every size with --full
  const sizes = options.full ? ADBENCH_SIZES : ADBENCH_SIZES.slice(0, 5)
  const skip = (i: number) => (!options.full && i > 0 ? QUICK_PEER_NOTE : undefined)
  if (options.adbenchDir) {
    const dir = join(options.adbenchDir, 'ba')
    const files = existsSync(dir) ? readdirSync(dir) : []
    return sizes.flatMap(([n, m, p], i) => {
      const name = files.find((f) => f === `ba${i + 1}_n${n}_m${m}_p${p}.txt`)
      if (!name) return []
      const path = join(dir, name)
      return [
        { label: `ba${i + 1} p=${p}`, params: { n, m, p, source: path }, make: () => baCase(readBa(path), skip(i)) },
      ]
    })
  }
  return sizes.map(([n, m, p], i) => ({
    label: `ba${i + 1}-size p=${p}`,
    params: { n, m, p },
    make: () => baCase(generateBa({ n, m, p, seed: i + 1 }), skip(i)),
  }))
}

/** Compare a Jacobian's values with the reference (same CSR pattern required). */
export function checkBaJacobian(c: BaCase, vals: ArrayLike<number>, tolerance: number) {
  return checkClose(vals, c.jacobian().vals, tolerance, 'Jacobian')
}

export const baWorkload: Workload<BaCase> = {
  id: 'ba',
  title: 'Bundle adjustment (ADBench)',
  description:
    "ADBench's BA residuals (Rodrigues rotation, radial distortion, focal length, principal point; weighted) and the sparse Jacobian in ADBench's CSR layout.",
  cases,
  baseline: {
    name: 'plain TS objective',
    setup(c) {
      const out = createBaResiduals(c.inst.p)
      return { run: () => void baObjectivePlain(c.inst, out) }
    },
  },
  rows: [
    {
      name: 'plain TS (hand-derived)',
      family: 'plain TS',
      kind: 'jacobian',
      setup(c) {
        const J = createBaJacobian(c.inst)
        return {
          run: () => void baJacobianPlain(c.inst, J),
          // validated against finite differences and ADBench's values in the tests; here the
          // pattern and a re-run must agree with the cached reference
          check: () => checkBaJacobian(c, baJacobianPlain(c.inst, J).vals, 0),
        }
      },
    },
  ],
}
