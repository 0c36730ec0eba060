/**
 * Tenet on several threads (`@tenet/parallel`): the GMM gradient with its points sharded over a
 * pool of worker threads plus the calling thread, the shard gradients added in shard order
 * (deterministic: the same bits for any number of threads).
 */
import { availableParallelism } from 'node:os'
import { checkClose, TOLERANCE } from '../harness/check.js'
import { defineRowFamily } from '../harness/registry.js'
import { createGmmParallel } from '../parallel/gmm.js'

const threads = Math.max(2, availableParallelism())

export const parallelRows = defineRowFamily({
  family: 'Tenet (threads)',
  rows: {
    gmm: [
      {
        name: `Tenet (cpu, ${threads} threads)`,
        kind: 'gradient',
        async setup(c) {
          const p = await createGmmParallel(c.inst, threads - 1)
          const out = new Float64Array(c.gradient().length)
          return {
            run: () => void p.gradient(c.inst, out),
            check: () => checkClose(p.gradient(c.inst, out), c.gradient(), TOLERANCE.f64, 'gradient'),
            dispose: () => void p.close(),
          }
        },
      },
    ],
  },
})
