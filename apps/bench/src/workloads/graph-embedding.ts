import { checkClose, lazy } from '../harness/check.js'
import type { CaseSpec, Workload } from '../harness/types.js'
import { finiteDifferenceHessian } from '../math/finite-difference.js'
import { createRng } from '../math/prng.js'
import { embeddingTrainingStudy } from './embedding-training.js'
import { createEmbeddingWorkspace, embeddingGradientPlain, embeddingLossPlain } from '../objectives/graph-embedding.js'

export interface EmbeddingCase {
  k: number
  /** positions, vertex-major (10 × k) */
  x: Float64Array
  loss: () => number
  gradient: () => Float64Array
  /** Hessian by central differences of the exact gradient (row-major 10k × 10k), ~1e-8 accurate */
  hessian: () => Float64Array
}

export function embeddingCase(k: number, seed = 100 + k): EmbeddingCase {
  const rng = createRng(seed)
  const x = Float64Array.from({ length: 10 * k }, rng.normal)
  return {
    k,
    x,
    loss: lazy(() => embeddingLossPlain(x, k)),
    gradient: lazy(() => embeddingGradientPlain(x, k)),
    hessian: lazy(() => finiteDifferenceHessian((p) => embeddingGradientPlain(p, k), x.slice())),
  }
}

/** Timed results are added here, so their work is never dead code (a typed array: a module variable would box every double stored into it). */
const sink = new Float64Array(1)

export const embeddingWorkload: Workload<EmbeddingCase> = {
  id: 'graph-embedding',
  title: 'Petersen graph embedding',
  description:
    'Loss = Var(d(L1)) + Var(d(L2)) + exp(relu(mean d(L1) − mean d(L2) + 0.1)) − 1 over 10 vertices in k dimensions; gradient and Hessian (10k parameters). Study: training with Adam (Tenet gradient) for k = 1..10 and Newton (Tenet Hessian) for k = 5.',
  cases: (o): CaseSpec<EmbeddingCase>[] =>
    (o.full ? [1, 2, 3, 4, 5, 6, 7, 8, 9, 10] : [2, 4, 6, 8, 10]).map((k) => ({
      label: `k=${k}`,
      params: { k, parameters: 10 * k },
      make: () => embeddingCase(k),
    })),
  baseline: {
    name: 'plain TS objective',
    setup(c) {
      const ws = createEmbeddingWorkspace()
      return { run: () => void (sink[0] += embeddingLossPlain(c.x, c.k, ws)) }
    },
  },
  rows: [
    {
      name: 'plain TS (hand-derived)',
      family: 'plain TS',
      kind: 'gradient',
      setup(c) {
        const ws = createEmbeddingWorkspace()
        const out = new Float64Array(c.x.length)
        return {
          run: () => void embeddingGradientPlain(c.x, c.k, out, ws),
          check: () => {
            // central differences of the loss as the independent oracle
            const fd = new Float64Array(c.x.length)
            const x = c.x.slice()
            for (let i = 0; i < x.length; i++) {
              const h = 1e-6
              const xi = x[i]
              x[i] = xi + h
              const fp = embeddingLossPlain(x, c.k)
              x[i] = xi - h
              const fm = embeddingLossPlain(x, c.k)
              x[i] = xi
              fd[i] = (fp - fm) / (2 * h)
            }
            return checkClose(embeddingGradientPlain(c.x, c.k, out, ws), fd, 1e-7, 'gradient')
          },
        }
      },
    },
  ],
  // training (not timed): Adam with the Tenet gradient for k = 1..10, Newton with the Tenet Hessian
  study: (o) => embeddingTrainingStudy(o),
}
