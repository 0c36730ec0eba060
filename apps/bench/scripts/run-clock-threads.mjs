// Why the thread rows are timed on the wall clock (README, *The run clock*; review17c). The same
// work, done on the timing thread ('inline'), on a worker thread the timing thread waits for
// ('worker'), or half on each ('split', as the suite's thread rows share out their work), timed
// by the bench's measure() on the run clock and on the wall clock (build first:
// `npx turbo run build --filter=@tenet/bench...`). Run it
// - on the loaded machine as it is: 'worker' reads the worker's waits for a core (wall time);
// - with HOG=1 under `taskset -c 0`: the same, every sample;
// - under `taskset -c 0` alone (one core, nothing else of this process's running): 'split' runs
//   its two halves one after the other on the one core, yet reads half of 'inline' on the run
//   clock: the timing thread's waits for its own worker are subtracted as if another process's.
import { Worker } from 'node:worker_threads'
import { measure, QUICK_MEASURE } from '../dist/harness/measure.js'
import { sampleClocks } from '../dist/harness/run-clock.js'

const N = Number(process.env.N ?? 2_000_000)
const work = (n) => {
  let s = 0
  for (let i = 0; i < n; i++) s = (s * 1.0000001 + i) % 1e9
  return s
}
const sab = new SharedArrayBuffer(8)
const flag = new Int32Array(sab)
new Worker(
  `
const { workerData, parentPort } = require('node:worker_threads')
const flag = new Int32Array(workerData.sab)
const work = ${work.toString()}
let sink = 0
for (;;) {
  Atomics.wait(flag, 0, 0)            // wait for a job (1)
  sink += work(Atomics.load(flag, 1))
  Atomics.store(flag, 0, 0); Atomics.notify(flag, 0)
}`,
  { eval: true, workerData: { sab, N } },
)
// HOG=1: one more thread of this process that only spins: under `taskset -c 0` it takes the
// core from whichever thread does the work, as another process would on a loaded machine
if (process.env.HOG === '1') new Worker('for (;;) {}', { eval: true })
let sink = 0
const inline = () => {
  sink += work(N)
}
const onWorker = () => {
  Atomics.store(flag, 1, N)
  Atomics.store(flag, 0, 1)
  Atomics.notify(flag, 0)
  while (Atomics.load(flag, 0) !== 0) Atomics.wait(flag, 0, 1)
}
const split = () => {
  Atomics.store(flag, 1, N >> 1)
  Atomics.store(flag, 0, 1)
  Atomics.notify(flag, 0)
  sink += work(N - (N >> 1))
  while (Atomics.load(flag, 0) !== 0) Atomics.wait(flag, 0, 1)
}
const c = sampleClocks()
const wallOnly = { wall: c.wall, run: c.wall }
const opts = { ...QUICK_MEASURE, timeMs: Number(process.env.T ?? 1500) }
onWorker()
inline()
const out = []
for (let rep = 0; rep < Number(process.env.REPS ?? 2); rep++) {
  for (const [name, fn] of [
    ['inline', inline],
    ['worker', onWorker],
    ['split', split],
  ]) {
    const r = await measure(fn, opts, c)
    const wl = await measure(fn, opts, wallOnly)
    out.push({
      rep,
      name,
      runMs: +r.medianMs.toFixed(3),
      wallMs: +wl.medianMs.toFixed(3),
      runMad: +r.madMs.toFixed(3),
      samples: r.samples,
    })
  }
}
console.table(out)
const by = (n, k) => out.filter((o) => o.name === n).map((o) => o[k])
const med = (a) => a.slice().sort((x, y) => x - y)[a.length >> 1]
console.log(
  'worker/inline on run clock',
  (med(by('worker', 'runMs')) / med(by('inline', 'runMs'))).toFixed(2),
  ' on wall clock',
  (med(by('worker', 'wallMs')) / med(by('inline', 'wallMs'))).toFixed(2),
  '; split/inline on run clock',
  (med(by('split', 'runMs')) / med(by('inline', 'runMs'))).toFixed(2),
  ' on wall clock',
  (med(by('split', 'wallMs')) / med(by('inline', 'wallMs'))).toFixed(2),
  sink > 0,
)
process.exit(0)
