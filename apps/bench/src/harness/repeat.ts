/**
 * `--repeat N`: the whole selection run N times over, each repeat a complete run of the suite
 * (`runSuite` or `runIsolated`), so that the repeats of one case are spread over the run rather
 * than back to back, and, with isolation on, each repeat's rows run in a new set of processes (a
 * process's plain-TS baseline can be fast or slow for its whole life: one run samples one
 * process). With `--isolate off` every repeat runs in the one process, after the earlier repeats:
 * the spread then leaves out what varies from process to process.
 *
 * Every ratio is a row's time over the baseline timed in the same repeat (in the same process set),
 * never over another repeat's. The repeats are then merged into one `SuiteResult` whose fields keep
 * their single-run meaning, so that readers of `results.json` written before the repeats still
 * read the figures. The shape, for N > 1 (a run of N = 1 is written exactly as before, with none of
 * these fields):
 *
 * - `options.repeat`: N.
 * - `workloads[].cases[].repeats[r]`: repeat r's `{ baseline, makeMs }`, or `null` where the case
 *   has none in it (its process failed, or the time budget stopped the repeats before it); the
 *   case's `baseline` and `makeMs` are the medians of those present (`baseline.samples`: their sum).
 * - `workloads[].rows[].repeats[r]`: repeat r's `RowResult` less the fields that name the row
 *   (`RepeatResult`), `status` "n/a" where repeat r did not run for the time budget. The row's own
 *   fields summarise them (`summariseRepeats`): `ratio` is the median of the ratios of the repeats
 *   where it was ok, `ratioRange` their least and greatest, `okRepeats` how many; `medianMs`,
 *   `madMs`, `wallMedianMs` and `pairedBaselineMs` are the medians of those repeats' values,
 *   `samples` and `pairs` their sums; `error` is the largest of all repeats'; `status` is "wrong"
 *   if any repeat's check failed, else "ok" if any repeat was ok, else the repeats' status
 *   ("error" before "n/a"), with a `reason` that counts the repeats of each outcome where they differ.
 * - Per workload: `memory` is the largest of the repeats', `durationMs` their sum, `study` the first
 *   repeat's (later repeats skip the studies).
 *
 * The time budget (`--budget`) is the whole run's: each repeat gets an equal share of what is left
 * when it starts, so that a short budget cuts the same rows from every repeat, and a repeat that
 * would start with none left is not run (its rows are n/a).
 */
import type { Progress } from './progress.js'
import { createProgress } from './progress.js'
import type { CaseResult, RepeatResult, RowResult, SuiteResult, WorkloadResult } from './runner.js'
import { median } from './stats.js'

/** The `--repeat` option's value: a whole number ≥ 1 (absent: 1). */
export function parseRepeat(text: string | undefined): number {
  if (text === undefined) return 1
  const n = /^\s*\d+\s*$/.test(text) ? Number(text) : Number.NaN
  if (!Number.isSafeInteger(n) || n < 1)
    throw new Error(`--repeat must be a whole number of runs, 1 or more, not "${text}"`)
  return n
}

/** What one repeat is given: its index, its share of the time budget, and whether to run the studies. */
export interface RepeatRun {
  /** 0 for the first repeat */
  repeat: number
  budgetMs?: number
  studies: boolean
  progress: Progress
}

export interface RepeatOptions {
  /** the whole run's time budget in ms (`--budget`) */
  budgetMs?: number
  /** run the workloads' studies (in the first repeat only); default true */
  studies?: boolean
  progress?: Progress
}

/**
 * Runs `run` `n` times (see the module comment) and merges the results (`mergeRepeats`); with
 * `n` = 1, returns the one result as it is.
 */
export async function runRepeated(
  n: number,
  run: (r: RepeatRun) => Promise<SuiteResult>,
  options: RepeatOptions = {},
): Promise<SuiteResult> {
  const progress = options.progress ?? createProgress(process.stderr, false)
  const studies = options.studies !== false
  if (n === 1)
    return run({
      repeat: 0,
      ...(options.budgetMs !== undefined ? { budgetMs: options.budgetMs } : {}),
      studies,
      progress,
    })
  const t0 = performance.now()
  const results: Array<SuiteResult | undefined> = []
  for (let r = 0; r < n; r++) {
    const left = options.budgetMs === undefined ? undefined : options.budgetMs - (performance.now() - t0)
    if (r > 0 && left !== undefined && left <= 0) {
      progress.note(`repeat ${r + 1} of ${n} not run: the time budget was spent`)
      results.push(undefined)
      continue
    }
    // one repeat's progress: its own count of steps, one "done" at the end of all
    const inner: Progress = {
      start(total) {
        progress.start(total)
        progress.note(`repeat ${r + 1} of ${n}`)
      },
      step: (label) => progress.step(label),
      note: (message) => progress.note(message),
      done() {},
    }
    results.push(
      await run({
        repeat: r,
        ...(left !== undefined ? { budgetMs: left / (n - r) } : {}),
        studies: studies && r === 0,
        progress: inner,
      }),
    )
  }
  progress.done()
  const merged = mergeRepeats(results, options.budgetMs)
  merged.durationMs = performance.now() - t0
  return merged
}

