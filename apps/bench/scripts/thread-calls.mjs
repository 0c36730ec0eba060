// The thread rows' speed-up, call by call, in one process: the suite's single-thread row and its
// thread row (`Tenet (cpu)` and `Tenet (cpu, N threads)`) of one case, called in interleaved blocks.
// Per call it reads the wall time, the process's CPU time (`process.cpuUsage`: every thread) and
// how long the process's threads waited for a CPU (`/proc/self/task/*/schedstat`, Linux). Calls in
// which no thread waited for a CPU (50 µs at most in all) had the cores to themselves: their
// speed-up is what the pool gives on a quiet machine, even when the machine is not quiet for long.
//   node apps/bench/scripts/thread-calls.mjs ba ba1 [blocks] [calls per block]
//   node apps/bench/scripts/thread-calls.mjs gmm 10k
// (after building @tenet/bench; TENET_POOL_SPIN as for the suite).
import { readdirSync, readFileSync } from 'node:fs'
import { assembleWorkloads, ROW_FAMILIES } from '../dist/index.js'

const [workload = 'ba', label = 'ba1', blocks = '20', per = '10'] = process.argv.slice(2)
const [w] = assembleWorkloads(ROW_FAMILIES, [workload])
const spec = w.cases({ full: false }).find((c) => c.label.includes(label))
if (!spec) throw new Error(`no case of ${workload} has '${label}' in its label`)
const instance = spec.make()
const kind = workload === 'ba' ? 'jacobian' : 'gradient'
const setup = (test) => w.rows.find((r) => r.kind === kind && test(r.name)).setup(instance)
const rows = [
  { name: 'Tenet (cpu)', row: await setup((n) => n === 'Tenet (cpu)') },
  { name: 'threads', row: await setup((n) => /^Tenet \(cpu, \d+ threads\)$/.test(n)) },
]
/** The run-queue waits of all this process's threads so far, in ns (0 where there is no procfs). */
const waited = () => {
  let s = 0
  try {
    for (const t of readdirSync('/proc/self/task'))
      try {
        s += Number(readFileSync(`/proc/self/task/${t}/schedstat`, 'utf8').split(' ')[1])
      } catch {}
  } catch {}
  return s
}
for (const r of rows) {
  Object.assign(r, { wall: [], cpu: [], clean: [] })
  for (let i = 0; i < 5; i++) r.row.run()
}
for (let b = 0; b < Number(blocks); b++)
  for (const r of rows)
    for (let i = 0; i < Number(per); i++) {
      const w0 = waited(),
        c0 = process.cpuUsage(),
        t0 = performance.now()
      r.row.run()
      const t = performance.now() - t0,
        c = process.cpuUsage(c0)
      r.wall.push(t)
      r.cpu.push((c.user + c.system) / 1000)
      if (waited() - w0 < 50_000) r.clean.push(t)
    }
const median = (a) => (a.length ? [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)] : Number.NaN)
const [one, two] = rows
console.log(`${workload} ${spec.label}, ${rows.map((r) => `${r.name}`).join(' vs ')}; ${blocks} blocks of ${per} calls`)
for (const r of rows)
  console.log(
    `  ${r.name.padEnd(12)} wall ${median(r.wall).toFixed(3)} ms, CPU ${median(r.cpu).toFixed(3)} ms, clean calls ${r.clean.length} (median ${median(r.clean).toFixed(3)} ms)`,
  )
console.log(
  `  speed-up: clean calls ${(median(one.clean) / median(two.clean)).toFixed(3)}, all calls ${(median(one.wall) / median(two.wall)).toFixed(3)}; CPU of the thread row over the single-thread row ${(median(two.cpu) / median(one.cpu)).toFixed(3)}`,
)
for (const r of rows) await r.row.dispose?.()
