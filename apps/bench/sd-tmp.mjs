import { Bench } from 'tinybench'
import { rev } from 'tenet'
import { sparseDotSource } from '../../packages/tenet/dist/examples/index.js'
function randomCsc(m, n, density, seed) {
  let s = seed >>> 0
  const rnd = () => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32)
  const colptr = new Int32Array(n + 1); const rows = [], vals = []
  for (let j = 0; j < n; j++) { for (let i = 0; i < m; i++) if (rnd() < density) { rows.push(i); vals.push(rnd() * 2 - 1) } colptr[j + 1] = rows.length }
  return { colptr, rowval: Int32Array.from(rows), nzval: Float64Array.from(vals) }
}
function plain(m, n, ac, ar, av, bc, br, bv) {
  let r = 0
  for (let j = 0; j < n; j++) {
    let ia = ac[j], ib = bc[j]; const ia2 = ac[j + 1], ib2 = bc[j + 1]
    while (ia < ia2 && ib < ib2) { const ra = ar[ia], rb = br[ib]; if (ra === rb) { r += av[ia] * bv[ib]; ia++; ib++ } else if (ra < rb) ia++; else ib++ }
  }
  return r
}
const N = 1000; const a = randomCsc(N, N, 0.05, 1), b = randomCsc(N, N, 0.05, 2)
const m = rev.with({ checks: false })([sparseDotSource + `fn sparse_dot_merge(r: f64, m: i32, n: i32, acolptr: i32[], arowval: i32[], anzval: f64[], bcolptr: i32[], browval: i32[], bnzval: f64[]) {
  for j in 0..n {
    ia: i32 <- acolptr[j]
    ib: i32 <- bcolptr[j]
    for i in 0..acolptr[j + 1] - acolptr[j] + bcolptr[j + 1] - bcolptr[j] {
      if (ia < acolptr[j + 1] && ib < bcolptr[j + 1] && arowval[ia] == browval[ib], ~) {
        r += anzval[ia] * bnzval[ib]
      }
      if (ia == acolptr[j + 1] || ib < bcolptr[j + 1] && browval[ib] < arowval[ia], ib > bcolptr[j] && (ia == acolptr[j] || browval[ib - 1] >= arowval[ia - 1])) {
        ib += 1
      } else {
        ia += 1
      }
    }
    ia -> acolptr[j + 1]
    ib -> bcolptr[j + 1]
  }
}
`])
const mc = rev([`fn sparse_dot_merge(r: f64, m: i32, n: i32, acolptr: i32[], arowval: i32[], anzval: f64[], bcolptr: i32[], browval: i32[], bnzval: f64[]) {
  for j in 0..n {
    ia: i32 <- acolptr[j]
    ib: i32 <- bcolptr[j]
    for i in 0..acolptr[j + 1] - acolptr[j] + bcolptr[j + 1] - bcolptr[j] {
      if (ia < acolptr[j + 1] && ib < bcolptr[j + 1] && arowval[ia] == browval[ib], ~) {
        r += anzval[ia] * bnzval[ib]
      }
      if (ia == acolptr[j + 1] || ib < bcolptr[j + 1] && browval[ib] < arowval[ia], ib > bcolptr[j] && (ia == acolptr[j] || browval[ib - 1] >= arowval[ia - 1])) {
        ib += 1
      } else {
        ia += 1
      }
    }
    ia -> acolptr[j + 1]
    ib -> bcolptr[j + 1]
  }
}
`]); console.log('checked', mc.sparse_dot_merge(0, N, N, a.colptr, a.rowval, a.nzval, b.colptr, b.rowval, b.nzval)[0], mc.sparse_dot_merge.inverse(6.266064551136486, N, N, a.colptr, a.rowval, a.nzval, b.colptr, b.rowval, b.nzval)[0])
const core = m.sparse_dot.core, inv = m.sparse_dot.inverse.core
const args = [N, N, a.colptr, a.rowval, a.nzval, b.colptr, b.rowval, b.nzval]
console.log(plain(N, N, a.colptr, a.rowval, a.nzval, b.colptr, b.rowval, b.nzval), (core(0, ...args), core.results[0]))
const bench = new Bench({ time: 1000 })
bench.add('plain', () => plain(N, N, a.colptr, a.rowval, a.nzval, b.colptr, b.rowval, b.nzval))
bench.add('tenet fwd', () => core(0, ...args))
bench.add('tenet inv', () => inv(1, ...args))
const c2 = m.sparse_dot_merge.core, i2 = m.sparse_dot_merge.inverse.core
bench.add('merge fwd', () => c2(0, ...args))
bench.add('merge inv', () => i2(1, ...args))
await bench.run()
for (const t of bench.tasks) console.log(t.name, t.result.latency?.p50 ?? t.result.p50)
