import { blackBox } from './black-box.js'
import { machineInfo, type MachineInfo } from './machine.js'
import {
  type BaselineLoop,
  FULL_MEASURE,
  measure,
  measurePaired,
  pairedEnabled,
  QUICK_MEASURE,
  type MeasureOptions,
  wallClocks,
} from './measure.js'
import { createProgress, type Progress } from './progress.js'
import { sampleClocks } from './run-clock.js'
import { isNotApplicable, type CaseOptions, type RowKind, type StudyResult, type Workload } from './types.js'

/**
 * Where rows run: `off`, all in this process; `detach`, each case in fresh processes, a new one
 * after any row that invalidates a V8 protector; `row`, every row in a fresh process.
 */
export type Isolation = 'off' | 'detach' | 'row'

export type RowStatus = 'ok' | 'wrong' | 'n/a' | 'error'

export interface RowResult {
  row: string
  family: string
  kind: RowKind
  case: string
  status: RowStatus
  /** why it is n/a, wrong or errored (or a remark on an ok row) */
  reason?: string
  /** error vs the float64 reference, as the row's check measured it */
  error?: number
  medianMs?: number
  madMs?: number
  samples?: number
  /**
   * The clock of the row's samples (`run-clock.ts`): `run`, wall time less the calling thread's
   * waits for a core; `wall`, for rows whose work runs on other threads (`Row.clock`), rows timed
   * in pairs with the baseline (`measurePaired`), and every row where the system does not report
   * the waits. Absent in results written before the per-row clock.
   */
  clock?: 'run' | 'wall'
  /** the median of the row's samples on the wall clock, per call (ms): `medianMs` where `clock` is `wall` */
  wallMedianMs?: number
  /** the row this row's speed-up is over (`Row.speedUpOver`; the report's speed-ups) */
  speedUpOver?: string
  /**
   * The row's time over the plain-TS objective's on the same case: the median of the ratios of
   * `pairs` pairs of samples of the two timed in alternation (`measurePaired`), or, where the
   * pairs are absent, medianMs / the case's baseline median on the same clock (a row on the wall
   * clock: over the baseline samples' wall median)
   */
  ratio?: number
  /** how many alternated pairs of samples of the row and the baseline `ratio` comes from */
  pairs?: number
  /** the baseline's median per call in the pairs (ms) */
  pairedBaselineMs?: number
  /** heap retained by the row's setup (bytes) */
  setupHeapBytes?: number
  /**
   * V8 protectors this row invalidated in its process (e.g. `ArrayBufferDetaching`: it detached
   * an ArrayBuffer); recorded by isolated runs only (`runIsolated`)
   */
  invalidated?: string[]
  /** V8 protectors already invalidated in its process when the row started (isolated runs only) */
  ranAfter?: string[]
  /**
   * A repeated run's (`--repeat N`, N > 1; `repeat.ts`) results of this row, one per repeat in
   * the order they ran; the fields above are then their summary (see `summariseRepeats`)
   */
  repeats?: RepeatResult[]
  /** a repeated run's least and greatest `ratio` of the repeats where the row was ok */
  ratioRange?: [number, number]
  /** a repeated run's count of repeats where the row was ok (and timed) */
  okRepeats?: number
}

/** One repeat's result of a row: a single run's `RowResult` less the fields that name the row. */
export type RepeatResult = Omit<
  RowResult,
  'row' | 'family' | 'kind' | 'case' | 'speedUpOver' | 'repeats' | 'ratioRange' | 'okRepeats'
>

export interface CaseResult {
  label: string
  params: Record<string, number | string>
  baseline: { name: string; medianMs: number; madMs: number; samples: number; wallMedianMs?: number }
  /** time to build (generate or read) the instance */
  makeMs: number
  /**
   * A repeated run's (`--repeat N`, N > 1) baseline and build time of each repeat, in the order
   * they ran (null: the case has none in that repeat: its process failed, or the repeat was not
   * run); `baseline` and `makeMs` are then the medians of those present (`samples`: their sum)
   */
  repeats?: Array<{ baseline: CaseResult['baseline']; makeMs: number } | null>
}

