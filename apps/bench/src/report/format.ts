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
