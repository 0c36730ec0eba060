// Benchmark (not a timed test) of the cost of one call of a compiled function from JS: the wasm
// backend against the cpu backend, on functions of scalars (the single-z Bessel J₂(1), a trivial
// `y += x`) and with a small array argument; then where the time of one wasm call of J₂(1) goes;
// then J₂(1) and its forward-mode gradient in independent calls and in calls that each wait for
// the one before (see the last section).
// Run after building:
//   node packages/backend-wasm/bench/call.bench.mjs [--rounds 9] [--ms 100] [--wall]
// Each round times every variant for --ms milliseconds of CPU time (`process.cpuUsage`, which a
// machine loaded by other processes distorts far less than wall-clock time; --wall for
// `performance.now`) in turn; the tables give the median ns per call (with the range over the
// rounds) and the median of the per-round ratios wasm / cpu.
import { createRegistry, parse } from '@tenet/ir'
import { compileModule } from '@tenet/reversible'
// (the paper's Bessel listing, as @tenet/ad's examples have it; built with the repo)
import { besselSource } from '../../ad/dist/examples/papers.js'
import { cpuBackend } from '@tenet/backend-cpu'
import { createWasmBackend } from '../dist/index.js'
import { Bytes, F64, I32, Op, encodeModule } from '../dist/encoder.js'
// (@tenet/ad's gradient drivers, built with the repo: the direct driver of the last section)
import { grad } from '../../ad/dist/index.js'

const args = process.argv.slice(2)
const opt = (name, dflt) => {
  const i = args.indexOf(name)
  return i >= 0 ? args[i + 1] : dflt
}
const rounds = Number(opt('--rounds', '9'))
const ms = Number(opt('--ms', '100'))
const wall = args.includes('--wall')

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
    'now',
    `// timer ${++made}
return () => {
  let n = 0
  const t0 = now()
  let t = t0
  while (t - t0 < ms) {
    for (let i = 0; i < 1000; i++) run()
    n += 1000
    t = now()
  }
  return ((t - t0) * 1e6) / n
}`,
  )(run, ms, wall ? () => performance.now() : cpuNow)
/** CPU time of this process in milliseconds. */
function cpuNow() {
  const u = process.cpuUsage()
  return (u.user + u.system) / 1000
}
const med = (a) => [...a].sort((x, y) => x - y)[a.length >> 1]
const span = (a) => `${med(a).toFixed(1)} (${Math.min(...a).toFixed(1)}–${Math.max(...a).toFixed(1)})`
console.log(`case | cpu ns | wasm ns | wasm/cpu (median of ${rounds} rounds, ${wall ? 'wall-clock' : 'CPU'} time)`)
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

// Where one call of J₂(1) on wasm goes, each step adding one piece to the one before it:
// - the timing loop and the closure alone (a JS function doing the caller's own work);
// - a bare export of the same signature (f64, i32, f64) → f64 that adds two parameters: the
//   transition from JS into wasm and back;
// - the Bessel function's entry called by a wasm loop (a module importing it: a call from wasm to
//   wasm, no JS in it), per call: the body itself;
// - the entry called from JS without the wrapper (\`core.direct.call\`, what gradient drivers use);
// - the wrapper (\`core\`), its results read from \`core.results\`.
const W = wasm.ibesselj.core
const bare = new WebAssembly.Instance(
  new WebAssembly.Module(
    encodeModule({
      imports: [],
      functions: [
        {
          type: { params: [F64, I32, F64], results: [F64] },
          locals: [],
          body: new Bytes().byte(Op.local_get).u32(0).byte(Op.local_get).u32(2).byte(Op.f64_add),
          export: 'f',
        },
      ],
      memoryPages: 1,
      globals: [],
    }),
  ),
  {},
).exports.f
// drive(n): n calls of the imported entry with (0, 2, 1.0), their results summed
const drive = new Bytes()
  .byte(Op.loop)
  .byte(0x40)
  .byte(Op.local_get)
  .u32(1)
  .byte(Op.f64_const)
  .f64(0)
  .byte(Op.i32_const)
  .s32(2)
  .byte(Op.f64_const)
  .f64(1)
  .byte(Op.call)
  .u32(0)
  .byte(Op.f64_add)
  .byte(Op.local_set)
  .u32(1)
  .byte(Op.local_get)
  .u32(0)
  .byte(Op.i32_const)
  .s32(1)
  .byte(Op.i32_sub)
  .byte(Op.local_tee)
  .u32(0)
  .byte(Op.br_if)
  .u32(0)
  .byte(Op.end)
  .byte(Op.local_get)
  .u32(1)
