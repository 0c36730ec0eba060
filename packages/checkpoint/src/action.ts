/**
 * Schedules are data: a stream of {@link Action}s over the states s₀ … s_T of a chain
 * s_i = F_i(s_{i−1}). A driver interprets the stream; the schedule never touches user state.
 *
 * Memory model (checked by {@link ScheduleSimulator}): a state index is *live* when a
 * working buffer holds it, and *stored* when a snapshot buffer holds a copy of it.
 * The two pools are independent; `peakStates` counts both.
 */

/** Compute s_step = F_step(s_{step−1}) into a fresh zero buffer. Needs s_{step−1} live and s_step not live. */
export interface ForwardAction {
  readonly kind: 'forward'
  readonly step: number
}

/** Reversibly clear s_step (s_step −= F_step(s_{step−1})); its buffer leaves memory. Needs both live. */
export interface UncomputeAction {
  readonly kind: 'uncompute'
  readonly step: number
}

/** Copy the live state into a snapshot. Needs it live and not already stored. */
export interface StoreAction {
  readonly kind: 'store'
  readonly state: number
}

/** Copy a snapshot back into a fresh working buffer. Needs it stored and not live. */
export interface RestoreAction {
  readonly kind: 'restore'
  readonly state: number
}

/** Discard (irreversibly) a working buffer (`from: 'live'`) or a snapshot (`from: 'snapshot'`). */
export interface FreeAction {
  readonly kind: 'free'
  readonly state: number
  readonly from: 'live' | 'snapshot'
}

/**
 * Propagate the adjoint across step `step`: s̄_{step−1} = (∂F_step/∂s)ᵀ s̄_step, evaluated at
 * s_{step−1}, which must be live. Adjoints must come in the order T, T−1, …, 1.
 * With `uncomputes: true` (reversible schedules) the action also uncomputes s_step, which
 * must then be live and leaves memory: the adjoint of a reversible step runs it backwards.
 */
export interface AdjointAction {
  readonly kind: 'adjoint'
  readonly step: number
  readonly uncomputes: boolean
}

/** One instruction of a schedule; discriminated by `kind`. */
export type Action = ForwardAction | UncomputeAction | StoreAction | RestoreAction | FreeAction | AdjointAction

/**
 * A re-iterable action stream with the facts a driver or checker needs.
 * Every iteration yields the same actions (schedules are generated lazily).
 */
export interface Schedule extends Iterable<Action> {
  /** Human-readable name, e.g. `bennett(k=4)`. */
  readonly name: string
  /** Chain length T (states s₀ … s_T). */
  readonly steps: number
  /** State indices live before the first action (usually `[0]`, the input). */
  readonly initial: readonly number[]
}

/** True when `x` is a {@link Schedule} (it carries its chain length), not a bare action stream. */
export function isSchedule(x: Iterable<Action>): x is Schedule {
  return typeof (x as Partial<Schedule>).steps === 'number'
}

/** Build a {@link Schedule} from a generator function (called afresh on every iteration). */
export function makeSchedule(
  name: string,
  steps: number,
  generate: () => Iterator<Action>,
  initial: readonly number[] = [0],
): Schedule {
  return {
    name,
    steps,
    initial,
    [Symbol.iterator]: generate,
  }
}

/** Action constructors (plain objects; handy for hand-written schedules and tests). */
export const act = {
  /** See {@link ForwardAction}. */
  forward: (step: number): ForwardAction => ({ kind: 'forward', step }),
  /** See {@link UncomputeAction}. */
  uncompute: (step: number): UncomputeAction => ({ kind: 'uncompute', step }),
  /** See {@link StoreAction}. */
  store: (state: number): StoreAction => ({ kind: 'store', state }),
  /** See {@link RestoreAction}. */
  restore: (state: number): RestoreAction => ({ kind: 'restore', state }),
  /** Free a working buffer; see {@link FreeAction}. */
  free: (state: number): FreeAction => ({ kind: 'free', state, from: 'live' }),
  /** Free a snapshot; see {@link FreeAction}. */
  drop: (state: number): FreeAction => ({ kind: 'free', state, from: 'snapshot' }),
  /** See {@link AdjointAction}. */
  adjoint: (step: number, uncomputes = false): AdjointAction => ({ kind: 'adjoint', step, uncomputes }),
} as const

/** Validate a chain length / budget argument: a positive safe integer. */
export function assertPositiveInt(value: number, what: string): void {
  if (!Number.isSafeInteger(value) || value < 1) {
    throw new RangeError(`${what} must be a positive integer, got ${String(value)}`)
  }
}

/** One-line text form of an action, e.g. `forward 3`, `free snapshot 0`. */
export function formatAction(a: Action): string {
  switch (a.kind) {
    case 'forward':
    case 'uncompute':
      return `${a.kind} ${a.step}`
    case 'adjoint':
      return `adjoint ${a.step}${a.uncomputes ? ' (uncomputes)' : ''}`
    case 'store':
    case 'restore':
      return `${a.kind} ${a.state}`
    case 'free':
      return a.from === 'live' ? `free ${a.state}` : `free snapshot ${a.state}`
  }
}

/**
 * A recursive schedule generator: it yields actions, or a nested generator to run in place
 * (a "call"). {@link flatten} runs the recursion with an explicit stack, so each action
 * costs O(1) however deep the recursion goes (plain `yield*` costs O(depth) per action and
 * can overflow the call stack on long chains).
 */
export type Nested = Generator<Action | Nested, void, undefined>

/** Run a {@link Nested} generator, yielding its actions in order (see there). */
export function* flatten(root: Nested): Generator<Action, void, undefined> {
  const stack: Nested[] = [root]
  while (stack.length > 0) {
    const r = stack[stack.length - 1]!.next()
    if (r.done) {
      stack.pop()
      continue
    }
    const v = r.value
    if ('kind' in v) yield v
    else stack.push(v)
  }
}
