#!/usr/bin/env node
/**
 * Compile-time scaling benchmark (issue 19): how the time to compile a Tenet program, and to
 * build its gradient, grows with the size of the program.
 *
 *   node bench/size.mjs            # the default sizes (about two minutes on an idle 2-core machine)
 *   node bench/size.mjs --quick    # the two smaller sizes of each shape
 *   node bench/size.mjs --json out.json
 *   node bench/size.mjs --shape calls   # one shape only
 *
 * Shapes: one function of n statements (`straight`), n functions of one statement each
 * (`functions`), n functions of 18 statements each calling the next (`calls`: too large to be
 * inlined), one statement whose value is a chain of n terms (`chain`), and `grad` (the
 * gradient function of a straight-line function of n statements, built and called once). Each
 * case runs three times in a fresh registry; the table gives the median, the spread (min–max),
 * the time per statement, and the growth exponent k of time ∝ n^k fitted (least squares on
 * log–log) over the sizes of the shape: k ≈ 1 is linear. As a plain-JS reference, `v8` is the
 * time V8's `new Function` takes for a JS function of the same n statements, measured in the
 * same run. Needs the packages built (`npx turbo run build`).
 */
import { writeFileSync } from 'node:fs'
import { performance } from 'node:perf_hooks'
import { createRegistry, grad, rev } from 'tenet'
import { wasmBackend } from '../packages/backend-wasm/dist/index.js'

const args = process.argv.slice(2)
const quick = args.includes('--quick')
const jsonAt = args.includes('--json') ? args[args.indexOf('--json') + 1] : undefined
const only = args.includes('--shape') ? args[args.indexOf('--shape') + 1] : undefined
const REPS = 3

const template = (text) => Object.assign([text], { raw: [text] })
const straight = (n) => {
  const lines = ['fn f(y: f64, x: f64[]) {']
  for (let i = 0; i < n; i++) lines.push(`  y += x[${i % 7}] * ${(i % 13) + 1}.5`)
  return lines.concat('}').join('\n')
}
const functions = (n) => Array.from({ length: n }, (_, i) => `fn f${i}(y: f64, x: f64) { y += x * ${i}.5 }`).join('\n')
const calls = (n) =>
  Array.from(
    { length: n },
    (_, i) => `fn f${i}(y: f64, x: f64) {\n${'  y += x * 0.5\n'.repeat(17)}${i + 1 < n ? `  f${i + 1}(y, x)\n` : ''}}`,
  ).join('\n')
const chain = (n) =>
  `fn f(y: f64, x: f64[]) {\n  y += x[0]${Array.from({ length: n - 1 }, (_, i) => ` + x[${(i + 1) % 7}]`).join('')}\n}`
const jsStraight = (n) => {
  const lines = ['let y = 0;']
  for (let i = 0; i < n; i++) lines.push(`y += x[${i % 7}] * ${(i % 13) + 1}.5;`)
  return lines.concat('return y;').join('\n')
}

const pick = (small, full) => (quick ? small : full)
const cases = [
  ...['cpu', 'wasm', 'interpreter'].map((backend) => ({
    shape: 'straight',
    backend,
    sizes: pick([1e3, 1e4], [1e3, 1e4, 1e5]),
    source: straight,
  })),
  ...['cpu', 'wasm'].map((backend) => ({
    shape: 'functions',
    backend,
    sizes: pick([1e3, 3e3], [1e3, 3e3, 1e4]),
    source: functions,
  })),
  ...['cpu', 'wasm'].map((backend) => ({
    shape: 'calls',
    backend,
    sizes: pick([100, 300], [100, 300, 1000]),
    source: calls,
  })),
  ...['cpu', 'wasm'].map((backend) => ({
    shape: 'chain',
    backend,
    sizes: pick([300, 1000], [300, 1000, 3000]),
    source: chain,
  })),
  { shape: 'grad', backend: 'cpu', sizes: pick([1e3, 3e3], [1e3, 3e3, 1e4]), source: straight, grad: true },
  { shape: 'v8', backend: 'new Function', sizes: pick([1e3, 1e4], [1e3, 1e4, 1e5]), js: jsStraight },
]

function once(c, n) {
  if (c.js) {
    const body = c.js(n)
    const t0 = performance.now()
    const f = new Function('x', body)
    f(new Float64Array(7)) // V8 compiles lazily: the first call compiles the body
    return performance.now() - t0
  }
  const registry = createRegistry().registerBackend(wasmBackend)
  const text = c.source(n)
  const t0 = performance.now()
  const m = rev.with({ registry, backend: c.backend })(template(text))
  if (c.shape === 'calls') m.f0(0, 1) // the run is part of it: a chain of calls recurses
  if (c.grad) grad(m.f, { loss: 0 })(0, new Float64Array(7))
  return performance.now() - t0
}

/** Slope of log(t) against log(n), least squares. */
function exponent(points) {
  const xs = points.map((p) => Math.log(p.n)),
    ys = points.map((p) => Math.log(p.median))
  const mx = xs.reduce((a, b) => a + b, 0) / xs.length,
    my = ys.reduce((a, b) => a + b, 0) / ys.length
  let sxy = 0,
    sxx = 0
  xs.forEach((x, i) => {
    sxy += (x - mx) * (ys[i] - my)
    sxx += (x - mx) ** 2
  })
  return sxy / sxx
}

const results = []
console.log(`| shape | backend | n | median ms | min–max ms | µs per n |`)
console.log(`|---|---|---:|---:|---:|---:|`)
for (const c of cases.filter((x) => !only || x.shape === only)) {
  const points = []
  once(c, Math.min(100, c.sizes[0])) // warm up this path of the compiler (JIT) before timing it
  for (const n of c.sizes) {
    const times = []
    for (let r = 0; r < REPS; r++) times.push(once(c, n))
    times.sort((a, b) => a - b)
    const p = { n, median: times[1], min: times[0], max: times[REPS - 1] }
    points.push(p)
    console.log(
      `| ${c.shape} | ${c.backend} | ${n} | ${p.median.toFixed(0)} | ${p.min.toFixed(0)}–${p.max.toFixed(0)} | ${((1000 * p.median) / n).toFixed(1)} |`,
    )
  }
  const k = exponent(points)
  results.push({ shape: c.shape, backend: c.backend, points, exponent: k })
}
console.log('\n| shape | backend | growth exponent k (time ∝ n^k) |')
console.log('|---|---|---:|')
for (const r of results) console.log(`| ${r.shape} | ${r.backend} | ${r.exponent.toFixed(2)} |`)
if (jsonAt)
  writeFileSync(
    jsonAt,
    JSON.stringify({ node: process.version, date: new Date().toISOString(), reps: REPS, results }, null, 2),
  )