const driver = new WebAssembly.Instance(
  new WebAssembly.Module(
    encodeModule({
      imports: [{ module: 'm', name: 'f', type: { params: [F64, I32, F64], results: [F64] } }],
      functions: [{ type: { params: [I32], results: [F64] }, locals: [F64], body: drive, export: 'drive' }],
      memoryPages: 1,
      globals: [],
    }),
  ),
  { m: { f: W.direct.call } },
).exports.drive
const N = 1000
const steps = {
  'the caller alone (JS)': timer(closure('return () => { sink[0] += 1.0 }', null, sink, arr)),
  'bare export (JS → wasm → JS)': timer(closure('return () => { sink[0] += F(0, 2, 1.0) }', bare, sink, arr)),
  // (per call: the loop runs N calls per timed call)
  'J₂(1) body, called from wasm': timer(closure(`return () => { sink[0] += F(${N}) }`, driver, sink, arr)),
  'J₂(1) entry from JS (direct)': timer(closure('return () => { sink[0] += F(0, 2, 1.0) }', W.direct.call, sink, arr)),
  'J₂(1) wrapper (core)': timer(closure('return () => { F(0, 2, 1.0); sink[0] += F.results[0] }', W, sink, arr)),
}
for (const t of Object.values(steps)) t()
const times = Object.fromEntries(Object.keys(steps).map((k) => [k, []]))
for (let k = 0; k < rounds; k++)
  for (const [name, t] of Object.entries(steps)) times[name].push(name.includes('from wasm') ? t() / N : t())
console.log(`\nwasm J₂(1): step | ns per call (median, range over ${rounds} rounds)`)
for (const [name, v] of Object.entries(times)) console.log(`${name} | ${span(v)}`)

// Independent calls against dependent ones. In the loops above every call has the same arguments,
// so the CPU may start a call before the one before it has finished: the cpu backend's function,
// which the JIT inlines into the loop, overlaps one call's chain of divisions with the next
// call's; a call into wasm overlaps far less. Where each call's argument depends on the previous
// call's result (\`z + r * 0\`: the same z while r is finite, which the JIT cannot fold, since
// r * 0 is NaN or -0 for some r), no call starts before the one before it ends, as in an iteration
// that feeds a result back (Newton steps, an optimiser's updates): this measures the latency of
// one call. The objective (\`core\`) and the gradient (\`grad\`, one tangent sweep), z from an
// object, as the benchmark suite passes its case's arguments.
const G = { cpu: grad(cpu.ibesselj, { loss: 0 }), wasm: grad(wasm.ibesselj, { loss: 0 }) }
const arg = { nu: 2, z: Number(opt('--z', '1')) }
const dep = (src) => new Function('F', 'g', 'sink', 'c', `// ${++made}\n${src}`)
const pairs = {
  'objective, independent': (m, g) =>
    dep('return () => { F(0, c.nu, c.z); sink[0] += F.results[0] }')(m.ibesselj.core, g, sink, arg),
  'objective, dependent': (m, g) =>
    dep('return () => { F(0, c.nu, c.z + sink[0] * 0); sink[0] = F.results[0] }')(m.ibesselj.core, g, sink, arg),
  'gradient, independent': (m, g) =>
    dep('return () => { g.run(0, c.nu, c.z); sink[0] += g.scalars[2] }')(m.ibesselj.core, g, sink, arg),
  'gradient, dependent': (m, g) =>
    dep('return () => { g.run(0, c.nu, c.z + sink[0] * 0); sink[0] = g.scalars[2] }')(m.ibesselj.core, g, sink, arg),
}
sink[0] = 0
console.log(`\nJ₂(${arg.z}) (--z): calls | cpu ns | wasm ns | wasm/cpu (median of ${rounds} rounds)`)
for (const [name, mk] of Object.entries(pairs)) {
  const c = timer(mk(cpu, G.cpu)),
    w = timer(mk(wasm, G.wasm))
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
    `${name} | ${span(tc)} | ${span(tw)} | ${med(r).toFixed(2)} (${Math.min(...r).toFixed(2)}–${Math.max(...r).toFixed(2)})`,
  )
}
