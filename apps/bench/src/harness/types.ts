/**
 * The plug-in shapes of the suite. A workload says what is computed and on which cases; a row is
 * one way of computing it (an engine × a kind of derivative). Rows come from the workload itself
 * and from row families (one file per engine under `src/rows/`), so an engine is added as one file.
 */

export type RowKind = 'objective' | 'inverse' | 'gradient' | 'jacobian' | 'hessian' | 'higher-order'

/** The result of checking a row's answer against the float64 reference. */
export interface CheckResult {
  ok: boolean
  /** the error measure the row chose (usually max scaled error, see `maxScaledError`) */
  error: number
  reason?: string
}

/** A row that is ready to run on one case. `run` is what is timed; `check` is called first. */
export interface PreparedRow {
  run(): void | Promise<void>
  check(): CheckResult | Promise<CheckResult>
  /** free engine resources (tensors, wasm buffers) */
  dispose?(): void
}

/** A row that cannot express the workload (or this case) says why. */
export interface NotApplicable {
  na: string
}

export interface Row<C> {
  /** engine / variant, e.g. "plain TS", "TF.js (cpu)", "jax-js (wasm)" */
  name: string
  kind: RowKind
  /** row family this row belongs to (defaults to the name) */
  family?: string
  /**
   * `'wall'`: time this row's samples on the wall clock. For rows whose work also runs on other
   * threads (a worker pool), which the run clock, read on the calling thread alone, times wrongly
   * both ways (`run-clock.ts`). Absent: the run clock where the system reports it.
   */
  clock?: 'wall'
  /**
   * The name of the row (same workload, kind and case) whose speed-up this row is: the report
   * gives that row's time over this one's, both on the wall clock (a thread row over its
   * one-thread row; see `speedUps` in `report/write.ts`).
   */
  speedUpOver?: string
  setup(c: C): PreparedRow | NotApplicable | Promise<PreparedRow | NotApplicable>
}

export interface CaseOptions {
  /** run the large sizes too */
  full: boolean
  /** read ADBench's own files from this folder instead of generating */
  adbenchDir?: string
}

/** One instance size of a workload. `make` builds the instance lazily. */
export interface CaseSpec<C> {
  label: string
  /** numbers that describe the size, e.g. { d: 10, k: 25, n: 10000 } */
  params: Record<string, number | string>
  make(): C
}

/** The baseline: the plain-TS objective, timed in the same process as every row. */
export interface Baseline<C> {
  name: string
  setup(c: C): { run(): void }
}

export interface Workload<C = any> {
  id: string
  title: string
  /** one line on what is measured, for the report */
  description?: string
  cases(options: CaseOptions): CaseSpec<C>[]
  baseline: Baseline<C>
  rows: Row<C>[]
  /** extra study (not timed rows) run after the rows, e.g. leapfrog's error-vs-steps series */
  study?(options: CaseOptions): StudyResult | Promise<StudyResult>
}

/** A line-chart series set produced by a workload's study. */
export interface StudyResult {
  title: string
  xLabel: string
  yLabel: string
  logX: boolean
  logY: boolean
  series: { name: string; points: [number, number][] }[]
  /** lines of findings printed under the chart and after the text table (e.g. a per-case summary) */
  notes?: string[]
}

export const isNotApplicable = (r: PreparedRow | NotApplicable): r is NotApplicable =>
  typeof (r as NotApplicable).na === 'string'
