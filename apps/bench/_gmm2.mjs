import { withBackend } from './dist/tenet/compile.js'
import { createGmmTenet } from './dist/tenet/gmm.js'
import { generateGmm } from './dist/data/gmm-data.js'
const [d, k, n] = (process.argv[2] ?? '2,5,1000').split(',').map(Number)
const b = process.argv[3] ?? 'wasm'
const inst = generateGmm({ d, k, n, seed: 1 })
const t = withBackend(b, () => createGmmTenet(d, k))
const t0 = performance.now(); let c = 0
while (performance.now() - t0 < 4000) { t.gradient(inst); c++ }
console.log(b, 'gradient', ((performance.now() - t0) / c).toFixed(3), 'ms')
