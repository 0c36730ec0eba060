export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN
  const s = [...values].sort((a, b) => a - b)
  const mid = s.length >> 1
  return s.length % 2 ? s[mid] : 0.5 * (s[mid - 1] + s[mid])
}

/** Median absolute deviation from the median. */
export function medianAbsoluteDeviation(values: readonly number[]): number {
  const m = median(values)
  return median(values.map((v) => Math.abs(v - m)))
}
