import { formatAction, isSchedule, type Action } from './action.js'

/** A schedule broke the memory model: which action, where, and why. */
export class ScheduleError extends Error {
  /** Position of the offending action in the stream (−1 for end-of-schedule checks). */
  readonly index: number
  /** The offending action, when there is one. */
  readonly action: Action | undefined

  constructor(message: string, index: number, action?: Action) {
    const where = index < 0 ? 'at end of schedule' : `at action #${index} (${action ? formatAction(action) : '?'})`
    super(`${message} ${where}`)
    this.name = 'ScheduleError'
    this.index = index
    this.action = action
  }
}

/** Operation counts and peak memory of a schedule. */
export interface ScheduleCost {
  /** `forward` actions (step evaluations s_i = F_i(s_{i−1})). */
  forward: number
  /** `uncompute` actions (reversible clears s_i −= F_i(s_{i−1})). */
  uncompute: number
  /** `adjoint` actions (vector–Jacobian products), including the uncomputing ones. */
  adjoint: number
  /** `store` actions (snapshot copies). */
  stores: number
  /** `restore` actions (copies back from a snapshot). */
  restores: number
  /** Largest number of state buffers held at once: live working states plus snapshots. */
  peakStates: number
}

/** Options of {@link ScheduleSimulator}. */
export interface SimulatorOptions {
  /** Chain length T; indices outside 0…T are errors, and the adjoint sweep must start at T. */
  steps?: number
  /** Live states before the first action (default `[0]`). */
  initial?: Iterable<number>
  /** Forbid `store`, `restore` and `free` (a reversible schedule never discards information). */
  reversible?: boolean
}

/**
 * Executes the memory model of {@link Action} without any data: tracks which states are
 * live and stored, counts operations, and throws {@link ScheduleError} on the first action
 * that reads a state that is not there, recreates one that is, or breaks the adjoint order.
 * Drivers run every action through one of these before doing the work.
 */
export class ScheduleSimulator {
  /** Live (working) state indices. */
  readonly live = new Set<number>()
  /** Snapshot state indices. */
  readonly stored = new Set<number>()
  /** Counts so far. */
  readonly cost: ScheduleCost = { forward: 0, uncompute: 0, adjoint: 0, stores: 0, restores: 0, peakStates: 0 }
  /** `free` actions so far. */
  frees = 0
  /** Number of actions applied. */
  index = 0
  /** Highest state index that has been live so far. */
  highest = 0
  private readonly steps: number | undefined
  private readonly reversible: boolean
  private nextAdjoint: number | undefined

  constructor(options: SimulatorOptions = {}) {
    this.steps = options.steps
    this.reversible = options.reversible ?? false
    for (const s of options.initial ?? [0]) {
      this.checkIndex(s)
      this.live.add(s)
      this.highest = Math.max(this.highest, s)
    }
    this.cost.peakStates = this.live.size
  }

  /** Apply one action; throws {@link ScheduleError} if it is not allowed now. */
  apply(a: Action): void {
    if (this.reversible && (a.kind === 'store' || a.kind === 'restore' || a.kind === 'free')) {
      this.fail('a reversible schedule may not store, restore or free states', a)
    }
    switch (a.kind) {
      case 'forward': {
        this.checkStep(a.step, a)
        if (!this.live.has(a.step - 1)) this.fail(`forward reads state ${a.step - 1}, which is not live`, a)
        if (this.live.has(a.step)) this.fail(`state ${a.step} is already live`, a)
        this.live.add(a.step)
        this.highest = Math.max(this.highest, a.step)
        this.cost.forward++
        break
      }
      case 'uncompute': {
        this.checkStep(a.step, a)
        if (!this.live.has(a.step - 1)) this.fail(`uncompute reads state ${a.step - 1}, which is not live`, a)
        if (!this.live.has(a.step)) this.fail(`uncompute clears state ${a.step}, which is not live`, a)
        this.live.delete(a.step)
        this.cost.uncompute++
        break
      }
      case 'store': {
        this.checkIndex(a.state, a)
        if (!this.live.has(a.state)) this.fail(`store copies state ${a.state}, which is not live`, a)
        if (this.stored.has(a.state)) this.fail(`state ${a.state} is already stored`, a)
        this.stored.add(a.state)
        this.cost.stores++
        break
      }
      case 'restore': {
        this.checkIndex(a.state, a)
        if (!this.stored.has(a.state)) this.fail(`restore reads state ${a.state}, which is not stored`, a)
        if (this.live.has(a.state)) this.fail(`state ${a.state} is already live`, a)
        this.live.add(a.state)
        this.cost.restores++
        break
      }
      case 'free': {
        this.checkIndex(a.state, a)
        const pool = a.from === 'live' ? this.live : this.stored
        if (!pool.has(a.state))
          this.fail(`free of state ${a.state}, which is not ${a.from === 'live' ? 'live' : 'stored'}`, a)
        pool.delete(a.state)
        this.frees++
        break
      }
      case 'adjoint': {
        this.checkStep(a.step, a)
        if (this.nextAdjoint === undefined) {
          const top = this.steps ?? this.highest
          if (this.steps !== undefined && this.highest < this.steps) {
            this.fail(`the adjoint sweep starts before the output state ${this.steps} was computed`, a)
          }
          this.nextAdjoint = top
        }
        if (a.step !== this.nextAdjoint) {
          this.fail(`adjoint sweep out of order: expected step ${this.nextAdjoint}, got ${a.step}`, a)
        }
        if (!this.live.has(a.step - 1)) this.fail(`adjoint reads state ${a.step - 1}, which is not live`, a)
        if (a.uncomputes) {
          if (!this.live.has(a.step)) this.fail(`uncomputing adjoint clears state ${a.step}, which is not live`, a)
          this.live.delete(a.step)
        }
        this.nextAdjoint = a.step - 1
        this.cost.adjoint++
        break
      }
      default: {
        const unknown: never = a
        this.fail(`unknown action ${JSON.stringify(unknown)}`, a)
      }
    }
    const held = this.live.size + this.stored.size
    if (held > this.cost.peakStates) this.cost.peakStates = held
    this.index++
  }

