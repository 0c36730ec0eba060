import { createRegistry, parse } from '@tenet/ir'
import { compileModule } from '@tenet/reversible'
import { cpuBackend } from '@tenet/backend-cpu'
import * as ad from '@tenet/ad'
const registry = createRegistry().registerBackend(cpuBackend)
const which = process.argv[2]
const src = which === 'merge' ? ad.sparseDotMergeSource : ad.sparseDotSource
const name = which === 'merge' ? 'sparse_dot_merge' : 'sparse_dot'
const m = compileModule(parse({ text: src, name: 'x' }), { registry, backend: 'cpu', checks: false })
const p = ad.planGradient(m[name], { loss: 0 })
const f = p.fused
const info = f[Symbol.for('tenet.function')]
console.log(info.compiled.sourceOf(info.name, false))
