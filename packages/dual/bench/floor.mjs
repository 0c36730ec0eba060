// The floor of any typed-array tape on an arithmetic-only objective: a minimal hand-written tape
// (five typed arrays, everything inlined, no API around it) against this engine and the plain
// objective, on the length-1000 dot product written as one multiplication and one addition per
// element. Run after `npm run build`: node packages/dual/bench/floor.mjs
import { grad } from '../dist/index.js'

const n = 1000
const X = Float64Array.from({ length: 2 * n }, (_, i) => Math.sin(i))
const N = 1 << 16
const val = new Float64Array(N),
  t0 = new Int32Array(N),
  p0 = new Float64Array(N),
  t1 = new Int32Array(N),
  p1 = new Float64Array(N),
  adj = new Float64Array(N)
const out = new Float64Array(2 * n)

function minimalTape() {
  val.set(X, 0)
  let top = 2 * n
  let s = -1
  for (let i = 0; i < n; i++) {
    const a = i,
      b = n + i,
      m = top++
    const va = val[a],
      vb = val[b]
    val[m] = va * vb
    t0[m] = a
    p0[m] = vb
    t1[m] = b
    p1[m] = va
    if (s < 0) {
      s = m
      continue
    }
    const q = top++
    val[q] = val[s] + val[m]
    t0[q] = s
    p0[q] = 1
    t1[q] = m
    p1[q] = 1
    s = q
  }
  adj.fill(0, 0, top)
  adj[s] = 1
  for (let i = top - 1; i >= 2 * n; i--) {
    const g = adj[i]
    if (g === 0) continue
    adj[t0[i]] += g * p0[i]
    const b = t1[i]
    if (b >= 0) adj[b] += g * p1[i]
  }
  for (let i = 0; i < 2 * n; i++) out[i] = adj[i]
}

const engine = grad((d, x) => {
  let s = d.mul(x[0], x[n])
  for (let i = 1; i < n; i++) s = d.add(s, d.mul(x[i], x[n + i]))
  return s
})
function plain() {
  let s = 0
  for (let i = 0; i < n; i++) s += X[i] * X[n + i]
  return s
}

const sink = new Float64Array(1)
const time = (f, reps) => {
  const t = performance.now()
  for (let k = 0; k < reps; k++) f()
  return (performance.now() - t) / reps
}
for (let r = 0; r < 5; r++) {
  const tp = time(() => {
    sink[0] += plain()
  }, 50000)
  const tm = time(minimalTape, 5000)
  const te = time(() => engine.into(out, X), 5000)
  console.log(
    `plain ${(tp * 1e3).toFixed(2)} µs · minimal tape ${(tm / tp).toFixed(1)}× · @tenet/dual ${(te / tp).toFixed(1)}×`,
  )
}
