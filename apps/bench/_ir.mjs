import { grad, TENET_FUNCTION } from 'tenet'
import * as P from './dist/tenet/programs.js'
import { withBackend } from './dist/tenet/compile.js'
withBackend('cpu', () => {
  const fs = P.besselBatchFunctions()
  const g = grad(fs.sum, { loss: 0 })
  const a = g.adjoint
  const info = a[TENET_FUNCTION]
  for (const n of ['ibesselj_batch$adj', 'ibesselj$adj', 'ibesselj', 'ibesselj_batch']) { try { console.log(n, info.compiled.sourceOf?.(n, false)) } catch (e) { console.log(n, 'none') } }
})
