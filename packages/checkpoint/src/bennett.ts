import { act, assertPositiveInt, flatten, makeSchedule, type Action, type Nested, type Schedule } from './action.js'

/** Options of {@link bennettSchedule} and {@link bennettGradientSchedule}. */
export interface BennettOptions {
  /** Chain length T. Any T ≥ 1 works; the closed forms hold for T = kⁿ. */
  steps: number
  /** Number of sectors each segment is split into (k ≥ 2). */
  k: number
  /**
   * Run the top-level Q process, i.e. uncompute the k−1 top-level boundary states so that
   * only the input and the output are left (default `true` here; note that
   * {@link checkpointedGradient} and {@link gradientSchedule} default it to `false`).
   * With `false` they stay live: the forward run then costs k·(2k−1)ⁿ⁻¹ steps instead of
   * (2k−1)ⁿ, and a following adjoint sweep need not recompute them.
   */
  uncomputeTop?: boolean
}

/** Sector boundaries of the segment [a, a+len]: k near-equal parts (fewer if len < k). */
function sectors(a: number, len: number, k: number): number[] {
  const parts = Math.min(k, len)
  const q = Math.floor(len / parts)
  const extra = len % parts
  const bounds = [a]
  let at = a
  for (let j = 0; j < parts; j++) {
    at += q + (j < extra ? 1 : 0)
    bounds.push(at)
  }
  return bounds
}

/** Compute s_{a+len} from s_a, leaving no intermediate state (compute–copy–uncompute). */
function* compute(a: number, len: number, k: number): Nested {
  if (len === 1) {
    yield act.forward(a + 1)
    return
  }
  const b = sectors(a, len, k)
  const parts = b.length - 1
  for (let j = 0; j < parts; j++) yield compute(b[j]!, b[j + 1]! - b[j]!, k) // P process
  for (let j = parts - 2; j >= 0; j--) yield uncompute(b[j]!, b[j + 1]! - b[j]!, k) // Q process
}

/**
 * The exact inverse of {@link compute}: clear s_{a+len}, given s_a. `leaf(i)` clears s_i at the
 * leaves of the recursion that clear the chain from the end: `act.uncompute`, or
 * {@link uncomputingAdjoint} to carry the adjoint along (every step is then reversed exactly
 * once, from a+len down to a+1). `boundariesLive`: the sector boundaries are already live
 * (the top level of a gradient sweep without Q process).
 */
function* uncompute(
  a: number,
  len: number,
  k: number,
  leaf: (step: number) => Action = act.uncompute,
  boundariesLive = false,
): Nested {
  if (len === 1) {
    yield leaf(a + 1)
    return
  }
  const b = sectors(a, len, k)
  const parts = b.length - 1
  if (!boundariesLive) for (let j = 0; j < parts - 1; j++) yield compute(b[j]!, b[j + 1]! - b[j]!, k)
  for (let j = parts - 1; j >= 0; j--) yield uncompute(b[j]!, b[j + 1]! - b[j]!, k, leaf)
}

/** The leaf of the gradient sweep: reverse step i and uncompute s_i. */
const uncomputingAdjoint = (step: number): Action => act.adjoint(step, true)

function* top(T: number, k: number, uncomputeTop: boolean): Nested {
  if (uncomputeTop || T === 1) {
    yield compute(0, T, k)
    return
  }
  const b = sectors(0, T, k)
  for (let j = 0; j < b.length - 1; j++) yield compute(b[j]!, b[j + 1]! - b[j]!, k)
}

function check(options: BennettOptions): { T: number; k: number; uncomputeTop: boolean } {
  assertPositiveInt(options.steps, 'steps')
  assertPositiveInt(options.k, 'k')
  if (options.k < 2) throw new RangeError(`k must be at least 2, got ${options.k}`)
  return { T: options.steps, k: options.k, uncomputeTop: options.uncomputeTop ?? true }
}

/**
 * Bennett's k-ary time–space trade-off (seed 000, Listing 3): compute s_T from s₀ by
 * recursively running k sectors forward (P) and the first k−1 backward (Q).
 * Reversible (only `forward`/`uncompute`). For T = kⁿ it takes (2k−1)ⁿ steps with at most
 * n(k−1)+2 live states (see {@link bennettCost}) and ends with only s₀ and s_T live
 * (plus the top-level boundaries when `uncomputeTop` is false).
 */
export function bennettSchedule(options: BennettOptions): Schedule {
  const { T, k, uncomputeTop } = check(options)
  const name = `bennett(k=${k}${uncomputeTop ? '' : ', keep top'})`
  return makeSchedule(name, T, () => flatten(top(T, k, uncomputeTop)))
}

/**
 * Gradient schedule on top of Bennett: {@link bennettSchedule}, then the inverse schedule
 * with the adjoint carried along (each step reversed exactly once, T down to 1, by an
 * uncomputing adjoint). No tape: states are recomputed reversibly. For T = kⁿ with
 * `uncomputeTop` the sweep costs another (2k−1)ⁿ actions, T of them adjoints; peak memory
 * is the same n(k−1)+2. Ends with only s₀ live.
 */
export function bennettGradientSchedule(options: BennettOptions): Schedule {
  const { T, k, uncomputeTop } = check(options)
  const name = `bennett-gradient(k=${k}${uncomputeTop ? '' : ', keep top'})`
  return makeSchedule(name, T, () =>
    flatten(
      (function* (): Nested {
        yield top(T, k, uncomputeTop)
        yield uncompute(0, T, k, uncomputingAdjoint, !uncomputeTop)
      })(),
    ),
  )
}