export interface WorkloadResult {
  id: string
  title: string
  description?: string
  cases: CaseResult[]
  rows: RowResult[]
  memory: { peakHeapUsedBytes: number; heapDeltaBytes: number; peakRssBytes: number }
  study?: StudyResult
  durationMs: number
}

export interface SuiteResult {
  startedAt: string
  durationMs: number
  machine: MachineInfo
  options: {
    full: boolean
    adbenchDir?: string
    measure: MeasureOptions
    isolation?: Isolation
    /**
     * The clock of the baselines' samples and of every row's that does not give its own
     * (`RowResult.clock`: rows on other threads and rows in pairs are on the wall clock): `run`,
     * wall time less the waits for a core (Linux), or `wall` (`run-clock.ts`); absent in results
     * written before the run clock
     */
    clock?: 'run' | 'wall'
    /** how many times every case ran (`--repeat`); absent for one */
    repeat?: number
  }
  workloads: WorkloadResult[]
}

export interface RunOptions extends CaseOptions {
  measure?: MeasureOptions
  progress?: Progress
  /** run the workloads' studies (leapfrog, graph-embedding, checkpoint); default true */
  studies?: boolean
  /** Time budget of the whole run in ms: rows (and cases) not started by then are reported n/a. */
  budgetMs?: number
  /** time rows in pairs with the baseline (`measurePaired`); default: `TENET_BENCH_PAIRED=1` */
  paired?: boolean
}

/** The plain-TS objective's timing on one case (the denominator of every ratio of that case). */
export interface BaselineTiming {
  medianMs: number
  madMs: number
  samples: number
  /** the same samples' median on the wall clock (the denominator of rows timed on it) */
  wallMedianMs?: number
}

/** Peak heap and RSS, sampled between the steps of a workload (`sample`), from a start heap. */
export interface MemorySampler {
  sample(): void
  /** The peaks so far; `heapDeltaBytes` is the peak heap over the heap at the sampler's start. */
  result(): WorkloadResult['memory']
}

export const maybeGc = (): void => {
  const g = (globalThis as { gc?: () => void }).gc
  if (typeof g === 'function') g()
}

/** A memory sampler that starts from the current heap (after a GC where `--expose-gc` allows one). */
export function memorySampler(): MemorySampler {
  maybeGc()
  const heap0 = process.memoryUsage().heapUsed
  let peakHeap = heap0
  let peakRss = process.memoryUsage.rss()
  return {
    sample() {
      const m = process.memoryUsage()
      if (m.heapUsed > peakHeap) peakHeap = m.heapUsed
      if (m.rss > peakRss) peakRss = m.rss
    },
    result: () => ({
      peakHeapUsedBytes: peakHeap,
      heapDeltaBytes: Math.max(0, peakHeap - heap0),
      peakRssBytes: peakRss,
    }),
  }
}

/**
 * A case's baseline set up on its instance and run once, for timing in pairs with a row
 * (`runRow`); `usable` says whether it may be (default: always).
 */
export interface PairedBaseline extends BaselineLoop {
  usable?: () => boolean
}

/** Sets up the baseline on `instance` and runs it once (for `timeBaseline` and `runRow`'s pairs). */
export function prepareBaseline(w: Workload, instance: unknown): PairedBaseline {
  const base = w.baseline.setup(instance)
  base.run()
  return { run: ownRun(base) as () => void }
}

/** Sets up the baseline on `instance` (or takes `prepared`), runs it once and times it. */
export async function timeBaseline(
  w: Workload,
  instance: unknown,
  measureOptions: MeasureOptions,
  prepared: PairedBaseline = prepareBaseline(w, instance),
): Promise<BaselineTiming> {
  const bm = await measure(prepared.run, measureOptions)
  return { medianMs: bm.medianMs, madMs: bm.madMs, samples: bm.samples, wallMedianMs: bm.wallMedianMs }
}

