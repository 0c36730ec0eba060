import { type Clocks, sampleClocks } from './run-clock.js'
import { median, medianAbsoluteDeviation } from './stats.js'

export interface MeasureOptions {
  /** time budget per measurement, ms of wall time (sampling goes on until it and `minSamples` are met) */
  timeMs: number
  minSamples: number
  warmupMs: number
  /**
   * The warm-up also lasts at least this many calls (within `maxWarmupMs`): see `warmUp`. Absent:
   * `warmupMs` alone.
   */
  warmupCalls?: number
  /** The longest a warm-up waits for its `warmupCalls`, ms (default `warmupMs`). */
  maxWarmupMs?: number
  /** one timed sample should last at least this long; fast functions are repeated inside a sample */
  targetSampleMs: number
}

export interface Measurement {
  /** per call, milliseconds */
  medianMs: number
  madMs: number
  /**
   * per call, ms: the median of the same samples on the wall clock (equal to `medianMs` where
   * the samples were timed on it), for comparing a row with one timed on the wall clock
   */
  wallMedianMs: number
  samples: number
  /** calls per timed sample */
  inner: number
}

let measurements = 0

/** Clocks whose `run` is the wall clock: for rows timed on the wall clock (`Row.clock`). */
export const wallClocks = (clocks: Pick<Clocks, 'wall'> = sampleClocks()): Pick<Clocks, 'wall' | 'run'> => ({
  wall: clocks.wall,
  run: clocks.wall,
})

/**
 * The time of one call of `fn`, ms, for choosing how many calls one timed sample makes: the
 * fastest per-call time of batches that last at least a quarter of `targetMs`, the batch size
 * doubling from one call until a batch lasts that long, then three such batches (or `firstMs`,
 * the first call's time, when one call already lasts `targetMs`: it is not called again). `now`
 * is the clock (a test's own).
 *
 * Batches shorter than a quarter of the target only grow the batch: their clock readings are
 * dominated by the timer's own cost and resolution. The minimum over long batches, not one
 * reading, because on a loaded machine a batch may be preempted (wall time counts the time the
 * process did not run) and because the first calls run unoptimised code (or compile it). Before
 * this, one call's time (when it exceeded a tenth of the target) or a burst that read the clock
 * at every call set the count: the first call of a nanosecond kernel often took 0.1–0.3 ms (lazy
 * compilation), or the burst was preempted, so a sample made 6–2000 calls by chance (different
 * per process and per row), and the timer's and tinybench's per-sample cost, divided by that
 * count, added up to 5–6 ns to a 40 ns call (the single-z Bessel cpu gradient: 48 ns with 6–9
 * calls per sample against 43 ns with 260, one process after another on the loaded machine).
 */
export async function calibrate(
  fn: () => void | Promise<void>,
  isAsync: boolean,
  firstMs: number,
  targetMs: number,
  now: () => number = () => performance.now(),
): Promise<number> {
  if (firstMs >= targetMs) return firstMs
  const longBatchMs = targetMs / 4
  let best = firstMs >= longBatchMs ? firstMs : Number.POSITIVE_INFINITY
  let reps = 1
  let long = 0
  // (bounded: at most three long batches after the doubling, about 1.5 targets of calls)
  while (long < 3) {
    const t = now()
    if (isAsync) for (let i = 0; i < reps; i++) await fn()
    else for (let i = 0; i < reps; i++) fn()
    const dt = now() - t
    if (dt >= longBatchMs) {
      long++
      best = Math.min(best, dt / reps)
    } else reps *= 2
  }
  return best
}

/**
 * Calls `fn` until `ms` have passed (at least once) and it has made `calls` calls, or `maxMs` have
 * passed, so that the calls `calibrate` and the samples time run optimised code: without it the
 * first calls of a function that V8 takes long to optimise (a Hessian driver: 50 µs a call at
 * first, 0.33 µs later) set the calls per sample to a handful.
 *
 * The count, not the time alone: a large generated program (the graph-embedding Hessian's
 * forward-over-reverse sweep, a thousand lines at width 25) runs 10–20 times slower until V8's
 * optimising compile of it lands, and that compile runs on a background thread for 0.1–1 s of
 * wall time on the loaded 2-core machine. A 50 ms warm-up then left the 300 ms of samples in the
 * slow code in some processes and not in others (k = 10: 107× or 490–739× the objective, per
 * process). The background thread and the calling one are slowed alike by load, so the number
 * of calls made while the compile runs is about the same under any load (150–250 Hessians at
 * k = 10): a warm-up of a few hundred calls covers it where one of fixed time does not. A
 * nanosecond kernel makes its calls within `ms`; only a call of more than `maxMs / calls` waits
 * longer than `ms`. `now` is the clock (a test's own).
 */
