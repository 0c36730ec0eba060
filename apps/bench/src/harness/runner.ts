import { machineInfo, type MachineInfo } from './machine.js'
import { FULL_MEASURE, measure, QUICK_MEASURE, type MeasureOptions } from './measure.js'
import { createProgress, type Progress } from './progress.js'
import { isNotApplicable, type CaseOptions, type RowKind, type StudyResult, type Workload } from './types.js'

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
  /** medianMs / the plain-TS objective's median on the same case */
  ratio?: number
  /** heap retained by the row's setup (bytes) */
  setupHeapBytes?: number
}

export interface CaseResult {
  label: string
  params: Record<string, number | string>
  baseline: { name: string; medianMs: number; madMs: number; samples: number }
  /** time to build (generate or read) the instance */
  makeMs: number
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
  options: { full: boolean; adbenchDir?: string; measure: MeasureOptions }
  workloads: WorkloadResult[]
}

export interface RunOptions extends CaseOptions {
  measure?: MeasureOptions
  progress?: Progress
  /** run the workloads' studies (leapfrog, graph-embedding, checkpoint); default true */
  studies?: boolean
  /** Time budget of the whole run in ms: rows (and cases) not started by then are reported n/a. */
  budgetMs?: number
}

const maybeGc = (): void => {
  const g = (globalThis as { gc?: () => void }).gc
  if (typeof g === 'function') g()
}

/**
 * Run every case of every workload: time the plain-TS baseline, then each row — set it up,
 * check its answer against the float64 reference (a failing check is reported as "wrong" and
 * never timed), time it, dispose it. Heap and RSS are sampled throughout for the peak figures.
 */
export async function runSuite(workloads: Workload[], options: RunOptions): Promise<SuiteResult> {
  const startedAt = new Date()
  const t0 = performance.now()
  const measureOptions = options.measure ?? (options.full ? FULL_MEASURE : QUICK_MEASURE)
  const progress = options.progress ?? createProgress(process.stderr, false)
  const plan = workloads.map((w) => ({ w, cases: w.cases(options) }))
  progress.start(
    plan.reduce(
      (s, { w, cases }) => s + cases.length * (w.rows.length + 1) + (w.study && options.studies !== false ? 1 : 0),
      0,
    ),
  )
  const results: WorkloadResult[] = []
  for (const { w, cases } of plan) {
    const wStart = performance.now()
    maybeGc()
    const heap0 = process.memoryUsage().heapUsed
    let peakHeap = heap0
    let peakRss = process.memoryUsage.rss()
    const sample = (): void => {
      const m = process.memoryUsage()
      if (m.heapUsed > peakHeap) peakHeap = m.heapUsed
      if (m.rss > peakRss) peakRss = m.rss
    }
    const caseResults: CaseResult[] = []
    const rowResults: RowResult[] = []
    for (const spec of cases) {
      const mk = performance.now()
      const instance = spec.make()
      const makeMs = performance.now() - mk
      sample()
      progress.step(`${w.id} ${spec.label} · baseline`)
      const base = w.baseline.setup(instance)
      base.run()
      const bm = await measure(() => base.run(), measureOptions)
      sample()
      caseResults.push({
        label: spec.label,
        params: spec.params,
        baseline: { name: w.baseline.name, medianMs: bm.medianMs, madMs: bm.madMs, samples: bm.samples },
        makeMs,
      })
      for (const row of w.rows) {
        progress.step(`${w.id} ${spec.label} · ${row.name} ${row.kind}`)
        const base: Omit<RowResult, 'status'> = {
          row: row.name,
          family: row.family ?? row.name,
          kind: row.kind,
          case: spec.label,
        }
        if (options.budgetMs !== undefined && performance.now() - t0 > options.budgetMs) {
          rowResults.push({
            ...base,
            status: 'n/a',
            reason: `not run: the time budget (--budget ${Math.round(options.budgetMs / 1000)} s) was spent`,
          })
          continue
        }
        let prepared: Awaited<ReturnType<typeof row.setup>>
        const h0 = process.memoryUsage().heapUsed
        try {
          prepared = await row.setup(instance)
        } catch (e) {
          rowResults.push({ ...base, status: 'error', reason: `setup failed: ${errorText(e)}` })
          continue
        }
        if (isNotApplicable(prepared)) {
          rowResults.push({ ...base, status: 'n/a', reason: prepared.na })
          continue
        }
        const setupHeapBytes = Math.max(0, process.memoryUsage().heapUsed - h0)
        sample()
        try {
          const check = await prepared.check()
          if (!check.ok) {
            rowResults.push({
              ...base,
              status: 'wrong',
              error: check.error,
              reason: check.reason ?? 'answer differs from the float64 reference',
              setupHeapBytes,
            })
            continue
          }
          const m = await measure(() => prepared.run(), measureOptions)
          sample()
          rowResults.push({
            ...base,
            status: 'ok',
            error: check.error,
            ...(check.reason ? { reason: check.reason } : {}),
            medianMs: m.medianMs,
            madMs: m.madMs,
            samples: m.samples,
            ratio: m.medianMs / bm.medianMs,
            setupHeapBytes,
          })
        } catch (e) {
          rowResults.push({ ...base, status: 'error', reason: errorText(e), setupHeapBytes })
        } finally {
          try {
            prepared.dispose?.()
          } catch {
            // a failing dispose must not hide the row's result
          }
        }
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
      sample()
    }
    results.push({
      id: w.id,
      title: w.title,
      ...(w.description ? { description: w.description } : {}),
      cases: caseResults,
      rows: rowResults,
      memory: { peakHeapUsedBytes: peakHeap, heapDeltaBytes: Math.max(0, peakHeap - heap0), peakRssBytes: peakRss },
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
    },
    workloads: results,
  }
}

function errorText(e: unknown): string {
  if (e instanceof Error) return e.message.split('\n')[0]
  return String(e)
}
