import { withBackend } from './dist/tenet/compile.js'
import { createGmmTenet } from './dist/tenet/gmm.js'
import { generateGmm } from './dist/data/gmm-data.js'
const [d, k, n] = (process.argv[2] ?? '2,5,1000').split(',').map(Number)
const inst = generateGmm({ d, k, n, seed: 1 })
for (const b of ['cpu', 'wasm', 'cpu', 'wasm']) {
  const t = withBackend(b, () => createGmmTenet(d, k))
  for (const kind of ['objective', 'gradient']) {
    const f = kind === 'objective' ? () => t.objective(inst) : () => t.gradient(inst)
    for (let i = 0; i < 5; i++) f()
    const ts = []
    for (let r = 0; r < 21; r++) { const t0 = performance.now(); f(); ts.push(performance.now() - t0) }
    ts.sort((a, b) => a - b)
    console.log(b, kind, 'median', ts[10].toFixed(3), 'ms  min', ts[0].toFixed(3))
  }
}
