import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { RowResult, SuiteResult, WorkloadResult } from '../harness/runner.js'
import { describeCpuSet } from '../harness/machine.js'
import { formatBytes, formatTime } from './format.js'
import { lineChart, ratioBarChart } from './svg.js'
import { formatMarkdownTable } from './table.js'

/**
 * Write `results.json`, one `ratio-<workload>.svg` per workload, `<workload>-study.svg` for
 * studies and `report.md` into `dir`. Returns the paths written.
 */
export function writeReports(result: SuiteResult, dir: string): string[] {
  mkdirSync(dir, { recursive: true })
  const written: string[] = []
  const put = (name: string, text: string): void => {
    const p = join(dir, name)
    writeFileSync(p, text)
    written.push(p)
  }
  put('results.json', `${JSON.stringify(result, null, 2)}\n`)
  const md: string[] = [
    '# Tenet benchmark report',
    '',
    `Run ${result.startedAt} in ${formatTime(result.durationMs)}, ${result.options.full ? 'full' : 'quick'} set${result.options.adbenchDir ? `, ADBench files from \`${result.options.adbenchDir}\`` : ', generated instances'}.`,
    '',
    `Machine: ${result.machine.cpuModel} × ${result.machine.cpus}${describeCpuSet(result.machine)}, ${formatBytes(result.machine.totalMemoryBytes)}, ${result.machine.platform} ${result.machine.release} (${result.machine.arch}), Node ${result.machine.node} (V8 ${result.machine.v8}).`,
    '',
    'Times are medians per call with the median absolute deviation (MAD); "÷ objective" is the',
    'row’s median over the plain-TS objective’s median on the same case in the same run — the',
    'figure of merit, since absolute times on shared machines are noise. "error" is the row’s',
    'deviation from the float64 reference (max scaled error unless the status says otherwise).',
    'Every derivative is checked before it is timed; a row that fails its check is reported as',
    '"wrong" and not timed; "n/a" rows cannot express the workload.',
    '',
    clockNote(result),
    '',
    isolationNote(result),
    '',
    ...repeatNote(result),
  ]
  for (const w of result.workloads) {
    const svg = `ratio-${w.id}.svg`
    put(svg, ratioBarChart(w))
    md.push(`## ${w.title}`, '')
    if (w.description) md.push(w.description, '')
    md.push(
      `Peak heap ${formatBytes(w.memory.peakHeapUsedBytes)} (+${formatBytes(w.memory.heapDeltaBytes)} over the start of the workload), peak RSS ${formatBytes(w.memory.peakRssBytes)}; ${formatTime(w.durationMs)} in all.`,
      '',
      formatMarkdownTable(w),
      '',
      ...speedUpNotes(w),
      ...protectorNotes(w),
      `![${w.title} ratios](${svg})`,
      '',
    )
    if (w.study) {
      const name = `${w.id}-study.svg`
      put(name, lineChart(w.study))
      md.push(`### ${w.study.title}`, '', `![${w.study.title}](${name})`, '')
      if (w.study.notes?.length) md.push(...w.study.notes.map((n) => `- ${n}`), '')
      md.push(
        `| ${w.study.xLabel} | ${w.study.series.map((s) => s.name).join(' | ')} |`,
        `|---|${w.study.series.map(() => '---').join('|')}|`,
      )
      const xs = [...new Set(w.study.series.flatMap((s) => s.points.map(([x]) => x)))].sort((a, b) => a - b)
      for (const x of xs)
        md.push(
          `| ${x} | ${w.study.series.map((s) => s.points.find(([px]) => px === x)?.[1].toExponential(2) ?? '—').join(' | ')} |`,
        )
      md.push('')
    }
  }
  put('report.md', `${md.join('\n')}\n`)
  return written
}

/** `row kind` of each of `rows`, once each, by workload ("GMM: a gradient; BA: b jacobian"). */
function rowNames(result: SuiteResult, rows: (r: RowResult) => boolean): string {
  return result.workloads
    .map((w) => {
      const names = [...new Set(w.rows.filter(rows).map((r) => `${r.row} ${r.kind}`))]
      return names.length ? `${w.title}: ${names.join(', ')}` : ''
    })
    .filter(Boolean)
    .join('; ')
}

/**
 * Which clock timed the samples (see the bench README, *The run clock*): the suite's
 * (`options.clock`: the baselines' and most rows'), and the rows timed on the wall clock where
 * the suite's is the run clock (`RowResult.clock`): rows whose work runs on other threads, and
 * rows timed in pairs with the baseline.
 */
export function clockNote(result: SuiteResult): string {
  if (result.options.clock === 'wall')
    return 'Samples were timed in wall time (this system does not report the time a thread waits for a core): on a loaded machine, samples that lose their core read long.'
  if (result.options.clock !== 'run') return ''
  const out = [
    'Samples were timed on the run clock: wall time less the time the timing thread waited for a core (Linux’s run-queue delay), so that a sample that lost its core to another process is not the longer for it; waits of a row’s own (a GPU, a sleep) still count.',
  ]
  const onWall = (r: RowResult) => r.status === 'ok' && r.clock === 'wall'
  const threads = rowNames(result, (r) => onWall(r) && r.pairs === undefined)
  if (threads)
    out.push(
      `These rows, whose work runs on other threads too (the run clock reads the calling thread alone), were timed on the wall clock, their ratio over the baseline samples’ median on the wall clock: ${threads}.`,
    )
  const paired = rowNames(result, (r) => onWall(r) && r.pairs !== undefined)
  if (paired)
    out.push(
      `These rows were timed in pairs with the baseline (\`TENET_BENCH_PAIRED=1\`), on the wall clock (pairs that lost the core are left out of the ratio instead): ${paired}.`,
    )
  return out.join(' ')
}

