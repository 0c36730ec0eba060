/**
 * Logarithmic numbers (`ulog`): a sign and the natural log of the magnitude, the log held in
 * fixed point (a multiple of 2^−F). Multiplication and division add and subtract logs, exactly,
 * so `x *= y` and `x /= y` are exact bijections (bit for bit) — including `x *= y + z` and
 * `x *= y - z`, where the sum is computed with Gaussian logarithms
 * (log(e^a + e^b) = a + log1p(e^(b−a))) and rounded to the log grid, and `x *= y ** r`, whose log
 * r·log|y| is rounded the same way. The rounding is deterministic, so `/=` recomputes the very
 * factor that `*=` used. `+=` is not an update of ulog (a static error that says to use `*=`).
 *
 * Representation (one JS number, order preserving, so comparisons work on it directly):
 * `c = sign · (2^R + L)` where L = log|x| is a multiple of 2^−F with |L| < 2^R, and c = 0 for
 * x = 0. The default `ulog` has F = 42 (relative precision of a value ≈ 1.1e−13 per rounding)
 * and R = 10 (magnitudes e^±1024 ≈ 10^±444; the host boundary gives 0 or ±Infinity beyond f64).
 * Leaving that range throws an `InvertibilityError` (`runtime/ulog-range`), never saturates.
 * The field `x.log` reads L as an f64 (−Infinity for zero); it is read-only.
 */
import { InvertibilityError, type Expr, type NumberSystemSpec } from '@tenet/ir'
import { fixedRounder } from './fixed.js'

/** Parameters of a logarithmic number system. */
export interface LogarithmicFormat {
  /** Type name (default `ulog`). */
  name?: string
  /** F: the log of the magnitude is a multiple of 2^−F. */
  fractionBits: number
  /** R: the log of the magnitude satisfies |L| < 2^R. R + 1 + F ≤ 53. */
  rangeBits: number
}

/** The encode/decode functions and arithmetic of a logarithmic format, on representations. */
export interface LogarithmicOps {
  encode(x: number): number
  decode(c: number): number
  /** The log of the magnitude, −Infinity for zero. */
  log(c: number): number
  mul(a: number, b: number): number
  div(a: number, b: number): number
  add(a: number, b: number): number
  pow(a: number, r: number): number
}

/** The operations of a logarithmic format (exported for tests and host-side encoding). */
export function logarithmicOps(format: LogarithmicFormat): LogarithmicOps {
  const name = format.name ?? 'ulog'
  const F = format.fractionBits,
    R = format.rangeBits
  const OFF = 2 ** R
  const range = (what: string): never => {
    throw new InvertibilityError(
      'runtime/ulog-range',
      `${name}: ${what} is outside the range of ${name} (|log| < 2^${R}); the result could not be undone, so it is an error rather than a rounding to 0 or ∞`,
    )
  }
  const grid = fixedRounder(F, R + 1, name)
  const roundLog = (L: number): number => {
    if (Number.isNaN(L)) throw new InvertibilityError('runtime/ulog-nan', `${name}: the result is not a number (NaN)`)
    if (!(Math.abs(L) < OFF)) range(`a value with log ${L}`)
    return grid(L)
  }
  const enc = (negative: boolean, L: number): number => {
    if (!(Math.abs(L) < OFF)) range(`a value with log ${L}`)
    return negative ? -(OFF + L) : OFF + L
  }
  const logOf = (c: number) => (c === 0 ? -Infinity : Math.abs(c) - OFF)
  const mul = (a: number, b: number) => (a === 0 || b === 0 ? 0 : enc(a < 0 !== b < 0, logOf(a) + logOf(b)))
  const div = (a: number, b: number) => {
    if (b === 0) throw new InvertibilityError('runtime/ulog-division-by-zero', `${name}: division by zero`)
    return a === 0 ? 0 : enc(a < 0 !== b < 0, logOf(a) - logOf(b))
  }
  const add = (a: number, b: number) => {
    if (a === 0) return b
    if (b === 0) return a
    let la = logOf(a),
      lb = logOf(b),
      na = a < 0,
      nb = b < 0
    if (la < lb) {
      ;[la, lb] = [lb, la]
      ;[na, nb] = [nb, na]
    }
    const d = lb - la // ≤ 0, exact
    if (na === nb) return enc(na, roundLog(la + Math.log1p(Math.exp(d))))
    if (d === 0) return 0
    return enc(na, roundLog(la + Math.log1p(-Math.exp(d))))
  }
  const pow = (a: number, r: number) => {
    if (r === 0) return OFF
    if (a === 0) {
      if (r > 0) return 0
      throw new InvertibilityError('runtime/ulog-division-by-zero', `${name}: 0 ** ${r} is infinite`)
    }
    let negative = false
    if (a < 0) {
      if (!Number.isInteger(r))
        throw new InvertibilityError('runtime/ulog-nan', `${name}: a negative number to the non-integer power ${r}`)
      negative = Math.abs(r % 2) === 1
    }
    return enc(negative, roundLog(r * logOf(a)))
  }
  return {
    encode(x) {
      if (x === 0) return 0
      if (!Number.isFinite(x)) throw new InvertibilityError('runtime/ulog-nan', `${name}: cannot represent ${x}`)
      return enc(x < 0, roundLog(Math.log(Math.abs(x))))
    },
    decode: (c) => (c === 0 ? 0 : c < 0 ? -Math.exp(-c - OFF) : Math.exp(c - OFF)),
    log: logOf,
    mul,
    div,
    add,
    pow,
  }
}

