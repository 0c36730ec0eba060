/** Comparing doubles in units in the last place (for the tests and the benchmark of the routines). */

/** Distance in units in the last place between two doubles (0 for two NaNs; ±0 differ by 1). */
export function ulps(a: number, b: number): number {
  if (Number.isNaN(a) || Number.isNaN(b)) return Number.isNaN(a) && Number.isNaN(b) ? 0 : Infinity
  if (a === b && Object.is(a, b)) return 0
  const d = new DataView(new ArrayBuffer(16))
  d.setFloat64(0, a)
  d.setFloat64(8, b)
  // doubles ordered as integers: negative ones mirrored below zero
  const ord = (v: bigint) => (v < 0n ? -(v & 0x7fffffffffffffffn) - 1n : v)
  const x = ord(d.getBigInt64(0)),
    y = ord(d.getBigInt64(8))
  return Number(x > y ? x - y : y - x)
}
