import { act, assertPositiveInt, makeSchedule, type Schedule } from './action.js'

/** Options of {@link storeAllSchedule} and {@link recomputeAllSchedule}. */
export interface ChainOptions {
  /** Chain length T. */
  steps: number
}

/**
 * Keep everything: one forward sweep holding every state s₀ … s_T, then the adjoint sweep,
 * freeing each state once used. T forward steps, no recomputation, peak T + 1 states.
 */
export function storeAllSchedule(options: ChainOptions): Schedule {
  assertPositiveInt(options.steps, 'steps')
  const T = options.steps
  return makeSchedule('store-all', T, function* () {
    for (let i = 1; i <= T; i++) yield act.forward(i)
    yield act.free(T)
    for (let i = T; i >= 1; i--) {
      yield act.adjoint(i)
      if (i > 1) yield act.free(i - 1)
    }
  })
}

/**
 * Keep nothing but a snapshot of s₀: before the adjoint of step i, recompute s_{i−1} from
 * s₀. T(T−1)/2 + 1 forward steps, at most 3 states (the snapshot and two working states).
 * The same cost as {@link binomialSchedule} with one snapshot.
 */
export function recomputeAllSchedule(options: ChainOptions): Schedule {
  assertPositiveInt(options.steps, 'steps')
  const T = options.steps
  return makeSchedule('recompute-all', T, function* () {
    if (T > 1) yield act.store(0)
    for (let j = T; j >= 1; j--) {
      if (j < T) yield act.restore(0)
      for (let i = 1; i < j; i++) {
        yield act.forward(i)
        yield act.free(i - 1)
      }
      if (j === T) {
        yield act.forward(T)
        yield act.free(T)
      }
      yield act.adjoint(j)
      if (j > 1) yield act.free(j - 1)
    }
    if (T > 1) yield act.drop(0)
  })
}