/** A row's identity in a workload's results: family, name, kind and case. */
const rowKey = (r: RowResult): string => `${r.family}\u0000${r.row}\u0000${r.kind}\u0000${r.case}`

/** `r` less the fields that name the row. */
function repeatOf(r: RowResult): RepeatResult {
  const { row: _r, family: _f, kind: _k, case: _c, speedUpOver: _s, ...rest } = r
  return rest
}

/**
 * The repeats' results as one (see the module comment). `results[r]` is repeat r's, `undefined`
 * where it was not run for the time budget `budgetMs`; the first must be present.
 */
export function mergeRepeats(results: Array<SuiteResult | undefined>, budgetMs?: number): SuiteResult {
  const first = results[0]
  if (!first) throw new Error('mergeRepeats: the first repeat has no result')
  const n = results.length
  const skipped: RepeatResult = {
    status: 'n/a',
    reason: `not run: the time budget (--budget ${Math.round((budgetMs ?? 0) / 1000)} s) was spent before this repeat`,
  }
  const workloads: WorkloadResult[] = first.workloads.map((w0) => {
    const ws = results.map((s) => s?.workloads.find((w) => w.id === w0.id))
    // cases by label, in the order they first appear
    const labels = [...new Set(ws.flatMap((w) => w?.cases.map((c) => c.label) ?? []))]
    const cases = labels.map((label) => mergeCase(ws.map((w) => w?.cases.find((c) => c.label === label))))
    // rows by identity (and place among rows of the same identity), in the order they first appear
    const keyed = ws.map((w) => {
      const seen = new Map<string, number>()
      return new Map(
        (w?.rows ?? []).map((r) => {
          const k = rowKey(r)
          const i = seen.get(k) ?? 0
          seen.set(k, i + 1)
          return [`${k}\u0000${i}`, r] as const
        }),
      )
    })
    const keys = [...new Set(keyed.flatMap((m) => [...m.keys()]))]
    const rows = keys.map((k) => {
      const some = keyed.find((m) => m.has(k))!.get(k)!
      const repeats = keyed.map((m, r): RepeatResult => {
        const x = m.get(k)
        if (x) return repeatOf(x)
        return ws[r] ? { status: 'error', reason: 'absent from this repeat’s results' } : skipped
      })
      return summariseRepeats(
        {
          row: some.row,
          family: some.family,
          kind: some.kind,
          case: some.case,
          ...(some.speedUpOver ? { speedUpOver: some.speedUpOver } : {}),
        },
        repeats,
      )
    })
    const present = ws.filter((w): w is WorkloadResult => w !== undefined)
    const study = present.find((w) => w.study)?.study
    return {
      id: w0.id,
      title: w0.title,
      ...(w0.description ? { description: w0.description } : {}),
      cases,
      rows,
      memory: {
        peakHeapUsedBytes: Math.max(...present.map((w) => w.memory.peakHeapUsedBytes)),
        heapDeltaBytes: Math.max(...present.map((w) => w.memory.heapDeltaBytes)),
        peakRssBytes: Math.max(...present.map((w) => w.memory.peakRssBytes)),
      },
      ...(study ? { study } : {}),
      durationMs: present.reduce((s, w) => s + w.durationMs, 0),
    }
  })
  return {
    startedAt: first.startedAt,
    durationMs: results.reduce((s, x) => s + (x?.durationMs ?? 0), 0),
    machine: first.machine,
    options: { ...first.options, repeat: n },
    workloads,
  }
}

/** A case's results in each repeat (undefined where it has none) as one. */
function mergeCase(cs: Array<CaseResult | undefined>): CaseResult {
  const present = cs.filter((c): c is CaseResult => c !== undefined)
  const c0 = present[0]!
  const b = present.map((c) => c.baseline)
  const walls = b.flatMap((x) => (x.wallMedianMs === undefined ? [] : [x.wallMedianMs]))
  return {
    label: c0.label,
    params: c0.params,
    baseline: {
      name: c0.baseline.name,
      medianMs: median(b.map((x) => x.medianMs)),
      madMs: median(b.map((x) => x.madMs)),
      samples: b.reduce((s, x) => s + x.samples, 0),
      ...(walls.length ? { wallMedianMs: median(walls) } : {}),
    },
    makeMs: median(present.map((c) => c.makeMs)),
    repeats: cs.map((c) => (c ? { baseline: c.baseline, makeMs: c.makeMs } : null)),
  }
}