/**
 * A logarithmic number system with the given format. Register it with
 * `registry.registerNumberSystem(logarithmic({ name: 'ulog24', fractionBits: 24, rangeBits: 12 }))`.
 */
export function logarithmic(format: LogarithmicFormat): NumberSystemSpec {
  const name = format.name ?? 'ulog'
  const F = format.fractionBits,
    R = format.rangeBits
  if (!Number.isInteger(F) || !Number.isInteger(R) || F < 0 || R < 1 || R + 1 + F > 53) {
    throw new RangeError(
      `logarithmic format ${name}: need integers F ≥ 0, R ≥ 1 with R + 1 + F ≤ 53 (got R = ${R}, F = ${F})`,
    )
  }
  const o = logarithmicOps(format)
  return {
    specificationVersion: 'v1',
    name,
    description: `logarithmic numbers: sign and log-magnitude (multiples of 2^-${F}, |log| < 2^${R}); *= and /= are exact bijections`,
    bijectiveUpdates: ['*=', '/='],
    rejectUpdate: (op) =>
      op === '+=' || op === '-='
        ? `\`${op}\` is not reversible on ${name} (adding rounds the log of the sum); use \`*=\`/\`/=\`, which add and subtract logs exactly — e.g. \`x *= y + z\` — or accumulate into a fixed-point number with \`acc += convert(x)\``
        : `\`${op}\` is not an update of ${name}`,
    exact: true,
    float: false,
    arrayType: 'Float64Array',
    fromHost: o.encode,
    toHost: o.decode,
    arithmetic: {
      ops: ['+', '-', '*', '/', '**'],
      reject: (op) => `\`${op}\` is not defined on ${name}`,
      binary: (op, a, b) => {
        switch (op) {
          case '*':
            return o.mul(a, b)
          case '/':
            return o.div(a, b)
          case '+':
            return o.add(a, b)
          case '-':
            return o.add(a, -b)
          case '**':
            return o.pow(a, b)
          default:
            throw new Error(`${name}: operator ${op}`)
        }
      },
      negate: (a) => (a === 0 ? 0 : -a),
    },
    update: (op, a, b) => {
      if (b === 0) {
        throw new InvertibilityError(
          'runtime/ulog-zero-factor',
          op === '*='
            ? `${name}: \`*=\` by zero cannot be undone (every value times zero is zero)`
            : `${name}: \`/=\` by zero (division by zero)`,
        )
      }
      return op === '*=' ? o.mul(a, b) : o.div(a, b)
    },
    fields: { log: 'f64' },
    getField: (c) => o.log(c),
    // for AD: x.log = log|x| of the real value x (∂/∂x = 1/x)
    realFields: {
      log: (x: Expr): Expr => ({ kind: 'call', callee: 'log', args: [{ kind: 'call', callee: 'abs', args: [x] }] }),
    },
  }
}

/** The default `ulog`: log-magnitude in multiples of 2^−42, |log| < 1024. */
export const ulog: NumberSystemSpec = logarithmic({ name: 'ulog', fractionBits: 42, rangeBits: 10 })
