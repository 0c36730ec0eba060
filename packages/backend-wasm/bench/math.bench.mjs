// Benchmark (not a timed test) of the transcendental functions on the wasm backend: computed in
// the module (`math: 'module'`) against the call out to JS (`math: 'import'`: the primitive's
// `evaluate`, a closure calling Math.*), and against an import of the `Math` function itself (a
// user override of the primitive whose `evaluate` is `Math.sin`, so V8 may call it directly).
// Run after building: node packages/backend-wasm/bench/math.bench.mjs [--rounds 5] [--only sin,exp]
// Each row: ns per element of `y[i] += f(x[i])` over 4096 resident elements (checks off), the
// median of the rounds (variants interleaved within a round), and the in-module time over the
// best call out.
import { createRegistry, parse, standardPrimitives } from '@tenet/ir'
import { compileModule } from '@tenet/reversible'
import { createWasmBackend } from '../dist/index.js'

const args = process.argv.slice(2)
const opt = (name, dflt) => { const i = args.indexOf(name); return i >= 0 ? args[i + 1] : dflt }
const rounds = Number(opt('--rounds', '5'))
const only = opt('--only', '')?.split(',').filter(Boolean)

/** name, inputs for x (and z for two-argument functions). */
const CASES = [
  ['sin', (u) => 20 * u - 10], ['cos', (u) => 20 * u - 10], ['tan', (u) => 3 * u - 1.5],
  ['exp', (u) => 40 * u - 20], ['log', (u) => 100 * u + 1e-3], ['atan', (u) => 20 * u - 10],
  ['asin', (u) => 2 * u - 1], ['acos', (u) => 2 * u - 1], ['sinh', (u) => 10 * u - 5], ['cosh', (u) => 10 * u - 5], ['tanh', (u) => 10 * u - 5],
  ['atan2', (u) => 20 * u - 10, (u) => 20 * u - 10], ['pow', (u) => 10 * u + 1e-3, (u) => 6 * u - 3],
  ['**', (u) => 10 * u + 1e-3, null],
]

const N = 4096
function setup(name, fx, fz, variant) {
  const registry = createRegistry()
  if (variant === 'direct') {
    const spec = standardPrimitives.find((p) => p.name === (name === '**' ? 'pow' : name))
    registry.registerPrimitive({ ...spec, evaluate: Math[spec.name], override: true })
  }
  registry.registerBackend(createWasmBackend({ math: variant === 'module' ? 'module' : 'import' }))
  const body = name === '**' ? 'y[i] += x[i] ** 2.5' : fz ? `y[i] += ${name}(x[i], z[i])` : `y[i] += ${name}(x[i])`
  const text = `fn f(y: f64[], x: f64[], z: f64[]) { for i in 0..len(x) { ${body} } }`
  const m = compileModule(parse({ text, name: 'bench' }), { registry, backend: 'wasm', checks: false })
  const f = m.f
  const res = f.core.resident
  const y = res.allocate('f64', N), x = res.allocate('f64', N), z = res.allocate('f64', N)
  let s = 12345
  const rnd = () => { s = (s * 1103515245 + 12345) % 2147483648; return s / 2147483648 }
  for (let i = 0; i < N; i++) { x.array[i] = fx(rnd()); z.array[i] = fz ? fz(rnd()) : 0 }
  return () => f(y.array, x.array, z.array)
}

function time(run, ms = 150) {
  for (let k = 0; k < 5; k++) run()
  let n = 0
  const t0 = performance.now()
  let t = t0
  while (t - t0 < ms) { run(); n++; t = performance.now() }
  return ((t - t0) * 1e6) / (n * N)
}

const median = (a) => { const b = [...a].sort((p, q) => p - q); return b[b.length >> 1] }
console.log(`wasm math: ns per element, median of ${rounds} rounds (min–max); ratio = module / best call-out`)
console.log('function | module | import (closure) | import (Math.f) | ratio')
for (const [name, fx, fz] of CASES) {
  if (only.length && !only.includes(name)) continue
  const runs = { module: setup(name, fx, fz, 'module'), closure: setup(name, fx, fz, 'closure'), direct: setup(name, fx, fz, 'direct') }
  const times = { module: [], closure: [], direct: [] }
  for (let r = 0; r < rounds; r++) for (const v of Object.keys(runs)) times[v].push(time(runs[v]))
  const show = (v) => `${median(times[v]).toFixed(1)} (${Math.min(...times[v]).toFixed(1)}–${Math.max(...times[v]).toFixed(1)})`
  const ratio = median(times.module) / Math.min(median(times.closure), median(times.direct))
  console.log(`${name} | ${show('module')} | ${show('closure')} | ${show('direct')} | ${ratio.toFixed(2)}`)
}