export async function warmUp(
  fn: () => void | Promise<void>,
  isAsync: boolean,
  ms: number,
  calls = 0,
  maxMs = ms,
  now: () => number = () => performance.now(),
): Promise<void> {
  const start = now()
  let made = 0
  for (;;) {
    if (isAsync) await fn()
    else fn()
    made++
    const t = now() - start
    if (t >= maxMs || (t >= ms && made >= calls)) return
  }
}

/**
 * The quick and full settings. A sample lasts about 0.25 ms (0.5 ms in the full set): long enough
 * that the timer's and the sampling loop's cost per sample (under a microsecond) is lost in it,
 * short enough that most samples run without the process losing its core on a loaded machine
 * (a time slice is a few milliseconds; with 2 ms samples and a load average of 12 on 2 cores, the
 * median sample of the single-z wasm Bessel gradient read 42–140 ns against 34 ns in 0.1 ms ones).
 */
export const QUICK_MEASURE: MeasureOptions = {
  timeMs: 300,
  minSamples: 5,
  warmupMs: 50,
  warmupCalls: 500,
  maxWarmupMs: 1500,
  targetSampleMs: 0.25,
}
export const FULL_MEASURE: MeasureOptions = {
  timeMs: 1500,
  minSamples: 10,
  warmupMs: 200,
  warmupCalls: 1000,
  maxWarmupMs: 3000,
  targetSampleMs: 0.5,
}

/**
 * Time `fn`: warm-up, then samples of `inner` calls each, where `inner` is chosen so one sample
 * lasts about `targetSampleMs` (timer resolution and call overhead stay negligible for nanosecond
 * kernels), until `timeMs` of wall time have passed and there are `minSamples` samples (three, with
 * no warm-up of the timed loop, when one sample lasts longer than `timeMs`). Reports the median and
 * median absolute deviation per call.
 *
 * The samples (and the calibration) are read on `clocks.run`: the wall time less the time the
 * thread waited for a core (`run-clock.ts`), so that a sample that lost the core to another
 * process reads what it would have read had it kept it; the budget and the warm-up are wall time,
 * so that a run on a loaded machine lasts as long as before. Before, the samples were wall time
 * (tinybench's): a BA Jacobian of 3 ms read 3–22 ms a call from one run to the next on the loaded
 * development machine, its ratio to the objective 2.6–19×. The same samples' median on the wall
 * clock is returned too (`wallMedianMs`). A row whose work runs on other threads is timed with
 * `clocks.run` the wall clock (`wallClocks`; `Row.clock`).
 */
export async function measure(
  fn: () => void | Promise<void>,
  options: MeasureOptions,
  clocks: Pick<Clocks, 'wall' | 'run'> = sampleClocks(),
): Promise<Measurement> {
  const { wall, run } = clocks
  // calibrate (the function has already run once in its check)
  const t0 = run()
  const first = fn()
  const isAsync = first instanceof Promise
  if (isAsync) await first
  const firstMs = run() - t0
  if (firstMs < options.timeMs)
    await warmUp(fn, isAsync, options.warmupMs, options.warmupCalls, options.maxWarmupMs ?? options.warmupMs, wall)
  const single = await calibrate(fn, isAsync, firstMs, options.targetSampleMs, run)
  const inner = Math.max(1, Math.ceil(options.targetSampleMs / Math.max(single, 1e-6)))
  // each sample's time on the wall clock too, read outside the run clock's readings
  const state = { wall: 0 }
  const sample = sampleLoop(fn, inner, isAsync, run, run === wall ? undefined : wall, state)
  // calls slower than the whole time budget are already warm (check + calibration ran them):
  // three samples and no warm-up of the timed loop, so a quick run stays quick
  const slow = single * inner > options.timeMs
  if (!slow) {
    // the timed loop itself (new: V8 compiles it now)
    const start = wall()
    do await sample()
    while (wall() - start < options.warmupMs / 10)
  }
  const samples: number[] = []
  const walls: number[] = []
  const minSamples = slow ? 3 : options.minSamples
  const start = wall()
  while (samples.length < minSamples || (!slow && wall() - start < options.timeMs)) {
    const dt = await sample()
    samples.push(dt)
    walls.push(run === wall ? dt : state.wall)
  }
  return {
    medianMs: median(samples) / inner,
    madMs: medianAbsoluteDeviation(samples) / inner,
    wallMedianMs: median(walls) / inner,
    samples: samples.length,
    inner,
  }
}

