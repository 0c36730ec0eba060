import type { Action } from './action.js'
import { checkSchedule, type ScheduleCost } from './check.js'

export type { ScheduleCost } from './check.js'

/** What a driver run cost: the schedule's counts, as executed, plus wall-clock time. */
export interface CostLog extends ScheduleCost {
  /** Name of the schedule that ran. */
  schedule: string
  /** Wall-clock time of the run in milliseconds (callbacks included). */
  wallTimeMs: number
}

/**
 * Count what a schedule does without running it: forward steps, uncomputes, adjoints,
 * snapshot stores and restores, and the peak number of state buffers held at once
 * (live working states, input and output included, plus snapshots).
 * The schedule is simulated (this is `checkSchedule(schedule).cost`), so an invalid one throws
 * {@link ScheduleError}.
 */
export function costOf(schedule: Iterable<Action>): ScheduleCost {
  return checkSchedule(schedule).cost
}
