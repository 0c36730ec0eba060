import { createRegistry, parse } from '@tenet/ir'
import { compileModule } from '@tenet/reversible'
import { wasmBackend as newWasm } from '@tenet/backend-wasm'
import { wasmBackend as baseWasm } from '/tmp/relrun/base/packages/backend-wasm/dist/index.js'
import { grad, graphEmbeddingSource, graphEmbeddingArgs, unitarySource, sparseDotSource } from './dist/index.js'
const compile = (src, be) => compileModule(parse({ text: src, name: 'b' }), { registry: createRegistry().registerBackend(be), backend: 'wasm', checks: false })
const work = {
  'graph-embedding grad (k=10)': (be) => {
    const m = compile(graphEmbeddingSource, be); const k = 10
    const x = Float64Array.from({ length: 10 * k }, (_, i) => Math.sin(1.3 * i)); const args = graphEmbeddingArgs(x, k)
    const g = grad(m.embedding_loss, { loss: 0 }); return () => g.run(...args)
  },
  'unitary umm_loss grad (m=32,n=8)': (be) => {
    const m = compile(unitarySource, be); const M = 32, N = 8
    const x = Float64Array.from({ length: M * N }, (_, i) => Math.cos(i)); const th = Float64Array.from({ length: M * (M - 1) / 2 }, (_, i) => Math.sin(i)); const w = Float64Array.from({ length: M * N }, (_, i) => 1 + (i % 3))
    const g = grad(m.umm_loss, { loss: 0 }); return () => g.run(0, x, th, w, M, N)
  },
  'unitary i_umm forward (m=32,n=8)': (be) => {
    const m = compile(unitarySource, be); const M = 32, N = 8
    const x = Float64Array.from({ length: M * N }, (_, i) => Math.cos(i)); const th = Float64Array.from({ length: M * (M - 1) / 2 }, (_, i) => Math.sin(i))
    const f = m.i_umm.core; return () => f(x, th, M, N)
  },
}
const time = (fn) => { for (let i = 0; i < 200; i++) fn(); let n = 0; const t0 = performance.now(); let t = t0; while (t - t0 < 300) { for (let i = 0; i < 50; i++) fn(); n += 50; t = performance.now() } return (t - t0) / n * 1e3 }
for (const [name, mk] of Object.entries(work)) {
  const fb = mk(baseWasm), fn = mk(newWasm); const rb = [], rn = []
  for (let r = 0; r < (+process.env.ROUNDS || 5); r++) { rb.push(time(fb)); rn.push(time(fn)) }
  const ratios = rn.map((v, i) => v / rb[i]).sort((a, b) => a - b)
  console.log(`${name}: base ${Math.min(...rb).toFixed(2)} µs, bounds-checked ${Math.min(...rn).toFixed(2)} µs (min); per-round ratio new/base ${ratios.map((r) => r.toFixed(3)).join(' ')}`)
}
