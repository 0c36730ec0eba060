/** Human-readable duration from milliseconds. */
export function formatTime(ms: number | undefined): string {
  if (ms === undefined || !Number.isFinite(ms)) return '—'
  if (ms >= 1000) return `${(ms / 1000).toFixed(2)} s`
  if (ms >= 1) return `${ms.toFixed(2)} ms`
  if (ms >= 1e-3) return `${(ms * 1e3).toFixed(2)} µs`
  return `${(ms * 1e6).toFixed(1)} ns`
}

export function formatRatio(r: number | undefined): string {
  if (r === undefined || !Number.isFinite(r)) return '—'
  return r >= 100 ? `${r.toFixed(0)}×` : r >= 10 ? `${r.toFixed(1)}×` : `${r.toFixed(2)}×`
}

/**
 * A repeated run's ratio (`--repeat`): the median with the range of the repeats, "1.34× (1.31–1.38)",
 * and how many repeats it comes from where some failed, "1.34× (1.31–1.38; 2 of 3 repeats)".
 */
export function formatRatioSpread(
  ratio: number | undefined,
  range: readonly [number, number] | undefined,
  ok?: number,
  repeats?: number,
): string {
  const median = formatRatio(ratio)
  if (!range || median === '—') return median
  const bare = (r: number): string => formatRatio(r).replace(/×$/, '')
  const count = ok !== undefined && repeats !== undefined && ok < repeats ? `${ok} of ${repeats} repeats` : ''
  const spread = ok === 1 ? '' : `${bare(range[0])}–${bare(range[1])}`
  return `${median} (${[spread, count].filter(Boolean).join('; ')})`
}

export function formatError(e: number | undefined): string {
  if (e === undefined) return '—'
  if (e === 0) return '0'
  return Number.isFinite(e) ? e.toExponential(1) : String(e)
}

export function formatBytes(b: number): string {
  if (b >= 1 << 30) return `${(b / (1 << 30)).toFixed(2)} GiB`
  if (b >= 1 << 20) return `${(b / (1 << 20)).toFixed(1)} MiB`
  if (b >= 1 << 10) return `${(b / (1 << 10)).toFixed(1)} KiB`
  return `${b} B`
}

export function escapeXml(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;')
}
