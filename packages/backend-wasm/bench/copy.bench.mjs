// Benchmark (not a timed test) of copying a large array argument into linear memory with
// `TypedArray.prototype.set`, as the wrapper of a wasm function does, by where the copy lands
// relative to the host array modulo 4096 (see `COPY_AT` in src/backend.ts). A fresh Float64Array of
// 50 000 elements (400 KB: glibc gives V8's backing store its own mmapped chunk, 16 bytes into a
// page) is copied to a page of the memory plus `d` bytes; a destination a few bytes after the
// source (d = 24..48 here) waits on 4K aliasing. Then a wasm function's wrapper with six such
// arguments, called with arrays as large, in turn.
// Run after building:
//   node packages/backend-wasm/bench/copy.bench.mjs [--rounds 9]
// Times are the minimum over the rounds of the CPU time per copy (`process.cpuUsage`).
import { createRegistry, parse } from '@tenet/ir'
import { compileModule } from '@tenet/reversible'
import { createWasmBackend } from '../dist/index.js'

const args = process.argv.slice(2)
const i = args.indexOf('--rounds')
const rounds = i >= 0 ? Number(args[i + 1]) : 9

/** The minimum CPU time of `reps` calls of `f` over the rounds, in µs per call. */
function time(f, reps) {
  let best = Number.POSITIVE_INFINITY
  for (let r = 0; r < rounds; r++) {
    const t = process.cpuUsage()
    for (let k = 0; k < reps; k++) f()
    const u = process.cpuUsage(t)
    best = Math.min(best, (u.user + u.system) / reps)
  }
  return best
}

const n = 50_000
const src = new Float64Array(n).map((_, k) => k)
const memory = new WebAssembly.Memory({ initial: 16 })
const F = new Float64Array(memory.buffer)
console.log('TypedArray.set of 400 KB into a page + d bytes (µs per copy):')
for (const d of [0, 16, 24, 32, 40, 48, 64, 2064]) {
  // (each variant its own closure source, so that V8 shares no feedback between them)
  const copy = new Function('F', 'src', 'at', `/* ${d} */ return () => F.set(src, at)`)(F, src, (65536 + d) >> 3)
  console.log(`  d = ${String(d).padStart(4)}: ${time(copy, 200).toFixed(1)}`)
}

const text = `fn s(r: f64, a: f64[], b: f64[], c: f64[], x: i32[], y: i32[], z: i32[]) {
  r += a[0] + b[0] + c[0] + f64(x[0] + y[0] + z[0])
}`
const registry = createRegistry().registerBackend(createWasmBackend())
const f = compileModule(parse({ text, name: 'copy' }), { registry, backend: 'wasm', checks: false }).s.core
const floats = [0, 1, 2].map(() => new Float64Array(n).fill(1))
const ints = [0, 1, 2].map(() => new Int32Array(n).fill(1))
const call = () => f(0, ...floats, ...ints)
console.log(`a wrapper's call with three f64 and three i32 arrays of ${n} elements: ${time(call, 100).toFixed(1)} µs`)
