/**
 * Tropical (max-plus) numbers. The representation is the tropical number itself, a real a
 * (often read as the exponent of e^a), with −Infinity as the tropical zero and 0 as the tropical
 * one. Tropical multiplication a ⊗ b is a + b and division a ⊘ b is a − b, so `x *= y` and
 * `x /= y` are bijections — exact, bit for bit, because values are held on the fixed-point grid
 * of multiples of 2^−F (default F = 32, |a| < 2^21, −Infinity allowed). Tropical addition a ⊕ b
 * is max(a, b): fine inside expressions, but not an update — `x += y` forgets the smaller
 * operand, so it is a static error that says so. There is no tropical subtraction.
 *
 * In expressions: `a + b` is max, `a * b` is a + b, `a / b` is a − b, `a ** r` is r·a.
 */
import { InvertibilityError, type NumberSystemSpec } from '@tenet/ir'
import { fixedRounder } from './fixed.js'

/** Parameters of a tropical number system. */
export interface TropicalFormat {
  name?: string
  /** Values (other than −Infinity) are multiples of 2^−F. */
  fractionBits: number
  /** |a| < 2^I for finite values; I + F ≤ 53. */
  integerBits: number
}

/** A max-plus number system with the given grid. */
export function tropicalNumbers(format: TropicalFormat): NumberSystemSpec {
  const name = format.name ?? 'tropical'
  const F = format.fractionBits,
    I = format.integerBits
  if (!Number.isInteger(F) || !Number.isInteger(I) || F < 0 || I < 1 || I + F > 53) {
    throw new RangeError(`tropical format ${name}: need integers F ≥ 0, I ≥ 1 with I + F ≤ 53 (got I = ${I}, F = ${F})`)
  }
  // (the same error code as fixed point: the grid is a fixed-point one)
  const grid = fixedRounder(
    F,
    I,
    name,
    `past it the grid of multiples of 2^-${F} that keeps \`*=\` and \`/=\` exact (and undoable) is not available`,
  )
  const round = (x: number) => (x === -Infinity ? x : grid(x))
  const zeroFactor = (op: string): never => {
    throw new InvertibilityError(
      'runtime/tropical-zero',
      `${name}: \`${op}\` by the tropical zero (−Infinity) cannot be undone`,
    )
  }
  return {
    specificationVersion: 'v1',
    name,
    description: `tropical (max-plus) numbers on the grid 2^-${F}: *= adds, /= subtracts (exact bijections); + is max`,
    bijectiveUpdates: ['*=', '/='],
    rejectUpdate: (op) =>
      op === '+='
        ? `\`+=\` is not reversible on ${name}: tropical \`+\` is max(x, y), which forgets the smaller operand, so \`x += y\` could not be undone; use \`*=\` (ordinary +) — e.g. \`acc *= a + b\` into an ancilla that holds the tropical one 0.0`
        : op === '-='
          ? `\`-=\` is not an update of ${name}: tropical numbers have no subtraction (max has no inverse); \`/=\` undoes \`*=\``
          : `\`${op}\` is not an update of ${name}`,
    exact: true,
    float: false,
    arrayType: 'Float64Array',
    fromHost: round,
    round: { evaluate: round },
    arithmetic: {
      ops: ['+', '*', '/', '**'],
      reject: (op) =>
        op === '-' || op === '-x'
          ? `tropical numbers have no subtraction or negation: \`+\` is max, which has no inverse`
          : `\`${op}\` is not defined on ${name}`,
      binary: (op, a, b) => {
        switch (op) {
          case '+':
            return Math.max(a, b)
          case '*':
            return round(a + b)
          case '/':
            return b === -Infinity ? zeroFactor('/') : round(a - b)
          case '**':
            return b === 0 ? 0 : round(a * b)
          default:
            throw new Error(`${name}: operator ${op}`)
        }
      },
    },
    update: (op, a, b) => {
      if (b === -Infinity) zeroFactor(op)
      return round(op === '*=' ? a + b : a - b)
    },
  }
}

/** The default `tropical`: multiples of 2^−32 with |a| < 2^21, and −Infinity. */
export const tropical: NumberSystemSpec = tropicalNumbers({ name: 'tropical', fractionBits: 32, integerBits: 21 })
