// Benchmark (not a timed test) of the cost of one call of a compiled function from JS: the wasm
// backend against the cpu backend, on functions of scalars (the single-z Bessel J₂(1), a trivial
// `y += x`) and with a small array argument. Run after building:
//   node packages/backend-wasm/bench/call.bench.mjs [--rounds 9] [--ms 100]
// Each round times every variant for --ms milliseconds in turn; the table gives the median ns
// per call and the median of the per-round ratios wasm / cpu.
import { createRegistry, parse } from '@tenet/ir'
import { compileModule } from '@tenet/reversible'
// (the paper's Bessel listing, as @tenet/ad's examples have it; built with the repo)
import { besselSource } from '../../ad/dist/examples/papers.js'
import { cpuBackend } from '@tenet/backend-cpu'
import { createWasmBackend } from '../dist/index.js'

const args = process.argv.slice(2)
const opt = (name, dflt) => {
  const i = args.indexOf(name)
  return i >= 0 ? args[i + 1] : dflt
}
const rounds = Number(opt('--rounds', '9'))
const ms = Number(opt('--ms', '100'))

const text = `${besselSource}
fn addx(y: f64, x: f64) { y += x }
fn adda(y: f64[], x: f64) { y[0] += x }
`
const registry = createRegistry().registerBackend(cpuBackend).registerBackend(createWasmBackend())
const cpu = compileModule(parse({ text, name: 'bench' }), { registry, backend: 'cpu', checks: false })
const wasm = compileModule(parse({ text, name: 'bench' }), { registry, backend: 'wasm', checks: false })
const sink = new Float64Array(1)
const arr = new Float64Array(4)
// each variant gets closures of its own source text, so V8 shares no type feedback between them
let made = 0
const closure = (src, ...env) => new Function('F', 'sink', 'arr', `// ${++made}\n${src}`)(...env)
const cases = {
  'bessel J2(1)': (m) => closure('return () => { F(0, 2, 1.0); sink[0] += F.results[0] }', m.ibesselj.core, sink, arr),
  'y += x': (m) => closure('return () => { F(0, 1.5); sink[0] += F.results[0] }', m.addx.core, sink, arr),
  'y[0] += x (array of 4)': (m) => closure('return () => { F(arr, 1e-9); sink[0] += arr[0] }', m.adda.core, sink, arr),
}
/** A timing loop of its own source text per variant (see \`closure\`): ns per call over --ms. */
const timer = (run) =>
  new Function(
    'run',
    'ms',
    `// timer ${++made}
return () => {
  let n = 0
  const t0 = performance.now()
  let t = t0
  while (t - t0 < ms) {
    for (let i = 0; i < 1000; i++) run()
    n += 1000
    t = performance.now()
  }
  return ((t - t0) * 1e6) / n
}`,
  )(run, ms)
const med = (a) => [...a].sort((x, y) => x - y)[a.length >> 1]
console.log(`case | cpu ns | wasm ns | wasm/cpu (median of ${rounds} rounds)`)
for (const [name, mk] of Object.entries(cases)) {
  const c = timer(mk(cpu)),
    w = timer(mk(wasm))
  c(), w()
  const tc = [],
    tw = [],
    r = []
  for (let k = 0; k < rounds; k++) {
    const a = c(),
      b = w()
    tc.push(a), tw.push(b), r.push(b / a)
  }
  console.log(
    `${name} | ${med(tc).toFixed(1)} | ${med(tw).toFixed(1)} | ${med(r).toFixed(2)} (${Math.min(...r).toFixed(2)}–${Math.max(...r).toFixed(2)})`,
  )
}
