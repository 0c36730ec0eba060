/**
 * Closed-form costs of the schedules, and the recursions they must agree with.
 * All counts are exact integers while they stay below 2⁵³.
 */

/** Binomial coefficient C(n, k); 0 when k < 0 or k > n. */
export function binomial(n: number, k: number): number {
  if (k < 0 || k > n) return 0
  const kk = Math.min(k, n - k)
  let c = 1
  // c·(n−j) is divisible by (j+1) because c = C(n, j) at that point.
  for (let j = 0; j < kk; j++) c = (c * (n - j)) / (j + 1)
  return c
}

/**
 * η(τ, δ) = C(τ+δ, δ): the number of steps that treeverse / revolve can reverse with δ
 * snapshots when no step is evaluated more than τ times (Griewank 1992; seed 000, Fig. 1a).
 */
export function eta(tau: number, delta: number): number {
  return binomial(tau + delta, delta)
}

/**
 * Bennett's k-ary compute–copy–uncompute on T = kⁿ steps (seed 000, Listing 3 and Appendix A):
 * `steps` = (2k−1)ⁿ step evaluations (forward plus uncompute), `peakStates` = n(k−1)+2
 * live states, input and output included.
 */
export function bennettCost(k: number, n: number): { steps: number; peakStates: number } {
  return { steps: (2 * k - 1) ** n, peakStates: n * (k - 1) + 2 }
}

/**
 * Revolve's repetition number r for l steps and s snapshots: the smallest r ≥ 0 with
 * C(s+r, s) ≥ l. With l = η(r, s) the binomial schedule evaluates no step more than r times
 * before its adjoint.
 */
export function revolveRepetitions(l: number, s: number): number {
  if (s < 1) return l <= 1 ? 0 : Infinity
  let r = 0
  while (binomial(s + r, s) < l) r++
  return r
}

/**
 * Revolve's minimal number of forward steps t(l, s) = r·l − C(s+r, r−1), r =
 * {@link revolveRepetitions}(l, s) (Griewank & Walther), Infinity for s = 0 < l − 1.
 *
 * What it counts: reversing l steps from a snapshot of s₀ with at most s snapshots
 * (s₀'s included) when the adjoint of step i needs s_{i−1} only. It is the number of
 * `forward` actions on steps 1 … l−1 (the same as Griewank's count of advances beyond the
 * l taped steps). {@link binomialSchedule} also evaluates step l once to output s_l, so its
 * forward count is exactly t(l, s) + 1; with s ≥ l−1 that is l (nothing recomputed).
 */
export function revolveExtraSteps(l: number, s: number): number {
  if (l <= 1) return 0
  const r = revolveRepetitions(l, s)
  if (!Number.isFinite(r)) return Infinity
  return r * l - binomial(s + r, r - 1)
}

let dpTable: Float64Array[] = []
let dpSteps = 0

/**
 * The recursion that {@link revolveExtraSteps} solves, computed by dynamic programming:
 * t(1, s) = 0, t(l, 0) = ∞ (l > 1), and
 * t(l, s) = min over 1 ≤ m < l of  m + t(l−m, s−1) + t(m, s)
 * (advance m steps, snapshot s_m, reverse the tail with one snapshot fewer, then the head).
 * O(l²·s) the first time; results are cached.
 */
export function revolveExtraStepsDP(l: number, s: number): number {
  if (l <= 1) return 0
  if (s < 1) return Infinity
  if (l > dpSteps || s >= dpTable.length) {
    const L = l > dpSteps ? Math.max(l, 2 * dpSteps) : dpSteps
    const S = s >= dpTable.length ? Math.max(s + 1, 2 * dpTable.length) : dpTable.length
    const table: Float64Array[] = []
    for (let ss = 0; ss < S; ss++) {
      const row = new Float64Array(L + 1)
      row[0] = 0
      row[1] = 0
      for (let ll = 2; ll <= L; ll++) {
        if (ss === 0) {
          row[ll] = Infinity
          continue
        }
        const below = table[ss - 1]!
        let best = Infinity
        for (let m = 1; m < ll; m++) {
          const v = m + below[ll - m]! + row[m]!
          if (v < best) best = v
        }
        row[ll] = best
      }
      table.push(row)
    }
    dpTable = table
    dpSteps = L
  }
  return dpTable[s]![l]!
}

/**
 * The split used by the binomial schedule: an m in [1, l−1] minimising
 * m + t(m, s) + t(l−m, s−1). The objective is convex in m (t is convex piecewise linear
 * in l), so a binary search on its forward difference finds the smallest minimiser.
 */
export function revolveSplit(l: number, s: number): number {
  if (l < 2) throw new RangeError('revolveSplit needs l ≥ 2')
  if (s <= 1) return l - 1
  const g = (m: number): number => m + revolveExtraSteps(m, s) + revolveExtraSteps(l - m, s - 1)
  let lo = 1
  let hi = l - 1
  while (lo < hi) {
    const mid = (lo + hi) >> 1
    if (g(mid + 1) - g(mid) >= 0) hi = mid
    else lo = mid + 1
  }
  return lo
}