/** "1 error: boom; 2 n/a: not run" — how many of `rs` ended each way. */
function tally(rs: RepeatResult[]): string {
  const counts = new Map<string, number>()
  for (const r of rs) {
    const what = r.reason ? `${r.status}: ${r.reason}` : r.status
    counts.set(what, (counts.get(what) ?? 0) + 1)
  }
  return [...counts].map(([what, count]) => `${count} ${what}`).join('; ')
}

/** The distinct values of `xs`, in order. */
const distinct = <T>(xs: T[]): T[] => [...new Set(xs)]

/**
 * One row's summary over its repeats (`repeats[r]`: repeat r's result), as the module comment
 * describes: the median ratio of the ok repeats with its range, and the count of ok repeats.
 */
export function summariseRepeats(
  row: Pick<RowResult, 'row' | 'family' | 'kind' | 'case' | 'speedUpOver'>,
  repeats: RepeatResult[],
): RowResult {
  const n = repeats.length
  const ok = repeats.filter((r) => r.status === 'ok' && r.ratio !== undefined)
  const failed = repeats.filter((r) => r.status !== 'ok')
  const status: RowResult['status'] = failed.some((r) => r.status === 'wrong')
    ? 'wrong'
    : ok.length > 0
      ? 'ok'
      : failed.some((r) => r.status === 'error')
        ? 'error'
        : 'n/a'
  const outcomes = distinct(repeats.map((r) => `${r.status}\u0000${r.reason ?? ''}`))
  const reason =
    outcomes.length === 1
      ? repeats[0]!.reason
      : failed.length === 0
        ? distinct(repeats.flatMap((r) => (r.reason ? [r.reason] : []))).join('; ') || undefined
        : `${ok.length} of ${n} repeats ok; ${tally(failed)}`
  const errors = repeats.flatMap((r) => (r.error === undefined ? [] : [r.error]))
  const error = errors.length === 0 ? undefined : errors.some(Number.isNaN) ? Number.NaN : Math.max(...errors)
  const values = (f: (r: RepeatResult) => number | undefined): number[] =>
    ok.flatMap((r) => {
      const v = f(r)
      return v === undefined ? [] : [v]
    })
  const medianOf = (f: (r: RepeatResult) => number | undefined): number | undefined => {
    const v = values(f)
    return v.length ? median(v) : undefined
  }
  const sumOf = (f: (r: RepeatResult) => number | undefined): number | undefined => {
    const v = values(f)
    return v.length ? v.reduce((s, x) => s + x, 0) : undefined
  }
  const ratios = values((r) => r.ratio)
  const heaps = repeats.flatMap((r) => (r.setupHeapBytes === undefined ? [] : [r.setupHeapBytes]))
  const invalidated = distinct(repeats.flatMap((r) => r.invalidated ?? []))
  const ranAfter = distinct(repeats.flatMap((r) => r.ranAfter ?? []))
  const clocks = distinct(ok.flatMap((r) => (r.clock ? [r.clock] : [])))
  const fields: Partial<RowResult> = {
    ...(error !== undefined ? { error } : {}),
    medianMs: medianOf((r) => r.medianMs),
    madMs: medianOf((r) => r.madMs),
    samples: sumOf((r) => r.samples),
    // a row's clock is the same in every repeat unless the pairs were usable in some only
    clock: clocks.length === 0 ? undefined : clocks.length === 1 ? clocks[0] : 'wall',
    wallMedianMs: medianOf((r) => r.wallMedianMs),
    ratio: ratios.length ? median(ratios) : undefined,
    pairs: sumOf((r) => r.pairs),
    pairedBaselineMs: medianOf((r) => r.pairedBaselineMs),
    setupHeapBytes: heaps.length ? Math.max(...heaps) : undefined,
    invalidated: invalidated.length ? invalidated : undefined,
    ranAfter: ranAfter.length ? ranAfter : undefined,
  }
  return {
    ...row,
    status,
    ...(reason ? { reason } : {}),
    ...Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined)),
    ...(ratios.length ? { ratioRange: [Math.min(...ratios), Math.max(...ratios)] as [number, number] } : {}),
    okRepeats: ok.length,
    repeats,
  }
}
