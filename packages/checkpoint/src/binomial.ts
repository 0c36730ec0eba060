import { act, assertPositiveInt, flatten, makeSchedule, type Nested, type Schedule } from './action.js'
import { revolveSplit } from './closed-forms.js'

/** Options of {@link binomialSchedule}. */
export interface BinomialOptions {
  /** Chain length T. */
  steps: number
  /** Snapshot budget s ≥ 1, the snapshot of s₀ included. */
  snapshots: number
}

/**
 * Reverse steps a+1 … a+l. On entry s_a is live and (when l > 1) stored; on exit s_a is
 * live again and still stored. Uses at most `s` snapshots counting s_a's.
 */
function* reverse(a: number, l: number, s: number, T: number): Nested {
  if (l === 1) {
    if (a + 1 === T) {
      // The output: evaluated once so the driver can hand out s_T and seed s̄_T.
      yield act.forward(T)
      yield act.free(T)
    }
    yield act.adjoint(a + 1)
    return
  }
  const m = revolveSplit(l, s)
  for (let i = a + 1; i <= a + m; i++) {
    yield act.forward(i)
    yield act.free(i - 1)
  }
  const tail = l - m
  if (tail > 1) yield act.store(a + m)
  yield reverse(a + m, tail, s - 1, T)
  if (tail > 1) yield act.drop(a + m)
  yield act.free(a + m)
  yield act.restore(a)
  yield reverse(a, m, s, T)
}

/**
 * Binomial checkpointing (revolve; treeverse of seed 000, Fig. 1a): the gradient schedule
 * that reverses T steps with at most `snapshots` snapshots using the fewest forward steps,
 * {@link revolveExtraSteps}(T, s) + 1 (the +1 is step T, evaluated once for the output).
 * Irreversible: working states are freed and snapshots restored. At most s snapshots and 2
 * working states are held (peak ≤ s + 2). Ends with only s₀ live.
 */
export function binomialSchedule(options: BinomialOptions): Schedule {
  assertPositiveInt(options.steps, 'steps')
  assertPositiveInt(options.snapshots, 'snapshots')
  const { steps: T, snapshots: s } = options
  return makeSchedule(`binomial(s=${s})`, T, () =>
    flatten(
      (function* (): Nested {
        if (T > 1) yield act.store(0)
        yield reverse(0, T, s, T)
        if (T > 1) yield act.drop(0)
      })(),
    ),
  )
}
