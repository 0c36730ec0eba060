import { rev, createRegistry, checkpointedGradient } from 'tenet'
import { tenetStep } from '../../packages/checkpoint/dist/index.js'
import { wasmBackend } from '@tenet/backend-wasm'
const reg = createRegistry().registerBackend(wasmBackend)
const src = `
fn diffusion(dest: f64[], src: f64[], c: f64) {
  n: i32 <- len(src)
  for i in 0..n {
    dest[i] += src[i] + c * (src[(i + 1) % n] + src[(i + n - 1) % n] - 2.0 * src[i])
  }
  n -> len(src)
}`
const tag = (o) => rev.with(o)(Object.assign([src], { raw: [src] }))
const cpu = tag({ checks: false }).diffusion
const wasm = tag({ checks: false, backend: 'wasm', registry: reg }).diffusion
const n = 100, T = +process.argv[2] || 1000
const s0 = Float64Array.from({ length: n }, (_, i) => Math.exp(-((i - 40) ** 2) / 50) + 0.1 * Math.sin(i))
const seed = Float64Array.from({ length: n }, (_, i) => Math.cos(i / 7))
for (let rep = 0; rep < 3; rep++)
for (const [k, f] of [['cpu', cpu], ['wasm', wasm]]) {
  const N = 20
  let t = performance.now(); for (let r = 0; r < N; r++) checkpointedGradient(f, s0, T, { schedule: 'store-all', seed, args: [0.2] }); const all = (performance.now() - t) / N
  t = performance.now(); for (let r = 0; r < N; r++) tenetStep(f, [0.2]); const ts = (performance.now() - t) / N
  console.log(k, 'store-all', all.toFixed(2), 'ms; tenetStep', ts.toFixed(3), 'ms')
}