/** A row's speed-up over the row it names (`RowResult.speedUpOver`) on one case. */
export interface SpeedUp {
  row: string
  kind: RowResult['kind']
  over: string
  case: string
  /** the other row's median per call over this row's, both on the wall clock */
  speedUp: number
}

/**
 * The speed-ups of a workload's rows that name a row to compare with (the thread rows over the
 * single-thread row): that row's median over this one's, on the same case and kind, both on the
 * wall clock (`wallMedianMs`), since a thread row cannot be timed on the run clock.
 */
export function speedUps(w: WorkloadResult): SpeedUp[] {
  const out: SpeedUp[] = []
  for (const r of w.rows) {
    if (!r.speedUpOver || r.status !== 'ok' || r.wallMedianMs === undefined) continue
    const ref = w.rows.find(
      (o) => o.row === r.speedUpOver && o.kind === r.kind && o.case === r.case && o.status === 'ok',
    )
    if (ref?.wallMedianMs === undefined) continue
    out.push({ row: r.row, kind: r.kind, over: ref.row, case: r.case, speedUp: ref.wallMedianMs / r.wallMedianMs })
  }
  return out
}

/** The report's lines of a workload's speed-ups (`speedUps`), one per row and kind. */
function speedUpNotes(w: WorkloadResult): string[] {
  const all = speedUps(w)
  const out: string[] = []
  for (const key of [...new Set(all.map((s) => `${s.row}\u0000${s.kind}`))]) {
    const these = all.filter((s) => `${s.row}\u0000${s.kind}` === key)
    const { row, kind, over } = these[0]!
    out.push(
      `Speed-up of ${row} ${kind} over ${over} (its median over this row’s, both rows’ samples on the wall clock): ${these.map((s) => `${s.case} ${s.speedUp.toFixed(2)}×`).join(', ')}.`,
      '',
    )
  }
  return out
}

/** How the rows were kept apart (see `runIsolated`). */
function isolationNote(result: SuiteResult): string {
  const how = result.options.isolation ?? 'off'
  if (how === 'off')
    return 'Every row ran in one process, after whatever earlier rows did to it (`--isolate off`): once a row has detached an ArrayBuffer (wasm memory growth, a WebGPU map), typed-array code runs slower in that process, so later rows may read slow.'
  return how === 'row'
    ? 'Every row ran in a fresh process of its own (`--isolate row`); each case’s baseline was timed in the first.'
    : 'Each case ran in fresh processes (`--isolate detach`): a row that invalidated one of V8’s protectors (e.g. detached an ArrayBuffer: wasm memory growth, a WebGPU map) was the last in its process, except for rows seen to invalidate one themselves, which may share a process after it. Each case’s baseline was timed in its first, clean process.'
}

/** How a repeated run's figures come from its repeats (`--repeat`, `repeat.ts`); nothing for one run. */
function repeatNote(result: SuiteResult): string[] {
  const n = result.options.repeat
  if (n === undefined || n <= 1) return []
  const fresh =
    (result.options.isolation ?? 'off') === 'off'
      ? 'All repeats ran in this one process, each after the ones before (`--isolate off`), so their spread leaves out what varies from process to process.'
      : 'Each repeat ran in a new set of processes.'
  return [
    `Every case ran ${n} times (\`--repeat ${n}\`), the whole selection once per repeat. ${fresh} A row’s "÷ objective" is the median of its ratios in the repeats where it was ok, each over the baseline timed in the same repeat, with their least and greatest in brackets (and how many repeats, where some were not ok); the median and MAD columns are the medians of the repeats’, the baseline’s too; "error" is the largest of the repeats’; a row wrong in any repeat is reported wrong. The chart shows the median. \`results.json\` keeps every repeat’s results (\`repeats\`).`,
    '',
  ]
}

/** Which rows invalidated a V8 protector, and which were timed after one had been invalidated. */
function protectorNotes(w: WorkloadResult): string[] {
  const names = (rows: RowResult[]) => [...new Set(rows.map((r) => `${r.row} ${r.kind}`))].join(', ')
  const broke = w.rows.filter((r) => r.invalidated?.length)
  const after = w.rows.filter((r) => r.ranAfter?.length)
  const out: string[] = []
  if (broke.length) {
    const which = [...new Set(broke.flatMap((r) => r.invalidated!))].join(', ')
    out.push(`Rows that invalidated a V8 protector (${which}): ${names(broke)}.`, '')
  }
  if (after.length)
    out.push(
      `Timed after another row had invalidated a protector in their process (rows seen to invalidate one themselves): ${after.map((r) => `${r.row} ${r.kind} on ${r.case} (${r.ranAfter!.join(', ')})`).join('; ')}.`,
      '',
    )
  return out
}
