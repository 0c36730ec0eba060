import { grad } from 'tenet'
import * as P from './dist/tenet/programs.js'
import { withBackend } from './dist/tenet/compile.js'
const which = process.argv[2] ?? 'wasm'
const kind = process.argv[3] ?? 'gradient'
const n = 100000
const zs = Float64Array.from({ length: n }, (_, i) => 0.1 + (2.9 * i) / n)
const out = new Float64Array(n)
const run = withBackend(which, () => {
  const fs = P.besselBatchFunctions()
  if (kind === 'gradient') { const g = grad(fs.sum, { loss: 0 }); return () => g.run(0, out, 2, zs) }
  const F = fs.batch.core
  return () => { out.fill(0); F(out, 2, zs) }
})
for (let i = 0; i < 5; i++) run()
const ts = []
for (let r = 0; r < 15; r++) { const t0 = performance.now(); run(); ts.push(performance.now() - t0) }
ts.sort((a, b) => a - b)
console.log(which, kind, 'median ms', ts[7].toFixed(2), 'min', ts[0].toFixed(2))
