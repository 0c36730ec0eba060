/**
 * Central finite differences: the independent oracle every derivative in the suite is checked
 * against (timed only as the Bessel finite-difference row). `x` is restored exactly after each probe.
 */
export function finiteDifferenceGradient(f: (x: Float64Array) => number, x: Float64Array, h = 1e-6): Float64Array {
  const g = new Float64Array(x.length)
  for (let i = 0; i < x.length; i++) {
    const xi = x[i]
    const step = h * Math.max(1, Math.abs(xi))
    x[i] = xi + step
    const fp = f(x)
    x[i] = xi - step
    const fm = f(x)
    x[i] = xi
    g[i] = (fp - fm) / (2 * step)
  }
  return g
}

/** Dense Jacobian, row-major `[outputs × inputs]`, of a vector function. */
export function finiteDifferenceJacobian(
  f: (x: Float64Array) => Float64Array,
  x: Float64Array,
  h = 1e-6,
): { rows: number; cols: number; values: Float64Array } {
  const y0 = f(x)
  const rows = y0.length
  const cols = x.length
  const values = new Float64Array(rows * cols)
  for (let j = 0; j < cols; j++) {
    const xj = x[j]
    const step = h * Math.max(1, Math.abs(xj))
    x[j] = xj + step
    const yp = f(x).slice()
    x[j] = xj - step
    const ym = f(x)
    x[j] = xj
    for (let i = 0; i < rows; i++) values[i * cols + j] = (yp[i] - ym[i]) / (2 * step)
  }
  return { rows, cols, values }
}

/** Hessian by central differences of an exact gradient: its Jacobian, symmetrised (row-major). */
export function finiteDifferenceHessian(
  gradient: (x: Float64Array) => Float64Array,
  x: Float64Array,
  h = 1e-5,
): Float64Array {
  const n = x.length
  const H = finiteDifferenceJacobian(gradient, x, h).values
  for (let i = 0; i < n; i++)
    for (let j = i + 1; j < n; j++) {
      const s = 0.5 * (H[i * n + j] + H[j * n + i])
      H[i * n + j] = s
      H[j * n + i] = s
    }
  return H
}

/**
 * The error measure used throughout: max_i |a_i - b_i| / max(1, max_i |b_i|) — absolute for
 * small references, relative for large ones.
 */
export function maxScaledError(actual: ArrayLike<number>, reference: ArrayLike<number>): number {
  if (actual.length !== reference.length) return Number.POSITIVE_INFINITY
  let scale = 1
  for (let i = 0; i < reference.length; i++) scale = Math.max(scale, Math.abs(reference[i]))
  let err = 0
  for (let i = 0; i < reference.length; i++) {
    const d = Math.abs(actual[i] - reference[i])
    if (!(d <= err)) err = Number.isNaN(d) ? Number.POSITIVE_INFINITY : d
  }
  return err / scale
}
