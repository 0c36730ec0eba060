import { maxScaledError } from '../math/finite-difference.js'
import type { CheckResult } from './types.js'

/** Compare with a float64 reference under a tolerance on the max scaled error. */
export function checkClose(
  actual: ArrayLike<number>,
  reference: ArrayLike<number>,
  tolerance: number,
  what = 'value',
): CheckResult {
  if (actual.length !== reference.length)
    return {
      ok: false,
      error: Number.POSITIVE_INFINITY,
      reason: `${what}: length ${actual.length}, expected ${reference.length}`,
    }
  const error = maxScaledError(actual, reference)
  return error <= tolerance
    ? { ok: true, error }
    : {
        ok: false,
        error,
        reason: `${what}: max scaled error ${error.toExponential(2)} > tolerance ${tolerance.toExponential(0)}`,
      }
}

/** Tolerances: float64 engines must agree to round-off; float32 engines (TF.js cpu) to single precision. */
export const TOLERANCE = { f64: 1e-8, f32: 2e-3 } as const

/** Memoise a per-case reference (computed on first use, then shared by all rows). */
export function lazy<T>(make: () => T): () => T {
  let done = false
  let value: T
  return () => {
    if (!done) {
      value = make()
      done = true
    }
    return value
  }
}
