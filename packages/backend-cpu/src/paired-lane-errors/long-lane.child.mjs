// Child process of paired-lane-errors.test.ts: compiles the program of argv[2] (a file) with checks on on
// backend argv[3], runs `batch` on the JSON arguments of argv[4], prints the error's first line.
import { readFileSync } from 'node:fs'
import { createRegistry, parse } from '@tenet/ir'
import { compileModule, interpreterBackend } from '@tenet/reversible'
import { cpuBackend } from '@tenet/backend-cpu'

const [, , file, backend, json] = process.argv
const reg = createRegistry().registerBackend(cpuBackend).registerBackend(interpreterBackend)
const m = compileModule(parse({ text: readFileSync(file, 'utf8'), name: 'p' }), {
  registry: reg,
  backend,
  checks: true,
})
const spec = JSON.parse(json)
const args = spec.map(([kind, values]) => (kind === 'i32' ? Int32Array.from(values) : Float64Array.from(values)))
try {
  m.batch(...args)
  console.log('no error')
} catch (e) {
  console.log(`${e.code ?? ''} ${String(e.message).split('\n')[0]}`)
}
