/**
 * The one rule every engine applies to the value a host function returns inside an expression
 * (`y += ${fn}(x)`): it must be a JS number. Anything else (a BigInt, a string, undefined) is a
 * `TenetError` with code `runtime/host-result` and the call's location, the same on the
 * interpreter, cpu and wasm. (After `@safe` the value is ignored, whatever it is.)
 */
import { TenetError } from './errors.js'
import type { SourceLocation } from './loc.js'

/** Describes a returned value for a message (`a bigint (10n)`, `undefined`, `a string`). */
function describe(v: unknown): string {
  if (v === undefined || v === null) return String(v)
  if (typeof v === 'bigint') return `a bigint (${v}n)`
  return `a${/^[aeiou]/.test(typeof v) ? 'n' : ''} ${typeof v}`
}

/**
 * Returns `value` when it is a number; otherwise throws the `runtime/host-result` error for the
 * interpolated function `${index}` called at `loc`.
 */
export function hostNumber(value: unknown, index: number, loc?: SourceLocation): number {
  if (typeof value === 'number') return value
  throw new TenetError(
    'runtime/host-result',
    `the host function \`\${${index}}\` returned ${describe(value)}; a host function used in an expression must return a number`,
    loc,
  )
}
