/**
 * Fixed-point numbers. A value is an integer multiple of 2^−F held exactly in a JS number (its
 * value itself, not the integer), with |x| < 2^I, where F is the number of fraction bits, I the
 * number of integer bits (the sign is extra) and I + F ≤ 53, so every value and every sum of two
 * values is exact in double precision. `+=` and `-=` are therefore exact bijections, bit for
 * bit, for any sequence of updates; a result outside the range throws an `InvertibilityError`
 * (`runtime/fixed-overflow`), never wraps silently.
 *
 * Every arithmetic result of this type (`*`, `/`, `sin(x)`, `convert(y)`, ...) is computed in
 * f64 and rounded to the nearest grid point (ties away from zero), and so is every host argument
 * (`fromHost`). Since the rounding is a deterministic function of the operands, `y += f(x)` and
 * `y -= f(x)` add and subtract the same grid value, and stay exact inverses of each other.
 */
import { InvertibilityError, type NumberSystemSpec } from '@tenet/ir'

/** Parameters of a fixed-point format. */
export interface FixedPointFormat {
  /** The type name in Tenet source (default `fixed`). */
  name?: string
  /** F: the value is a multiple of 2^−F. */
  fractionBits: number
  /** I: the value satisfies |x| < 2^I. I + F ≤ 53. */
  integerBits: number
}

/**
 * Rounds `x` to the grid of multiples of 2^−F (ties away from zero) and checks |result| < 2^I.
 * Throws an `InvertibilityError` on overflow or NaN.
 */
export function fixedRound(x: number, fractionBits: number, integerBits: number, name = 'fixed'): number {
  return fixedRounder(fractionBits, integerBits, name)(x)
}

/**
 * `fixedRound` for one format, with its scale and bound computed once: the number systems call
 * it on every arithmetic result. `why` ends the overflow message (what the bound protects).
 */
export function fixedRounder(
  fractionBits: number,
  integerBits: number,
  name = 'fixed',
  why = 'an update that wrapped around could not be undone',
): (x: number) => number {
  const scale = 2 ** fractionBits,
    bound = 2 ** integerBits
  return (x) => {
    const k = x * scale
    const r = (k < 0 ? -Math.round(-k) : Math.round(k)) / scale
    if (!(Math.abs(r) < bound)) {
      throw new InvertibilityError(
        'runtime/fixed-overflow',
        `${name} overflow: ${x} is outside the range (−2^${integerBits}, 2^${integerBits}) of ${name} (${integerBits} integer bits, ${fractionBits} fraction bits); ${why}`,
      )
    }
    return r === 0 ? 0 : r
  }
}

/**
 * A fixed-point number system with the given format: `fixedPoint({ name: 'q16', fractionBits:
 * 16, integerBits: 15 })`. Register it with `registry.registerNumberSystem(...)`.
 */
export function fixedPoint(format: FixedPointFormat): NumberSystemSpec {
  const { fractionBits: F, integerBits: I } = format
  const name = format.name ?? 'fixed'
  if (!Number.isInteger(F) || !Number.isInteger(I) || F < 0 || I < 1 || I + F > 53) {
    throw new RangeError(
      `fixed-point format ${name}: need integers F ≥ 0, I ≥ 1 with I + F ≤ 53 (got I = ${I}, F = ${F})`,
    )
  }
  const round = fixedRounder(F, I, name)
  return {
    specificationVersion: 'v1',
    name,
    description: `fixed point: multiples of 2^-${F} with |x| < 2^${I}, held exactly in a JS number; += and -= are exact bijections`,
    bijectiveUpdates: ['+=', '-='],
    rejectUpdate: (op) =>
      op === '*=' || op === '/='
        ? `\`${op}\` is not reversible on ${name} (the product is rounded to the grid); use \`+=\`/\`-=\`, or a logarithmic number (\`ulog\`) for exact \`*=\``
        : `\`${op}\` is not an update of ${name}`,
    exact: true,
    float: true,
    arrayType: 'Float64Array',
    fixedPoint: { fractionBits: F, integerBits: I },
    // a value is its own representation: host arrays are rounded on entry and need no conversion back
    fromHost: round,
    // the cpu backend calls `round` through its runtime table (it may throw on overflow)
    round: { evaluate: round },
  }
}

/** The default `fixed` type: 40 fraction bits (grid 2^−40 ≈ 9.1e−13) and |x| < 2^13 = 8192. */
export const fixed: NumberSystemSpec = fixedPoint({ name: 'fixed', fractionBits: 40, integerBits: 13 })
