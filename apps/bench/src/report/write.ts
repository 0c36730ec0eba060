import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { SuiteResult } from '../harness/runner.js'
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
    `Machine: ${result.machine.cpuModel} × ${result.machine.cpus}, ${formatBytes(result.machine.totalMemoryBytes)}, ${result.machine.platform} ${result.machine.release} (${result.machine.arch}), Node ${result.machine.node} (V8 ${result.machine.v8}).`,
    '',
    'Times are medians per call with the median absolute deviation (MAD); "÷ objective" is the',
    'row’s median over the plain-TS objective’s median on the same case in the same process — the',
    'figure of merit, since absolute times on shared machines are noise. "error" is the row’s',
    'deviation from the float64 reference (max scaled error unless the status says otherwise).',
    'Every derivative is checked before it is timed; a row that fails its check is reported as',
    '"wrong" and not timed; "n/a" rows cannot express the workload.',
    '',
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