/**
 * One row on one case: set it up, check its answer against the float64 reference (a failing
 * check is reported as "wrong" and never timed), time it, dispose it. With `baseline` (the
 * pairs on: `RunOptions.paired`, `TENET_BENCH_PAIRED=1`), unless `baseline.usable()` says no, the
 * row is timed in alternation with it and its ratio is the median of the pairs' ratios
 * (`measurePaired`, on the wall clock); otherwise its median over the baseline's on the row's
 * clock: the run clock, or the wall clock for a row that says so (`Row.clock`) and everywhere
 * the system does not report the waits for a core. `baselineMs` is the case's baseline timing
 * (or its median alone, taken for both clocks).
 */
export async function runRow(
  row: Workload['rows'][number],
  caseLabel: string,
  instance: unknown,
  baselineMs: number | BaselineTiming,
  measureOptions: MeasureOptions,
  sample: () => void = () => {},
  baseline?: PairedBaseline,
): Promise<RowResult> {
  const base: Omit<RowResult, 'status'> = {
    row: row.name,
    family: row.family ?? row.name,
    kind: row.kind,
    case: caseLabel,
    ...(row.speedUpOver ? { speedUpOver: row.speedUpOver } : {}),
  }
  let prepared: Awaited<ReturnType<typeof row.setup>>
  const h0 = process.memoryUsage().heapUsed
  try {
    prepared = await row.setup(instance)
  } catch (e) {
    return { ...base, status: 'error', reason: `setup failed: ${errorText(e)}` }
  }
  if (isNotApplicable(prepared)) return { ...base, status: 'n/a', reason: prepared.na }
  const setupHeapBytes = Math.max(0, process.memoryUsage().heapUsed - h0)
  sample()
  try {
    const check = await prepared.check()
    if (!check.ok)
      return {
        ...base,
        status: 'wrong',
        error: check.error,
        reason: check.reason ?? 'answer differs from the float64 reference',
        setupHeapBytes,
      }
    const paired = baseline && (baseline.usable?.() ?? true)
    const pm = paired ? await measurePaired(ownRun(prepared), baseline, measureOptions) : undefined
    const onWall = row.clock === 'wall'
    const m = pm ? pm.row : await measure(ownRun(prepared), measureOptions, onWall ? wallClocks() : sampleClocks())
    sample()
    const clock: 'run' | 'wall' = pm || onWall || !sampleClocks().delayKnown ? 'wall' : 'run'
    const b: BaselineTiming =
      typeof baselineMs === 'number' ? { medianMs: baselineMs, madMs: 0, samples: 0 } : baselineMs
    const denominator = onWall ? (b.wallMedianMs ?? b.medianMs) : b.medianMs
    return {
      ...base,
      status: 'ok',
      error: check.error,
      ...(check.reason ? { reason: check.reason } : {}),
      medianMs: m.medianMs,
      madMs: m.madMs,
      samples: m.samples,
      clock,
      wallMedianMs: m.wallMedianMs,
      ratio: pm ? pm.ratio : m.medianMs / denominator,
      ...(pm ? { pairs: pm.pairs, pairedBaselineMs: pm.baseline.medianMs } : {}),
      setupHeapBytes,
    }
  } catch (e) {
    return { ...base, status: 'error', reason: errorText(e), setupHeapBytes }
  } finally {
    try {
      prepared.dispose?.()
    } catch {
      // a failing dispose must not hide the row's result
    }
  }
}

/** The result of a row not run because the time budget was spent. */
export const overBudget = (
  row: { name: string; family?: string; kind: RowKind },
  caseLabel: string,
  budgetMs: number,
): RowResult => ({
  row: row.name,
  family: row.family ?? row.name,
  kind: row.kind,
  case: caseLabel,
  status: 'n/a',
  reason: `not run: the time budget (--budget ${Math.round(budgetMs / 1000)} s) was spent`,
})

/** The number of progress steps of a suite: a baseline and every row per case, and each study. */
export const plannedSteps = (plan: Array<{ w: Workload; cases: unknown[] }>, studies: boolean | undefined): number =>
  plan.reduce((s, { w, cases }) => s + cases.length * (w.rows.length + 1) + (w.study && studies !== false ? 1 : 0), 0)

