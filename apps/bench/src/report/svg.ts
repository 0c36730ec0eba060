import type { StudyResult } from '../harness/types.js'
import type { WorkloadResult } from '../harness/runner.js'
import { escapeXml, formatRatio } from './format.js'

const FONT = 'font-family="system-ui, -apple-system, Segoe UI, sans-serif"'
const PALETTE = ['#4e79a7', '#f28e2b', '#59a14f', '#e15759', '#76b7b2', '#edc948', '#b07aa1', '#9c755f']

/**
 * Horizontal bar chart of ratios (row median ÷ plain-TS objective median) for one workload, one
 * bar per (case, row) that ran correctly, on a log axis; colour by row family. A repeated run's
 * bar is the median ratio of its repeats, with a line from their least to their greatest.
 */
export function ratioBarChart(w: WorkloadResult): string {
  const bars = w.rows.filter((r) => r.status === 'ok' && r.ratio !== undefined && r.ratio > 0)
  const families = [...new Set(bars.map((b) => b.family))]
  const labelW = 300
  const plotW = 420
  const barH = 16
  const gap = 6
  const top = 40
  const height = top + Math.max(1, bars.length) * (barH + gap) + 50
  const width = labelW + plotW + 90
  // a repeated run's bars are its medians, with a line over the repeats' range (`repeat.ts`)
  const ratios = bars.flatMap((b) => [b.ratio as number, ...(b.ratioRange ?? [])])
  const lo = Math.floor(Math.log10(Math.min(1, ...ratios)))
  const hi = Math.ceil(Math.log10(Math.max(10, ...ratios)))
  const xOf = (r: number): number => labelW + ((Math.log10(r) - lo) / (hi - lo)) * plotW
  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" ${FONT} font-size="12">`,
    `<rect width="100%" height="100%" fill="white"/>`,
    `<text x="10" y="20" font-size="14" font-weight="bold">${escapeXml(w.title)}: time ÷ plain-TS objective (log scale)</text>`,
  ]
  for (let e = lo; e <= hi; e++) {
    const x = xOf(10 ** e)
    out.push(`<line x1="${x}" y1="${top - 5}" x2="${x}" y2="${height - 40}" stroke="${e === 0 ? '#333' : '#ddd'}"/>`)
    out.push(
      `<text x="${x}" y="${height - 25}" text-anchor="middle" fill="#555">${10 ** e >= 1 ? 10 ** e : (10 ** e).toPrecision(1)}×</text>`,
    )
  }
  bars.forEach((b, i) => {
    const y = top + i * (barH + gap)
    const colour = PALETTE[families.indexOf(b.family) % PALETTE.length]
    const x0 = xOf(10 ** lo)
    const x1 = xOf(b.ratio as number)
    out.push(
      `<text x="${labelW - 8}" y="${y + barH - 4}" text-anchor="end">${escapeXml(`${b.case} · ${b.row} ${b.kind}`)}</text>`,
    )
    out.push(`<rect x="${x0}" y="${y}" width="${Math.max(1, x1 - x0)}" height="${barH}" fill="${colour}"/>`)
    let xText = x1
    if (b.ratioRange) {
      const [lo, hi] = b.ratioRange.map(xOf) as [number, number]
      const mid = y + barH / 2
      out.push(`<line x1="${lo}" y1="${mid}" x2="${hi}" y2="${mid}" stroke="#333"/>`)
      out.push(`<line x1="${lo}" y1="${mid - 4}" x2="${lo}" y2="${mid + 4}" stroke="#333"/>`)
      out.push(`<line x1="${hi}" y1="${mid - 4}" x2="${hi}" y2="${mid + 4}" stroke="#333"/>`)
      xText = Math.max(x1, hi)
    }
    out.push(`<text x="${xText + 4}" y="${y + barH - 4}" fill="#333">${formatRatio(b.ratio)}</text>`)
  })
  if (bars.length === 0) out.push(`<text x="${labelW}" y="${top + 12}" fill="#777">no rows ran</text>`)
  out.push('</svg>')
  return `${out.join('\n')}\n`
}

