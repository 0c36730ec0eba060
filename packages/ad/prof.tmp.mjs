import { createRegistry, parse } from '@tenet/ir'
import { compileModule } from '@tenet/reversible'
import { cpuBackend } from '@tenet/backend-cpu'
import * as ad from './dist/index.js'
const m = compileModule(parse({ text: ad.graphEmbeddingSource, name: 'b' }), { registry: createRegistry().registerBackend(cpuBackend), backend: 'cpu', checks: false })
const k = 10
const x = Float64Array.from({ length: 10 * k }, (_, i) => Math.sin(1.7 * i + k) + 0.3 * Math.cos(i * i))
const hargs = ad.graphEmbeddingArgs(x, k)
for (const w of [4, 8, 16]) {
  let t = 0
  for (let i = 0; i < 30; i++) ad.hessian(m.embedding_loss, hargs, { loss: 0, wrt: [1], width: w })
  const t0 = performance.now(); const N = 200
  for (let i = 0; i < N; i++) ad.hessian(m.embedding_loss, hargs, { loss: 0, wrt: [1], width: w })
  console.log(w, ((performance.now() - t0) / N * 1000).toFixed(1), 'us')
}
