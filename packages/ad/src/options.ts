/**
 * Validation of the options objects of the AD functions, so that a missing or malformed option
 * is a `TenetError` (code `ad/argument`) that names it, never a TypeError or a NaN.
 */
import { argError } from './arguments.js'

/** The options object of `fn`, which must be a plain object (with `loss` where `needsLoss`). */
export function optionsOf<T extends object>(fn: string, options: T | undefined, needsLoss: boolean): T {
  if (options === undefined || options === null || typeof options !== 'object' || Array.isArray(options)) {
    const got = options === null ? 'null' : Array.isArray(options) ? 'an array' : typeof options
    return argError(
      `\`${fn}\` needs an options object${needsLoss ? ' with `loss` (the index of the loss argument), e.g. `{ loss: 0 }`' : ''}, got ${got}`,
    )
  }
  if (needsLoss && (options as { loss?: unknown }).loss === undefined)
    argError(`\`${fn}\` needs \`loss\` in its options (the index of the loss argument), e.g. \`{ loss: 0 }\``)
  return options
}

/** The arguments array of `fn`. */
export function argsOf(fn: string, args: unknown): unknown[] {
  if (!Array.isArray(args))
    argError(`\`${fn}\` takes the function's arguments as an array, got ${args === null ? 'null' : typeof args}`)
  return args as unknown[]
}

/** `value` if it is undefined or a positive integer (a width). */
export function positiveInteger(fn: string, name: string, value: unknown): number | undefined {
  if (value === undefined) return undefined
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1)
    argError(`\`${name}\` of \`${fn}\` must be a positive integer, got ${show(value)}`)
  return value as number
}

/** `value` if it is undefined or a finite number > 0 (a step), or ≥ 0 with `orZero` (a tolerance). */
export function positiveNumber(fn: string, name: string, value: unknown, orZero = false): number | undefined {
  if (value === undefined) return undefined
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || (!orZero && value === 0)) {
    argError(`\`${name}\` of \`${fn}\` must be a finite number ${orZero ? '≥ 0' : '> 0'}, got ${show(value)}`)
  }
  return value as number
}

/** `value` if it is undefined or an array of integer argument indices. */
export function indexList(fn: string, name: string, value: unknown): number[] | undefined {
  if (value === undefined) return undefined
  if (!Array.isArray(value) || !value.every((i) => typeof i === 'number' && Number.isInteger(i))) {
    argError(`\`${name}\` of \`${fn}\` must be an array of argument indices (e.g. \`[1]\`), got ${show(value)}`)
  }
  return value as number[]
}

function show(v: unknown): string {
  if (typeof v === 'string') return JSON.stringify(v)
  if (Array.isArray(v)) return `[${v.map(show).join(', ')}]`
  return v === null ? 'null' : typeof v === 'object' ? 'an object' : String(v)
}
