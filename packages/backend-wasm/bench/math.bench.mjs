// Benchmark (not a timed test) of the transcendental functions on the wasm backend: computed in
// the module (`math: 'module'`) against the call out to JS (`math: 'import'`, which imports the
// `Math` function itself), and against the call out this backend made before (an import of the
// primitive's `evaluate`, a closure calling Math.*: a user override of the primitive).
// `paired`: the loop run two iterations at a time with SIMD (only exp has an f64x2 routine).
// Run after building: node packages/backend-wasm/bench/math.bench.mjs [--rounds 15] [--only sin,exp]
// Each round times every variant for --ms milliseconds in turn, on `y[i] += f(x[i])` over 4096
// resident elements (checks off); the table gives the median ns per element and the median and
// range of the per-round ratios (module / import), so that a load that changes between rounds
// moves both sides of a ratio alike.
import { createRegistry, parse, standardPrimitives } from '@tenet/ir'
import { compileModule } from '@tenet/reversible'
import { createWasmBackend } from '../dist/index.js'

const args = process.argv.slice(2)
const opt = (name, dflt) => {
  const i = args.indexOf(name)
  return i >= 0 ? args[i + 1] : dflt
}
const rounds = Number(opt('--rounds', '15'))
const ms = Number(opt('--ms', '40'))
const only = opt('--only', '')?.split(',').filter(Boolean)

/** name, inputs for x (and z for two-argument functions). */
const CASES = [
  ['sin', (u) => 20 * u - 10],
  ['cos', (u) => 20 * u - 10],
  ['tan', (u) => 3 * u - 1.5],
  ['exp', (u) => 40 * u - 20],
  ['log', (u) => 100 * u + 1e-3],
  ['atan', (u) => 20 * u - 10],
  ['asin', (u) => 2 * u - 1],
  ['acos', (u) => 2 * u - 1],
  ['sinh', (u) => 10 * u - 5],
  ['cosh', (u) => 10 * u - 5],
  ['tanh', (u) => 10 * u - 5],
  ['atan2', (u) => 20 * u - 10, (u) => 20 * u - 10],
  ['pow', (u) => 10 * u + 1e-3, (u) => 6 * u - 3],
  ['**', (u) => 10 * u + 1e-3],
]

const N = 4096
function setup(name, fx, fz, variant) {
  const registry = createRegistry()
  if (variant === 'closure') {
    const spec = standardPrimitives.find((p) => p.name === (name === '**' ? 'pow' : name))
    registry.registerPrimitive({ ...spec, evaluate: (...a) => spec.evaluate(...a), override: true })
  }
  // 'module' is the scalar routine (no SIMD: a loop of exp would otherwise run paired), 'paired'
  // the same loop two iterations at a time where the function has an f64x2 routine
  registry.registerBackend(
    createWasmBackend({
      math: variant === 'module' || variant === 'paired' ? 'module' : 'import',
      simd: variant === 'paired',
    }),
  )
  const body = name === '**' ? 'y[i] += x[i] ** 2.5' : fz ? `y[i] += ${name}(x[i], z[i])` : `y[i] += ${name}(x[i])`
  const text = `fn f(y: f64[], x: f64[], z: f64[]) { for i in 0..len(x) { ${body} } }`
  const m = compileModule(parse({ text, name: 'bench' }), { registry, backend: 'wasm', checks: false })
  const f = m.f
  const res = f.core.resident
  const y = res.allocate('f64', N),
    x = res.allocate('f64', N),
    z = res.allocate('f64', N)
  let s = 12345
  const rnd = () => {
    s = (s * 1103515245 + 12345) % 2147483648
    return s / 2147483648
  }
  for (let i = 0; i < N; i++) {
    x.array[i] = fx(rnd())
    z.array[i] = fz ? fz(rnd()) : 0
  }
  return () => f(y.array, x.array, z.array)
}

function time(run) {
  let n = 0
  const t0 = performance.now()
  let t = t0
  while (t - t0 < ms) {
    run()
    n++
    t = performance.now()
  }
  return ((t - t0) * 1e6) / (n * N)
}

const median = (a) => {
  const b = [...a].sort((p, q) => p - q)
  return b[b.length >> 1]
}
const VARIANTS = ['module', 'import', 'closure', 'paired']
console.log(
  `wasm math: ns per element (median of ${rounds} rounds of ${ms} ms); module/import ratio: median (min–max) of the rounds`,
)
console.log(
  'function | module | import (Math.f) | import (evaluate, before) | module / import | module / before | paired (f64x2) / module',
)
for (const [name, fx, fz] of CASES) {
  if (only.length && !only.includes(name)) continue
  const runs = Object.fromEntries(VARIANTS.map((v) => [v, setup(name, fx, fz, v)]))
  for (const v of VARIANTS) for (let k = 0; k < 20; k++) runs[v]() // warm up (tier up)
  const times = Object.fromEntries(VARIANTS.map((v) => [v, []]))
  for (let r = 0; r < rounds; r++) for (const v of VARIANTS) times[v].push(time(runs[v]))
  const ratio = (a, b) => times[a].map((t, k) => t / times[b][k])
  const show = (rs) => `${median(rs).toFixed(2)} (${Math.min(...rs).toFixed(2)}–${Math.max(...rs).toFixed(2)})`
  console.log(
    `${name} | ${median(times.module).toFixed(1)} | ${median(times.import).toFixed(1)} | ${median(times.closure).toFixed(1)} | ${show(ratio('module', 'import'))} | ${show(ratio('module', 'closure'))} | ${show(ratio('paired', 'module'))}`,
  )
}