/**
 * Run every case of every workload in this process: time the plain-TS baseline, then each row
 * (see `runRow`). Heap and RSS are sampled throughout for the peak figures. Rows run after
 * whatever earlier rows did to the process (see `runIsolated` for fresh processes).
 */
export async function runSuite(workloads: Workload[], options: RunOptions): Promise<SuiteResult> {
  const startedAt = new Date()
  const t0 = performance.now()
  const measureOptions = options.measure ?? (options.full ? FULL_MEASURE : QUICK_MEASURE)
  const progress = options.progress ?? createProgress(process.stderr, false)
  const plan = workloads.map((w) => ({ w, cases: w.cases(options) }))
  progress.start(plannedSteps(plan, options.studies))
  const results: WorkloadResult[] = []
  for (const { w, cases } of plan) {
    const wStart = performance.now()
    const memory = memorySampler()
    const caseResults: CaseResult[] = []
    const rowResults: RowResult[] = []
    for (const spec of cases) {
      const mk = performance.now()
      const made = spec.make()
      const makeMs = performance.now() - mk
      // the case's inputs through the black box, for the baseline and every row alike (black-box.ts)
      const instance = blackBox(made)
      memory.sample()
      progress.step(`${w.id} ${spec.label} · baseline`)
      const pairedBase = prepareBaseline(w, instance)
      const bm = await timeBaseline(w, instance, measureOptions, pairedBase)
      memory.sample()
      caseResults.push({ label: spec.label, params: spec.params, baseline: { name: w.baseline.name, ...bm }, makeMs })
      for (const row of w.rows) {
        progress.step(`${w.id} ${spec.label} · ${row.name} ${row.kind}`)
        if (options.budgetMs !== undefined && performance.now() - t0 > options.budgetMs) {
          rowResults.push(overBudget(row, spec.label, options.budgetMs))
          continue
        }
        const pairs = (options.paired ?? pairedEnabled()) ? pairedBase : undefined
        rowResults.push(await runRow(row, spec.label, instance, bm, measureOptions, memory.sample, pairs))
      }
    }
    let study: StudyResult | undefined
    if (w.study && options.studies !== false) {
      progress.step(`${w.id} · study`)
      try {
        study = await w.study(options)
      } catch (e) {
        progress.note(`${w.id}: study failed: ${errorText(e)}`)
      }
      memory.sample()
    }
    results.push({
      id: w.id,
      title: w.title,
      ...(w.description ? { description: w.description } : {}),
      cases: caseResults,
      rows: rowResults,
      memory: memory.result(),
      ...(study ? { study } : {}),
      durationMs: performance.now() - wStart,
    })
  }
  progress.done()
  return {
    startedAt: startedAt.toISOString(),
    durationMs: performance.now() - t0,
    machine: machineInfo(),
    options: {
      full: options.full,
      ...(options.adbenchDir ? { adbenchDir: options.adbenchDir } : {}),
      measure: measureOptions,
      clock: sampleClocks().delayKnown ? 'run' : 'wall',
    },
    workloads: results,
  }
}

export function errorText(e: unknown): string {
  if (e instanceof Error) return e.message.split('\n')[0]
  return String(e)
}

let ownRuns = 0
/**
 * \`() => p.run()\` as a function of its own text per row. One arrow here served every row of a
 * process, and V8 keeps one type feedback per function literal, so that after the first row its
 * \`run()\` call site was polymorphic and a later row's driver was not inlined there: the wasm
 * scalar-mul gradient of the driver with wrappers took 57–100 ns measured after the cpu row
 * through the shared arrow, 39–40 ns through its own (one process, loaded 2-core machine). A row
 * measured after another in its process (such as the cpu scalar-mul row of suite runs, 2.2–4.3×)
 * paid it.
 */
function ownRun(p: { run(): void | Promise<void> }): () => void | Promise<void> {
  return new Function('p', `// row ${++ownRuns}\nreturn () => p.run()`)(p) as () => void | Promise<void>
}