/**
 * One timed sample of `inner` calls of `fn`, its time on `clock` (ms): for a synchronous `fn`, a
 * loop with the clock read around it, of its own source text per measurement (as `batchLoop`, so
 * that V8 shares no type feedback between rows). With `wall`, the sample's time on it is stored
 * in `state.wall` (its readings taken around `clock`'s).
 */
function sampleLoop(
  fn: () => void | Promise<void>,
  inner: number,
  isAsync: boolean,
  clock: () => number,
  wall: (() => number) | undefined,
  state: { wall: number },
): () => number | Promise<number> {
  if (isAsync)
    return async () => {
      const w = wall?.() ?? 0
      const t = clock()
      for (let i = 0; i < inner; i++) await fn()
      const dt = clock() - t
      if (wall) state.wall = wall() - w
      return dt
    }
  const body = wall
    ? 'const w = wall(); const t = clock(); for (let i = 0; i < inner; i++) fn(); const dt = clock() - t; state.wall = wall() - w; return dt'
    : 'const t = clock(); for (let i = 0; i < inner; i++) fn(); return clock() - t'
  return new Function(
    'fn',
    'inner',
    'clock',
    'wall',
    'state',
    `// sampled measurement ${++measurements}\nreturn () => { ${body} }`,
  )(fn, inner, clock, wall, state) as () => number
}

/**
 * A loop of `inner` calls of `fn`: a synchronous batch loop of its own per measurement (its own
 * source text, so V8 shares no type feedback between them): each loop calls one function, which
 * V8 may inline there, for every row alike. One shared loop inlined the first function measured
 * and called later ones through a megamorphic site, about 3.6 ns per call more: a third of the
 * 9 ns Bessel objective.
 */
function batchLoop(fn: () => void | Promise<void>, inner: number, isAsync: boolean): () => void | Promise<void> {
  return isAsync
    ? async () => {
        for (let i = 0; i < inner; i++) await fn()
      }
    : (new Function(
        'fn',
        'inner',
        `// measurement ${++measurements}\nreturn () => { for (let i = 0; i < inner; i++) fn() }`,
      )(fn, inner) as () => void)
}

/** This process's CPU time (all its threads), ms. */
const processCpuMs = (): number => {
  const u = process.cpuUsage()
  return (u.user + u.system) / 1000
}

/**
 * A sample ran uninterrupted when the process's CPU time over it is at least this fraction of its
 * wall time (the rest: the process waited for a core that other processes held).
 */
const UNINTERRUPTED = 0.9

/** Samples per side of a pair in `measurePaired` (a block of the row's, then one of the baseline's). */
export const PAIR_BLOCK = 8

/**
 * A timed batch loop of `inner` calls of a synchronous `fn`, as `batchLoop` but with the clocks
 * read inside it: it returns the wall time and stores in `state.whole` whether the process ran
 * all along (its CPU time at least `UNINTERRUPTED` of the wall time). Its own source text per
 * loop, like `batchLoop`, so that the row's loop and the baseline's share no call site.
 */
