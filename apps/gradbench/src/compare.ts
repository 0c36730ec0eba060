/**
 * GradBench's comparison of an output with the reference output: numbers within
 * |a − b| / max(1, |a| + |b|) ≤ tolerance, arrays of equal length element by element, objects
 * with exactly the same keys, and nothing else mixed. `exact` names the keys (at any depth) whose
 * numbers must be equal integers (ba's `rows`, `cols` and `repeated`: JSON integers in the
 * reference, which `JSON.parse` cannot tell apart from floats).
 */
export interface Mismatch {
  path: string
  reason: string
}

/** The first difference between `actual` and `expected`, or null when they match. */
export function compareOutputs(
  actual: unknown,
  expected: unknown,
  tolerance = 1e-4,
  exact: ReadonlySet<string> = new Set(),
  path = '$',
  exactHere = false,
): Mismatch | null {
  if (typeof expected === 'number') {
    if (typeof actual !== 'number')
      return { path, reason: `expected a number, got ${JSON.stringify(actual)?.slice(0, 60)}` }
    if (exactHere)
      return actual === expected && Number.isInteger(actual)
        ? null
        : { path, reason: `expected the integer ${expected}, got ${actual}` }
    const err = Math.abs(actual - expected) / Math.max(1, Math.abs(actual) + Math.abs(expected))
    return err <= tolerance
      ? null
      : { path, reason: `expected ${expected}, got ${actual} (relative error ${err.toExponential(2)})` }
  }
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual)) return { path, reason: 'expected an array' }
    if (actual.length !== expected.length)
      return { path, reason: `expected ${expected.length} elements, got ${actual.length}` }
    for (let i = 0; i < expected.length; i++) {
      const m = compareOutputs(actual[i], expected[i], tolerance, exact, `${path}[${i}]`, exactHere)
      if (m) return m
    }
    return null
  }
  if (expected !== null && typeof expected === 'object') {
    if (actual === null || typeof actual !== 'object' || Array.isArray(actual))
      return { path, reason: 'expected an object' }
    const ek = Object.keys(expected).sort(),
      ak = Object.keys(actual).sort()
    if (ek.join(',') !== ak.join(','))
      return { path, reason: `expected the keys ${ek.join(', ')}, got ${ak.join(', ')}` }
    for (const key of ek) {
      const m = compareOutputs(
        (actual as Record<string, unknown>)[key],
        (expected as Record<string, unknown>)[key],
        tolerance,
        exact,
        `${path}.${key}`,
        exactHere || exact.has(key),
      )
      if (m) return m
    }
    return null
  }
  return actual === expected
    ? null
    : { path, reason: `expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}` }
}