  /**
   * End-of-schedule checks: an adjoint sweep, once started, must have reached step 1
   * (every step exactly once, in reverse order).
   */
  finish(): void {
    if (this.nextAdjoint !== undefined && this.nextAdjoint !== 0) {
      throw new ScheduleError(`adjoint sweep incomplete: step ${this.nextAdjoint} and below never reversed`, -1)
    }
  }

  private fail(message: string, a: Action | undefined): never {
    throw new ScheduleError(message, this.index, a)
  }

  private checkStep(step: number, a: Action): void {
    if (!Number.isInteger(step) || step < 1 || (this.steps !== undefined && step > this.steps)) {
      this.fail(`step ${step} out of range 1…${this.steps ?? '∞'}`, a)
    }
  }

  private checkIndex(state: number, a?: Action): void {
    if (!Number.isInteger(state) || state < 0 || (this.steps !== undefined && state > this.steps)) {
      this.fail(`state ${state} out of range 0…${this.steps ?? '∞'}`, a)
    }
  }
}

/** What {@link checkSchedule} expects of a schedule beyond the memory model. */
export interface CheckOptions {
  /** Chain length (default: `schedule.steps` when it is a {@link Schedule}). */
  steps?: number
  /** Live states before the first action (default: `schedule.initial`, else `[0]`). */
  initial?: Iterable<number>
  /** Forbid `store`/`restore`/`free`. */
  reversible?: boolean
  /** Require a complete adjoint sweep T, T−1, …, 1 (each step exactly once). */
  gradient?: boolean
  /** Require exactly these states live at the end, and no snapshots left. */
  final?: Iterable<number>
}

/** The result of a successful {@link checkSchedule}. */
export interface ScheduleReport {
  /** Counts and peak memory. */
  cost: ScheduleCost
  /** Number of actions. */
  actions: number
  /** `free` actions. */
  frees: number
  /** Live states at the end, ascending. */
  live: number[]
  /** Snapshots at the end, ascending. */
  stored: number[]
}

/**
 * Validate a schedule by simulating it: every forward/uncompute/adjoint reads a live state,
 * every restore reads a stored one, nothing is created twice, and (with `gradient`) the
 * adjoint sweep covers every step exactly once in reverse order. Throws {@link ScheduleError}.
 */
export function checkSchedule(schedule: Iterable<Action>, options: CheckOptions = {}): ScheduleReport {
  const steps = options.steps ?? (isSchedule(schedule) ? schedule.steps : undefined)
  const initial = options.initial ?? (isSchedule(schedule) ? schedule.initial : [0])
  const sim = new ScheduleSimulator({ steps, initial, reversible: options.reversible ?? false })
  for (const a of schedule) sim.apply(a)
  sim.finish()
  if (options.gradient) {
    const expected = steps ?? sim.highest
    if (sim.cost.adjoint !== expected) {
      throw new ScheduleError(`expected ${expected} adjoint steps, got ${sim.cost.adjoint}`, -1)
    }
  }
  const live = [...sim.live].sort((x, y) => x - y)
  const stored = [...sim.stored].sort((x, y) => x - y)
  if (options.final !== undefined) {
    const want = [...options.final].sort((x, y) => x - y)
    if (want.join() !== live.join() || stored.length > 0) {
      throw new ScheduleError(
        `expected live {${want.join(', ')}} and no snapshots, found live {${live.join(', ')}}, stored {${stored.join(', ')}}`,
        -1,
      )
    }
  }
  return { cost: { ...sim.cost }, actions: sim.index, frees: sim.frees, live, stored }
}
