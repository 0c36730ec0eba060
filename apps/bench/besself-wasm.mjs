import * as P from './dist/tenet/programs.js'
import { withBackend } from './dist/tenet/compile.js'
const which = process.env.W || 'wasm'
const f = which === 'wasm' ? withBackend('wasm', () => P.besselFunction()) : P.besselFunction()
const F = f.core
const Z = Number(process.env.Z || 1)
const sink = new Float64Array(1)
for (let rep = 0; rep < 8; rep++) {
  const N = 2e6
  const t0 = process.cpuUsage()
  for (let i = 0; i < N; i++) { F(0, 2, Z); sink[0] += F.results[0] }
  const t1 = process.cpuUsage(t0)
  if (rep > 2) console.log(which, (t1.user * 1000 / N).toFixed(2))
}
