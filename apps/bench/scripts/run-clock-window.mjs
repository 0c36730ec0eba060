// Samples of a fixed 0.25 ms of busy work timed on the run clock (README, *The run clock*;
// review17c): how many read far less or far more than the median? With SINGLE=1 the run clock
// reads the delay once, after the wall reading (as before review17c): a wait for a core between
// the end's performance.now() and its schedstat read is subtracted though the wall reading was
// taken before it (negative samples), one at the start counted. Build the bench first; S=samples.
import { runDelayReader, sampleClocks } from '../dist/harness/run-clock.js'
let { run, wall, delayKnown } = sampleClocks()
if (!delayKnown) console.log('(no run-queue delay on this system: the run clock is the wall clock)')
if (process.env.SINGLE === '1' && delayKnown) {
  const delay = runDelayReader()
  run = () => {
    const t = performance.now()
    return t - delay()
  }
}
const cal = () => {
  const t = performance.now()
  let x = 0
  while (performance.now() - t < 0.25) x++
  return x
}
// a fixed amount of work (calibrated once)
let K = 0
for (let i = 0; i < 20; i++) K = Math.max(K, cal())
const work = () => {
  let x = 0
  for (let i = 0; i < K; i++) x += performance.now()
  return x
}
const S = Number(process.env.S ?? 20000)
const xs = []
let sink = 0
const w0 = wall()
for (let i = 0; i < S; i++) {
  const t = run()
  sink += work()
  xs.push(run() - t)
}
xs.sort((a, b) => a - b)
const med = xs[xs.length >> 1]
if (sink === 0) console.log('(no work)')
console.log({
  singleReading: process.env.SINGLE === '1',
  samples: S,
  wallS: ((wall() - w0) / 1000).toFixed(1),
  medianMs: med.toFixed(4),
  min: xs[0].toFixed(3),
  max: xs.at(-1).toFixed(3),
  negative: xs.filter((x) => x < 0).length,
  belowHalf: xs.filter((x) => x < med / 2).length,
  aboveDouble: xs.filter((x) => x > 2 * med).length,
  lowest5: xs.slice(0, 5).map((x) => +x.toFixed(3)),
  highest5: xs.slice(-5).map((x) => +x.toFixed(3)),
})
