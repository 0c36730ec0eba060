/**
 * Central finite differences, to check derivatives computed by AD.
 */

/** A function of a vector to a scalar or to a vector. */
export type Differentiable = (x: number[]) => number | ArrayLike<number>

/** The default step: about the cube root of machine epsilon, which balances truncation and rounding. */
export const DEFAULT_STEP = 6.055454452393343e-6

/**
 * Central differences of `f` at `x`: `(f(x + h e_i) - f(x - h e_i)) / 2h` for every input i.
 * For a scalar `f` this is the gradient (one entry per input); for a vector `f`, the Jacobian
 * as rows of outputs (`J[out][in]`). The step is scaled by `max(1, |x_i|)` and the actual
 * difference of the perturbed inputs is used as the denominator, so that rounding of
 * `x_i ± h` does not bias the result.
 */
export function finiteDifference(f: (x: number[]) => number, x: ArrayLike<number>, h?: number): number[]
export function finiteDifference(f: (x: number[]) => ArrayLike<number>, x: ArrayLike<number>, h?: number): number[][]
export function finiteDifference(f: Differentiable, x: ArrayLike<number>, h = DEFAULT_STEP): number[] | number[][] {
  if (!(h > 0)) throw new RangeError(`finiteDifference: the step must be positive, got ${h}`)
  const base = Array.from(x)
  const columns: Array<number | number[]> = []
  for (let i = 0; i < base.length; i++) {
    const step = h * Math.max(1, Math.abs(base[i]!))
    const plus = base.slice(),
      minus = base.slice()
    plus[i] = base[i]! + step
    minus[i] = base[i]! - step
    const width = plus[i]! - minus[i]!
    const fp = f(plus),
      fm = f(minus)
    if (typeof fp === 'number' && typeof fm === 'number') columns.push((fp - fm) / width)
    else {
      const a = fp as ArrayLike<number>,
        b = fm as ArrayLike<number>
      columns.push(Array.from({ length: a.length }, (_, k) => (a[k]! - b[k]!) / width))
    }
  }
  if (columns.every((c) => typeof c === 'number')) return columns as number[]
  const outputs = (columns[0] as number[] | undefined)?.length ?? 0
  return Array.from({ length: outputs }, (_, k) => columns.map((c) => (c as number[])[k]!))
}

/** `|a - b| / max(1, |a|, |b|)`: absolute error near zero, relative error elsewhere. */
export function relativeError(a: number, b: number): number {
  if (a === b) return 0
  return Math.abs(a - b) / Math.max(1, Math.abs(a), Math.abs(b))
}

export interface GradientCheck {
  ok: boolean
  /** Largest relative error over all entries. */
  maxError: number
  /** Where it occurred (`[i]` for a gradient, `[out, in]` for a Jacobian). */
  worst: number[]
  numeric: number[] | number[][]
}

/**
 * Compares an analytic gradient (or Jacobian, rows of outputs) with central differences of
 * `f` at `x`; `ok` when every entry agrees within `tolerance` (relative, see `relativeError`).
 */
export function checkGradient(
  f: Differentiable,
  analytic: ArrayLike<number> | ArrayLike<ArrayLike<number>>,
  x: ArrayLike<number>,
  options: { h?: number; tolerance?: number } = {},
): GradientCheck {
  const numeric = (finiteDifference as (f: Differentiable, x: ArrayLike<number>, h?: number) => number[] | number[][])(
    f,
    x,
    options.h,
  )
  const tol = options.tolerance ?? 1e-5
  let maxError = -1
  let worst: number[] = []
  const visit = (a: number, n: number, at: number[]) => {
    const e =
      Number.isNaN(a) || Number.isNaN(n) ? (Number.isNaN(a) && Number.isNaN(n) ? 0 : Infinity) : relativeError(a, n)
    if (e > maxError) {
      maxError = e
      worst = at
    }
  }
  const an = analytic as ArrayLike<number | ArrayLike<number>>
  if (an.length !== numeric.length)
    throw new RangeError(
      `checkGradient: the analytic derivative has ${an.length} entries, the numeric one ${numeric.length}`,
    )
  for (let i = 0; i < numeric.length; i++) {
    const row: number | number[] = numeric[i]!
    if (typeof row === 'number') visit(an[i] as number, row, [i])
    else for (let j = 0; j < row.length; j++) visit((an[i] as ArrayLike<number>)[j]!, row[j]!, [i, j])
  }
  maxError = Math.max(0, maxError)
  return { ok: maxError <= tol, maxError, worst, numeric }
}

/**
 * Central differences of one result of a call, with respect to every float argument: `f` is
 * called with `args` (copied) and perturbed copies, and result `loss` is read from what it
 * returns (an array of results, as a Tenet function returns) or, when it returns nothing, from
 * `f.results` (a compiled core function). Numbers and the elements of `Float64Array` /
 * `Float32Array` arguments are perturbed (one `finiteDifference` over all of them); arguments
 * in `skip`, and any other kind of argument, are held constant and give `null`.
 */
export function finiteDifferenceOfCall(
  f: (...args: never[]) => unknown,
  args: readonly unknown[],
  options: { loss: number; h?: number; skip?: readonly number[] },
): Array<number | number[] | null> {
  const skip = new Set(options.skip ?? [])
  const isFloatArray = (a: unknown): a is Float64Array | Float32Array =>
    a instanceof Float64Array || a instanceof Float32Array
  const slots: Array<[arg: number, index: number]> = []
  args.forEach((a, i) => {
    if (skip.has(i)) return
    if (typeof a === 'number') slots.push([i, -1])
    else if (isFloatArray(a)) for (let k = 0; k < a.length; k++) slots.push([i, k])
  })
  const x = slots.map(([i, k]) => (k < 0 ? (args[i] as number) : (args[i] as Float64Array)[k]!))
  const call = (v: number[]): number => {
    const a = args.map((arg) => (ArrayBuffer.isView(arg) ? (arg as unknown as { slice(): unknown }).slice() : arg))
    slots.forEach(([i, k], s) => {
      if (k < 0) a[i] = v[s]
      else (a[i] as Float64Array)[k] = v[s]!
    })
    const r = (f as (...a: unknown[]) => unknown)(...a)
    const out = Array.isArray(r)
      ? r[options.loss]
      : (f as unknown as { results?: ArrayLike<number> }).results?.[options.loss]
    if (typeof out !== 'number') throw new TypeError(`finiteDifferenceOfCall: result ${options.loss} is not a number`)
    return out
  }
  const d = finiteDifference(call, x, options.h)
  const result: Array<number | number[] | null> = args.map((a, i) =>
    skip.has(i) ? null : typeof a === 'number' ? 0 : isFloatArray(a) ? Array<number>(a.length).fill(0) : null,
  )
  slots.forEach(([i, k], s) => {
    if (k < 0) result[i] = d[s]!
    else (result[i] as number[])[k] = d[s]!
  })
  return result
}
