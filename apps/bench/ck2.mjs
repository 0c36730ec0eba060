import { rev, createRegistry } from 'tenet'
import { tenetStep } from '../../packages/checkpoint/dist/index.js'
const { wasmBackend } = await import('/work/wt-wasmrows/packages/backend-wasm/dist/index.js')
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
const n = 100, N = 20000
const buf = new ArrayBuffer(8 * n * 3)
const a = new Float64Array(buf, 0, n), b = new Float64Array(buf, 8 * n, n), c = new Float64Array(buf, 16 * n, n)
const sa = new Float64Array(n), sb = new Float64Array(n)
for (let rep = 0; rep < 3; rep++)
for (const [k, f] of [['cpu', cpu], ['wasm', wasm]]) {
  const s = tenetStep(f, [0.2])
  let t = performance.now(); for (let r = 0; r < N; r++) s.forward(a, b, 1); const fw = (performance.now() - t) / N * 1e3
  t = performance.now(); for (let r = 0; r < N; r++) f.core(a, b, 0.2); const core = (performance.now() - t) / N * 1e3
  t = performance.now(); for (let r = 0; r < N; r++) f.core(sa, sb, 0.2); const core2 = (performance.now() - t) / N * 1e3
  t = performance.now(); for (let r = 0; r < N; r++) { s.vjp(a, b, c, 1); } const vj = (performance.now() - t) / N * 1e3
  t = performance.now(); for (let r = 0; r < N; r++) { s.vjp(sa, sb, a, 1); } const vj2 = (performance.now() - t) / N * 1e3
  console.log(k, 'forward', fw.toFixed(2), 'core views', core.toFixed(2), 'core own arrays', core2.toFixed(2), 'vjp views', vj.toFixed(2), 'vjp own', vj2.toFixed(2), 'µs')
}