function timedLoop(
  fn: () => void,
  inner: number,
  now: () => number,
  cpu: () => number,
  state: { whole: boolean },
): () => number {
  return new Function(
    'fn',
    'inner',
    'now',
    'cpu',
    'state',
    'share',
    `// timed measurement ${++measurements}\nreturn () => { const c = cpu(); const t = now(); for (let i = 0; i < inner; i++) fn(); const wall = now() - t; state.whole = cpu() - c >= share * wall; return wall }`,
  )(fn, inner, now, cpu, state, UNINTERRUPTED) as () => number
}

/**
 * Whether rows are timed in pairs with their case's baseline: only with `TENET_BENCH_PAIRED=1`
 * (child processes inherit it). Not the default: in pairs, some rows ran slower than alone, in
 * the same process, for a reason not found (the single-z cpu Hessian 0.8–1.1 µs against 0.33 µs
 * alone; with a baseline that does nothing, 0.33 µs in pairs too); the cheap rows' ratios were
 * steadier in pairs (see the bench README, *The two cores of the development machine*).
 */
export function pairedEnabled(): boolean {
  return process.env.TENET_BENCH_PAIRED === '1'
}

/**
 * A case's baseline as `measurePaired` times it: its `run`, and the timed batch loop the first
 * pair measurement made for it (with its calls per sample), which later ones in the process reuse:
 * one compilation of the baseline's loop for every row of the process, as one baseline timing
 * served them all before (a new compilation per row gave the baseline a different speed per row:
 * 8.7–13 ns for the single-z Bessel series, and now and then 20–40 ns).
 */
export interface BaselineLoop {
  run: () => void
  inner?: number
  single?: number
  /** the timed batch loop (`timedLoop`), its state and the clocks it reads */
  timed?: () => number
  state?: { whole: boolean }
  clocks?: [() => number, () => number]
}

/** A row and its case's baseline timed in alternation (`measurePaired`). */
export interface PairedMeasurement {
  row: Measurement
  baseline: Measurement
  /** the median over the pairs of (the row's block median per call / the baseline's in the same pair) */
  ratio: number
  /** how many pairs the ratio's median is over */
  pairs: number
}

/**
 * Times `fn` (a row) and `baseline` (its case's baseline) in alternation: after a warm-up of
 * each (`warmupMs` of calls, then a tenth of that of both timed loops in alternation), pairs of
 * a block of `PAIR_BLOCK` samples of each (`inner` calls a sample, chosen as `measure` chooses
 * it; the order within a pair alternates), until `timeMs` has passed and there are `minSamples`
 * pairs (three pairs of one sample each, no warm-up, when a sample of either is longer than
 * `timeMs`). A pair's ratio is the row's block median over the baseline's; the result is the
 * median of the pairs' ratios: both sides of each ratio ran within milliseconds of each other,
 * under the same load.
 *
 * Why: the development machine's two cores share one physical core's execution resources (they
 * behave as hyperthreads): while any process runs on the other core, a single-z Bessel call
 * takes 24 ns instead of 17.4, the plain baseline 16.6 ns instead of 11.9, a chain of divisions
 * 1.8× longer, and the other core's load changes from one tenth of a second to the next. A
 * baseline timed once at the start of a case and a row timed seconds later were compared across
 * such changes: the single-z Bessel ratios read bimodal (cpu gradient 2.4× or 3.4×, the listing's
 * plain TS 1.4× or 2.7×). Within a pair both see the same load, and the ratio is the same in
 * both states (17.4/11.9 = 24.3/16.6 = 1.46).
 *
 * On a machine with more runnable processes than cores a sample may also lose the core for a
 * while (wall time counts it; one time slice is a few milliseconds, as long as a sample): the
 * ratio is the median over the pairs whose two samples ran uninterrupted (the process's CPU time
 * at least 90% of the wall time, `cpu`), where those are at least half of the pairs and at least
 * `minSamples`; otherwise over all pairs. `pairs` is how many the median is over. `now` and `cpu` are the clocks (a
 * test's own).
 */