/** Line chart with optional log axes (leapfrog error vs steps, after paper 000 Fig. 6). */
export function lineChart(study: StudyResult): string {
  const width = 640
  const height = 400
  const left = 70
  const right = 180
  const top = 40
  const bottom = 50
  const pts = study.series.flatMap((s) => s.points).filter(([x, y]) => (!study.logX || x > 0) && (!study.logY || y > 0))
  const tx = (v: number): number => (study.logX ? Math.log10(v) : v)
  const ty = (v: number): number => (study.logY ? Math.log10(Math.max(v, 1e-300)) : v)
  const xs = pts.map(([x]) => tx(x))
  const ys = pts.map(([, y]) => ty(y))
  let x0 = Math.min(...xs)
  let x1 = Math.max(...xs)
  let y0 = Math.min(...ys)
  let y1 = Math.max(...ys)
  if (study.logX) (x0 = Math.floor(x0)), (x1 = Math.ceil(x1))
  if (study.logY) (y0 = Math.floor(y0)), (y1 = Math.ceil(y1))
  if (x1 === x0) x1 = x0 + 1
  if (y1 === y0) y1 = y0 + 1
  const px = (v: number): number => left + ((tx(v) - x0) / (x1 - x0)) * (width - left - right)
  const py = (v: number): number => height - bottom - ((ty(v) - y0) / (y1 - y0)) * (height - top - bottom)
  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" ${FONT} font-size="12">`,
    `<rect width="100%" height="100%" fill="white"/>`,
    `<text x="10" y="20" font-size="14" font-weight="bold">${escapeXml(study.title)}</text>`,
    `<rect x="${left}" y="${top}" width="${width - left - right}" height="${height - top - bottom}" fill="none" stroke="#333"/>`,
  ]
  const tick = (v: number, log: boolean): string => (log ? `1e${v}` : v.toPrecision(3))
  const xStep = study.logX ? 1 : (x1 - x0) / 5
  for (let v = x0; v <= x1 + 1e-9; v += xStep) {
    const x = left + ((v - x0) / (x1 - x0)) * (width - left - right)
    out.push(`<line x1="${x}" y1="${top}" x2="${x}" y2="${height - bottom}" stroke="#eee"/>`)
    out.push(
      `<text x="${x}" y="${height - bottom + 16}" text-anchor="middle" fill="#555">${tick(v, study.logX)}</text>`,
    )
  }
  const yStep = study.logY ? Math.max(1, Math.ceil((y1 - y0) / 8)) : (y1 - y0) / 5
  for (let v = y0; v <= y1 + 1e-9; v += yStep) {
    const y = height - bottom - ((v - y0) / (y1 - y0)) * (height - top - bottom)
    out.push(`<line x1="${left}" y1="${y}" x2="${width - right}" y2="${y}" stroke="#eee"/>`)
    out.push(`<text x="${left - 6}" y="${y + 4}" text-anchor="end" fill="#555">${tick(v, study.logY)}</text>`)
  }
  out.push(
    `<text x="${(left + width - right) / 2}" y="${height - 12}" text-anchor="middle">${escapeXml(study.xLabel)}</text>`,
  )
  out.push(
    `<text x="16" y="${(top + height - bottom) / 2}" text-anchor="middle" transform="rotate(-90 16 ${(top + height - bottom) / 2})">${escapeXml(study.yLabel)}</text>`,
  )
  study.series.forEach((s, i) => {
    const colour = PALETTE[i % PALETTE.length]
    const ok = s.points.filter(([x, y]) => (!study.logX || x > 0) && (!study.logY || y > 0))
    out.push(
      `<polyline fill="none" stroke="${colour}" stroke-width="2" points="${ok.map(([x, y]) => `${px(x).toFixed(1)},${py(y).toFixed(1)}`).join(' ')}"/>`,
    )
    for (const [x, y] of ok)
      out.push(`<circle cx="${px(x).toFixed(1)}" cy="${py(y).toFixed(1)}" r="3" fill="${colour}"/>`)
    const ly = top + 10 + i * 18
    out.push(
      `<line x1="${width - right + 12}" y1="${ly}" x2="${width - right + 32}" y2="${ly}" stroke="${colour}" stroke-width="2"/>`,
    )
    out.push(`<text x="${width - right + 38}" y="${ly + 4}">${escapeXml(s.name)}</text>`)
  })
  out.push('</svg>')
  return `${out.join('\n')}\n`
}
