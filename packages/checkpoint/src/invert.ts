import { act, makeSchedule, type Action, type Schedule } from './action.js'
import { ScheduleSimulator } from './check.js'

function reversibleActions(schedule: Schedule): { actions: Action[]; end: number[] } {
  const sim = new ScheduleSimulator({ steps: schedule.steps, initial: schedule.initial, reversible: true })
  const actions: Action[] = []
  for (const a of schedule) {
    if (a.kind === 'adjoint') throw new RangeError('only forward/uncompute schedules can be inverted')
    sim.apply(a)
    actions.push(a)
  }
  return { actions, end: [...sim.live].sort((x, y) => x - y) }
}

function inverseOf(a: Action): Action {
  return a.kind === 'forward' ? act.uncompute(a.step) : act.forward((a as { step: number }).step)
}

/**
 * The inverse of a reversible schedule (only `forward`/`uncompute`): the actions in reverse
 * order, each forward turned into an uncompute and vice versa. It starts from the live states
 * the original ends with and ends where the original started: running Bennett's schedule
 * backwards clears s_T again. Materialises the schedule (memory linear in its length).
 */
export function invertSchedule(schedule: Schedule): Schedule {
  const { actions, end } = reversibleActions(schedule)
  return makeSchedule(
    `inverse(${schedule.name})`,
    schedule.steps,
    function* () {
      for (let j = actions.length - 1; j >= 0; j--) yield inverseOf(actions[j]!)
    },
    end,
  )
}

/**
 * Generic reversible gradient schedule for any forward schedule that computes s_T from s₀
 * with `forward`/`uncompute` only: the forward schedule, then its inverse in which, scanning
 * from the start, the first uncompute of step T, then the next one of step T−1, …, down to
 * step 1, become uncomputing adjoints. The last uncompute of step i always precedes that of
 * step i−1 in an inverse that clears everything, so the scan succeeds. Materialises the
 * schedule; {@link bennettGradientSchedule} and {@link knillGradientSchedule} generate the
 * same stream lazily.
 */
export function reversibleGradientSchedule(schedule: Schedule): Schedule {
  const { actions, end } = reversibleActions(schedule)
  const T = schedule.steps
  if (!end.includes(T)) throw new RangeError(`the schedule does not end with s_${T} live`)
  const initial = [...schedule.initial].sort((x, y) => x - y)
  if (initial.join() !== '0') throw new RangeError('the schedule must start from s₀ alone')
  return makeSchedule(`gradient(${schedule.name})`, T, function* () {
    yield* actions
    let next = T
    for (let j = actions.length - 1; j >= 0; j--) {
      const a = inverseOf(actions[j]!)
      if (a.kind === 'uncompute' && a.step === next) {
        yield act.adjoint(next, true)
        next--
      } else {
        yield a
      }
    }
  })
}