export async function measurePaired(
  fn: () => void | Promise<void>,
  baseline: BaselineLoop,
  options: MeasureOptions,
  now: () => number = () => performance.now(),
  cpu: () => number = processCpuMs,
): Promise<PairedMeasurement> {
  const t0 = now()
  const first = fn()
  const isAsync = first instanceof Promise
  if (isAsync) await first
  const firstMs = now() - t0
  if (firstMs < options.timeMs)
    await warmUp(fn, isAsync, options.warmupMs, options.warmupCalls, options.maxWarmupMs ?? options.warmupMs, now)
  const single = await calibrate(fn, isAsync, firstMs, options.targetSampleMs, now)
  const inner = Math.max(1, Math.ceil(options.targetSampleMs / Math.max(single, 1e-6)))
  if (baseline.timed === undefined || baseline.clocks?.[0] !== now || baseline.clocks[1] !== cpu) {
    const t1 = now()
    baseline.run()
    const firstB = now() - t1
    if (firstB < options.timeMs)
      await warmUp(
        baseline.run,
        false,
        options.warmupMs,
        options.warmupCalls,
        options.maxWarmupMs ?? options.warmupMs,
        now,
      )
    baseline.single = await calibrate(baseline.run, false, firstB, options.targetSampleMs, now)
    baseline.inner = Math.max(1, Math.ceil(options.targetSampleMs / Math.max(baseline.single, 1e-6)))
    baseline.state = { whole: true }
    baseline.timed = timedLoop(baseline.run, baseline.inner, now, cpu, baseline.state)
    baseline.clocks = [now, cpu]
  }
  const singleB = baseline.single!
  const innerB = baseline.inner!
  const baseTimed = baseline.timed
  const baseState = baseline.state!
  // the row's timed loop (the clocks read inside it), or for a row that returns promises its
  // batch loop timed here
  const state = { whole: true }
  const rowTimed = isAsync ? undefined : timedLoop(fn as () => void, inner, now, cpu, state)
  const rowLoop = batchLoop(fn, inner, isAsync)
  const timeRow = async (): Promise<number> => {
    const c = cpu()
    const t = now()
    await rowLoop()
    const wall = now() - t
    state.whole = cpu() - c >= UNINTERRUPTED * wall
    return wall
  }
  const slow = single * inner > options.timeMs || singleB * innerB > options.timeMs
  if (!slow) {
    // the two timed loops themselves (each new: V8 compiles them now)
    const start = now()
    do {
      if (rowTimed) rowTimed()
      else await timeRow()
      baseTimed()
    } while (now() - start < options.warmupMs / 10)
  }
  const rows: number[] = []
  const bases: number[] = []
  const ratios: number[] = []
  const whole: number[] = []
  const start = now()
  const minPairs = slow ? 3 : options.minSamples
  // a pair is a block of samples of each: the median of `block` samples of the row over the median
  // of `block` of the baseline (switching between the two at every sample slowed some rows)
  const block = slow ? 1 : PAIR_BLOCK
  const rs: number[] = []
  const bs: number[] = []
  let clean = true
  const rowBlock = async () => {
    for (let k = 0; k < block; k++) {
      rs[k] = (rowTimed ? rowTimed() : await timeRow()) / inner
      clean &&= state.whole
    }
  }
  const baseBlock = () => {
    for (let k = 0; k < block; k++) {
      bs[k] = baseTimed() / innerB
      clean &&= baseState.whole
    }
  }
  while (ratios.length < minPairs || (!slow && now() - start < options.timeMs)) {
    clean = true
    if (ratios.length % 2 === 0) {
      await rowBlock()
      baseBlock()
    } else {
      baseBlock()
      await rowBlock()
    }
    rows.push(...rs)
    bases.push(...bs)
    const ratio = median(rs) / median(bs)
    ratios.push(ratio)
    if (clean) whole.push(ratio)
  }
  // the pairs that ran without the process losing its core, where they are most of them and
  // enough (a row that waits, on a GPU or another thread, never has the CPU time of its wall
  // time: all pairs)
  const used = whole.length * 2 >= ratios.length && whole.length >= minPairs ? whole : ratios
  return {
    row: {
      medianMs: median(rows),
      madMs: medianAbsoluteDeviation(rows),
      wallMedianMs: median(rows),
      samples: rows.length,
      inner,
    },
    baseline: {
      medianMs: median(bases),
      madMs: medianAbsoluteDeviation(bases),
      wallMedianMs: median(bases),
      samples: bases.length,
      inner: innerB,
    },
    ratio: median(used),
    pairs: used.length,
  }
}
