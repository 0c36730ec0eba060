import { Bench } from 'tinybench'
import { median, medianAbsoluteDeviation } from './stats.js'

export interface MeasureOptions {
  /** time budget per measurement, ms (tinybench keeps sampling until it and `minSamples` are met) */
  timeMs: number
  minSamples: number
  warmupMs: number
  /** one timed sample should last at least this long; fast functions are repeated inside a sample */
  targetSampleMs: number
}

export interface Measurement {
  /** per call, milliseconds */
  medianMs: number
  madMs: number
  samples: number
  /** calls per timed sample */
  inner: number
}

let measurements = 0

export const QUICK_MEASURE: MeasureOptions = { timeMs: 300, minSamples: 5, warmupMs: 50, targetSampleMs: 2 }
export const FULL_MEASURE: MeasureOptions = { timeMs: 1500, minSamples: 10, warmupMs: 200, targetSampleMs: 5 }

/**
 * Time `fn` with tinybench: warm-up, then samples of `inner` calls each, where `inner` is chosen
 * so one sample lasts about `targetSampleMs` (timer resolution and call overhead stay negligible
 * for nanosecond kernels). Reports the median and median absolute deviation per call.
 */
export async function measure(fn: () => void | Promise<void>, options: MeasureOptions): Promise<Measurement> {
  // calibrate (the function has already run once in its check)
  const t0 = performance.now()
  const first = fn()
  const isAsync = first instanceof Promise
  if (isAsync) await first
  let single = performance.now() - t0
  if (single < options.targetSampleMs / 10) {
    // estimate more precisely with a short burst
    let reps = 0
    const start = performance.now()
    while (performance.now() - start < Math.min(20, options.targetSampleMs * 2)) {
      if (isAsync) await fn()
      else fn()
      reps++
    }
    single = (performance.now() - start) / reps
  }
  const inner = Math.max(1, Math.ceil(options.targetSampleMs / Math.max(single, 1e-6)))
  // a synchronous batch loop of its own per measurement (its own source text, so V8 shares no
  // type feedback between them): each loop calls one function, which V8 may inline there, for
  // every row alike. One shared loop inlined the first function measured and called later ones
  // through a megamorphic site, about 3.6 ns per call more: a third of the 9 ns Bessel objective
  const body = isAsync
    ? async () => {
        for (let i = 0; i < inner; i++) await fn()
      }
    : (new Function(
        'fn',
        'inner',
        `// measurement ${++measurements}\nreturn () => { for (let i = 0; i < inner; i++) fn() }`,
      )(fn, inner) as () => void)
  // calls slower than the whole time budget are already warm (check + calibration ran them):
  // take the minimum of 3 samples and skip tinybench's warm-up, so a quick run stays quick
  const slow = single * inner > options.timeMs
  const bench = new Bench({
    time: options.timeMs,
    iterations: slow ? 3 : options.minSamples,
    warmup: !slow,
    warmupTime: options.warmupMs,
    warmupIterations: 1,
    retainSamples: true,
    throws: true,
  })
  bench.add('row', body, { async: isAsync })
  await bench.run()
  const task = bench.tasks[0]
  const result = task.result
  if (result.state !== 'completed') {
    const err = result.state === 'errored' ? result.error : new Error(`benchmark ended in state ${result.state}`)
    throw err
  }
  const samples = Array.from(result.latency.samples ?? [])
  const med = samples.length ? median(samples) : result.latency.p50
  const mad = samples.length ? medianAbsoluteDeviation(samples) : result.latency.mad
  return { medianMs: med / inner, madMs: mad / inner, samples: samples.length || result.latency.samplesCount, inner }
}
