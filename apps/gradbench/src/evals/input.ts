/**
 * Reading GradBench inputs: checked access to fields, nested JSON arrays flattened into
 * `Float64Array`s row by row, and typed arrays turned back into JSON arrays.
 */

/** The input is not what the eval should have sent. */
export class InputError extends Error {
  readonly code = 'gradbench/input'
  constructor(message: string) {
    super(message)
    this.name = 'InputError'
  }
}

/** The input as an object with string keys, or an `InputError`. */
export function record(input: unknown): Record<string, unknown> {
  if (input === null || typeof input !== 'object' || Array.isArray(input))
    throw new InputError('the input must be a JSON object')
  return input as Record<string, unknown>
}

/** A finite number field. */
export function num(o: Record<string, unknown>, key: string): number {
  const v = o[key]
  if (typeof v !== 'number' || !Number.isFinite(v))
    throw new InputError(`input field \`${key}\` must be a finite number`)
  return v
}

/** An integer field (1 and 1.0 alike). */
export function int(o: Record<string, unknown>, key: string): number {
  const v = num(o, key)
  if (!Number.isInteger(v)) throw new InputError(`input field \`${key}\` must be an integer`)
  return v
}

/** The number of elements of a nested array of numbers. */
function count(a: unknown, key: string): number {
  if (typeof a === 'number') return 1
  if (!Array.isArray(a)) throw new InputError(`input field \`${key}\` must be a (nested) array of numbers`)
  let n = 0
  for (const e of a) n += count(e, key)
  return n
}

function fill(a: unknown, out: Float64Array, at: number): number {
  if (typeof a === 'number') {
    out[at] = a
    return at + 1
  }
  for (const e of a as unknown[]) at = fill(e, out, at)
  return at
}

/**
 * A (nested) array of numbers flattened row by row, e.g. `x: double[n][d]` into n·d values.
 * `size`, when given, is the required element count.
 */
export function flat(o: Record<string, unknown>, key: string, size?: number): Float64Array {
  const v = o[key]
  const n = count(v, key)
  if (size !== undefined && n !== size)
    throw new InputError(`input field \`${key}\` must hold ${size} numbers, not ${n}`)
  const out = new Float64Array(n)
  fill(v, out, 0)
  return out
}

/** A typed array as a JSON array of numbers. */
export const list = (a: ArrayLike<number>): number[] => Array.from(a)

/** A row-major typed array as a JSON array of `rows` arrays. */
export function matrix(a: ArrayLike<number>, rows: number, cols: number): number[][] {
  const out: number[][] = []
  for (let r = 0; r < rows; r++) out.push(Array.from({ length: cols }, (_, c) => a[r * cols + c]!))
  return out
}
