import type { RowResult, SuiteResult, WorkloadResult } from '../harness/runner.js'
import { formatBytes, formatError, formatRatio, formatRatioSpread, formatTime } from './format.js'

export interface TableRow {
  case: string
  row: string
  kind: string
  time: string
  mad: string
  ratio: string
  error: string
  status: string
}

/** One line per (case, row), the baseline first; "wrong" and "n/a" rows carry their reason. */
export function workloadTableRows(w: WorkloadResult): TableRow[] {
  const out: TableRow[] = []
  for (const c of w.cases) {
    out.push({
      case: c.label,
      row: c.baseline.name,
      kind: 'objective',
      time: formatTime(c.baseline.medianMs),
      mad: formatTime(c.baseline.madMs),
      ratio: '1.00×',
      error: '(reference)',
      status: 'baseline',
    })
    for (const r of w.rows.filter((x) => x.case === c.label)) out.push(rowLine(r))
  }
  return out
}

function rowLine(r: RowResult): TableRow {
  const status = r.status === 'ok' ? (r.reason ? `ok (${r.reason})` : 'ok') : `${r.status}: ${r.reason ?? ''}`
  return {
    case: r.case,
    row: r.row,
    kind: r.kind,
    time: r.status === 'ok' ? formatTime(r.medianMs) : r.status === 'wrong' ? 'wrong' : r.status,
    mad: r.status === 'ok' ? formatTime(r.madMs) : '',
    // a repeated run's ratio: the median, the range and the count of ok repeats (`repeat.ts`)
    ratio:
      r.status !== 'ok'
        ? ''
        : r.repeats
          ? formatRatioSpread(r.ratio, r.ratioRange, r.okRepeats, r.repeats.length)
          : formatRatio(r.ratio),
    error: formatError(r.error),
    status,
  }
}

const HEADERS: [keyof TableRow, string][] = [
  ['case', 'case'],
  ['row', 'row'],
  ['kind', 'kind'],
  ['time', 'median'],
  ['mad', 'MAD'],
  ['ratio', '÷ objective'],
  ['error', 'error'],
  ['status', 'status'],
]

/** Fixed-width text table for the terminal. */
export function formatTextTable(result: SuiteResult): string {
  const parts: string[] = []
  for (const w of result.workloads) {
    const rows = workloadTableRows(w)
    const widths = HEADERS.map(([key, title]) =>
      Math.min(60, Math.max(title.length, ...rows.map((r) => r[key].length))),
    )
    const line = (cells: string[]): string =>
      cells
        .map((c, i) => (c.length > widths[i] ? `${c.slice(0, widths[i] - 1)}…` : c.padEnd(widths[i])))
        .join('  ')
        .trimEnd()
    parts.push(
      `\n${w.title} [${w.id}] — peak heap ${formatBytes(w.memory.peakHeapUsedBytes)} (+${formatBytes(w.memory.heapDeltaBytes)}), peak RSS ${formatBytes(w.memory.peakRssBytes)}`,
    )
    parts.push(line(HEADERS.map(([, t]) => t)))
    parts.push(widths.map((n) => '─'.repeat(n)).join('  '))
    for (const r of rows) parts.push(line(HEADERS.map(([k]) => r[k])))
    if (w.study?.notes?.length) parts.push('', `${w.study.title}:`, ...w.study.notes.map((n) => `  ${n}`))
  }
  return `${parts.join('\n')}\n`
}

/** The same as a Markdown table (no truncation). */
export function formatMarkdownTable(w: WorkloadResult): string {
  const rows = workloadTableRows(w)
  const esc = (s: string): string => s.replace(/\|/g, '\\|')
  return [
    `| ${HEADERS.map(([, t]) => t).join(' | ')} |`,
    `|${HEADERS.map(() => '---').join('|')}|`,
    ...rows.map((r) => `| ${HEADERS.map(([k]) => esc(r[k])).join(' | ')} |`),
  ].join('\n')
}
