/**
 * GradBench's gradient descent (the solver of particle and saddle), as the eval describes it:
 * start with step η = 1e-5; stop when ‖∇‖ ≤ 1e-5 or when the next step would move the point by
 * at most 1e-5; accept a step only if the cost decreases; after 10 accepted steps in a row η
 * doubles, after a rejected one it halves.
 */

/** An objective and its gradient at a point (the gradient written into `out`). */
export interface Objective {
  value(x: Float64Array): number
  gradient(x: Float64Array, out: Float64Array): void
}

const norm = (v: Float64Array): number => Math.sqrt(v.reduce((s, e) => s + e * e, 0))

/** η of every accepted step, in order (what a replay of the descent needs). */
export type Steps = number[]

/** Counts of a solve, for reports. */
export const argminStats = { values: 0, gradients: 0 }

/**
 * The minimiser found from `x0` (a new array). `steps`, when given, receives η of every
 * accepted step, in order.
 */
export function argmin(f: Objective, x0: ArrayLike<number>, steps?: Steps, maxIterations = 1_000_000): Float64Array {
  let x = Float64Array.from(x0)
  let fx = f.value(x)
  let gx = new Float64Array(x.length)
  f.gradient(x, gx)
  argminStats.values++
  argminStats.gradients++
  let eta = 1e-5
  let accepted = 0
  const next = new Float64Array(x.length)
  for (let it = 0; it < maxIterations; it++) {
    if (norm(gx) <= 1e-5) return x
    if (accepted === 10) {
      eta *= 2
      accepted = 0
      continue
    }
    let moved = 0
    for (let i = 0; i < x.length; i++) {
      next[i] = x[i]! - eta * gx[i]!
      moved += (next[i]! - x[i]!) ** 2
    }
    if (Math.sqrt(moved) <= 1e-5) return x
    const fn = f.value(next)
    argminStats.values++
    if (fn < fx) {
      steps?.push(eta)
      x = Float64Array.from(next)
      fx = fn
      gx = new Float64Array(x.length)
      f.gradient(x, gx)
      argminStats.gradients++
      accepted++
    } else {
      eta /= 2
      accepted = 0
    }
  }
  throw new Error(`the gradient descent did not converge in ${maxIterations} iterations`)
}
