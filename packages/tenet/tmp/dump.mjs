import { createRegistry, parse } from '@tenet/ir'
import { compileModule } from '@tenet/reversible'
import { cpuBackend } from '@tenet/backend-cpu'
import * as ad from '@tenet/ad'
const registry = createRegistry().registerBackend(cpuBackend)
const src = process.argv[2] === 'merge' ? ad.sparseDotMergeSource : ad.sparseDotSource
const name = process.argv[2] === 'merge' ? 'sparse_dot_merge' : 'sparse_dot'
const m = compileModule(parse({ text: src, name: 'x' }), { registry, backend: 'cpu', checks: false })
const info = m[name][Symbol.for('tenet.function')]
console.log(info.compiled.sourceOf(name, false))
