import { isSchedule, type Action, type RestoreAction, type Schedule, type StoreAction } from './action.js'
import { ScheduleSimulator } from './check.js'
import type { CostLog } from './cost.js'

/**
 * A chain s_i = F_i(s_{i−1}), i = 1 … T, over user state `S` (gradient type `G`), as the
 * callbacks a driver needs. Every step is out of place and accumulating, like a Tenet
 * reversible function `step(dst, src)` that does `dst += F(src)`:
 * `forward` receives a zero `dst`; `uncompute` is its inverse `dst −= F(src)`; `adjoint`
 * accumulates `srcBar += (∂F/∂src)ᵀ dstBar`.
 * Which callbacks are needed depends on the actions the schedule uses.
 */
export interface Chain<S, G = S> {
  /** A new state buffer, all zero. */
  allocState(): S
  /** `dst += F_step(src)`; `dst` is zero on entry, so afterwards dst = s_step. */
  forward(step: number, dst: S, src: S): void
  /** `dst −= F_step(src)`, leaving `dst` zero (needed by `uncompute` actions). */
  uncompute?(step: number, dst: S, src: S): void
  /** `dst := src` (needed by `store` and `restore`). */
  copyState?(dst: S, src: S): void
  /** Zero a buffer so the driver can reuse it after `free`; without it freed buffers are dropped. */
  clearState?(state: S): void
  /** Called when the driver lets go of a buffer it allocated. */
  freeState?(state: S): void
  /** A new gradient buffer, all zero (needed by `adjoint`). */
  allocGradient?(): G
  /** Zero a gradient buffer (needed by `adjoint`). */
  clearGradient?(g: G): void
  /**
   * `srcBar += (∂F_step/∂src)ᵀ dstBar` at `src` = s_{step−1} (needed by `adjoint`).
   * `dst` is s_step when it is live (always for uncomputing adjoints), else `undefined`.
   * If {@link Chain.adjointUncomputes} is set, an uncomputing adjoint must also clear `dst`
   * (`dst −= F(src)`), as the generated adjoint of a reversible function does.
   */
  adjoint?(step: number, src: S, dstBar: G, srcBar: G, dst: S | undefined): void
  /** The `adjoint` callback also uncomputes `dst` when asked to (see above). */
  readonly adjointUncomputes?: boolean
}

/** Options of {@link runSchedule}. */
export interface RunOptions<S, G> {
  /** Chain length T (default: `schedule.steps`). */
  steps?: number
  /**
   * Starting states: s₀, or a map index → state for every state the schedule expects live
   * (e.g. `{0 → s₀, T → s_T}` to run an inverse schedule). The driver never clears or reuses
   * these buffers, except that uncompute zeroes a given state as the schedule says.
   */
  initial: S | ReadonlyMap<number, S>
  /**
   * Called once, when s_T is first computed (or at the first adjoint if s_T was given live),
   * with s_T and a zero gradient buffer to fill with ∂L/∂s_T. Required for adjoints.
   */
  seed?: (output: S, outputBar: G) => void
  /** Refuse `store`/`restore`/`free` (a reversible run never discards information). */
  reversible?: boolean
}

/** The result of {@link runSchedule}. */
export interface RunResult<S, G> {
  /** States live at the end, by index. */
  states: Map<number, S>
  /** ∂L/∂s₀ when the schedule contained the adjoint sweep. */
  gradient: G | undefined
  /** Counts as executed, peak memory and wall time. */
  cost: CostLog
}

/**
 * States by index 0…T in an array (the driver's live states and snapshots): a store-all run keeps
 * T + 1 of them and looks one up several times per step, where a `Map` hashes every time.
 */
class StateTable<S> {
  private readonly at: Array<S | undefined>
  constructor(size: number, entries: Iterable<[number, S]> = []) {
    this.at = new Array<S | undefined>(size)
    for (const [k, v] of entries) this.at[k] = v
  }
  get(k: number): S | undefined {
    return this.at[k]
  }
  set(k: number, v: S): void {
    this.at[k] = v
  }
  delete(k: number): void {
    this.at[k] = undefined
  }
  values(): S[] {
    return this.at.filter((v): v is S => v !== undefined)
  }
  toMap(): Map<number, S> {
    const m = new Map<number, S>()
    this.at.forEach((v, k) => {
      if (v !== undefined) m.set(k, v)
    })
    return m
  }
}

function need<T>(fn: T | undefined, what: string, action: Action): T {
  if (fn === undefined) throw new TypeError(`the chain has no ${what} callback, needed for ${action.kind}`)
  return fn
}

/**
 * Interpret a schedule over user state. Each action is first checked by a
 * {@link ScheduleSimulator} (so an invalid schedule throws {@link ScheduleError} before any
 * callback sees a missing state), then performed. Zeroed buffers are pooled and reused.
 */
export function runSchedule<S, G = S>(
  chain: Chain<S, G>,
  schedule: Iterable<Action>,
  options: RunOptions<S, G>,
): RunResult<S, G> {
  const start = performance.now()
  const meta = isSchedule(schedule) ? schedule : undefined
  const T = options.steps ?? meta?.steps
  if (T === undefined) throw new TypeError('chain length unknown: pass `steps` or a Schedule')
  const initial: Map<number, S> =
    options.initial instanceof Map ? new Map(options.initial) : new Map([[0, options.initial as S]])
  const sim = new ScheduleSimulator({ steps: T, initial: initial.keys(), reversible: options.reversible ?? false })
  // (the simulator checks every index against 0…T before the driver uses it)
  const live = new StateTable<S>(T + 1, initial)
  const snapshots = new StateTable<S>(T + 1)
  const userOwned = new Set<S>(initial.values())
  const pool: S[] = []
  // freed states not cleared yet: cleared when taken again (store-all never takes them again)
  const dirty: S[] = []
  let bar: G | undefined
  let spare: G | undefined
  let seeded = false

  // optional callbacks, read once; `need` checks one is there when an action uses it
  const { uncompute, copyState, allocGradient, clearGradient, adjoint, adjointUncomputes } = chain

  const take = (): S => {
    const s = pool.pop()
    if (s !== undefined) return s
    const d = dirty.pop()
    if (d === undefined) return chain.allocState()
    chain.clearState!(d)
    return d
  }
  const release = (state: S, zero: boolean): void => {
    if (userOwned.has(state)) return
    if (zero) pool.push(state)
    else if (chain.clearState) dirty.push(state)
    else chain.freeState?.(state)
  }
  const seedWith = (output: S, action: Action): void => {
    bar = need(allocGradient, 'allocGradient', action)()
    need(options.seed, 'seed', action)(output, bar)
    seeded = true
  }
  /** `store` (live → snapshot) and `restore` (snapshot → live): copy state `a.state` into a fresh buffer. */
  const copyInto = (to: StateTable<S>, from: StateTable<S>, a: StoreAction | RestoreAction): void => {
    const copy = need(copyState, 'copyState', a)
    const state = take()
    copy(state, from.get(a.state)!)
    to.set(a.state, state)
  }

  for (const a of schedule) {
    sim.apply(a)
    switch (a.kind) {
      case 'forward': {
        const dst = take()
        chain.forward(a.step, dst, live.get(a.step - 1)!)
        live.set(a.step, dst)
        if (a.step === T && !seeded && options.seed) seedWith(dst, a)
        break
      }
      case 'uncompute': {
        const dst = live.get(a.step)!
        need(uncompute, 'uncompute', a)(a.step, dst, live.get(a.step - 1)!)
        live.delete(a.step)
        release(dst, true)
        break
      }
      case 'store':
        copyInto(snapshots, live, a)
        break
      case 'restore':
        copyInto(live, snapshots, a)
        break
      case 'free': {
        const holder = a.from === 'live' ? live : snapshots
        const state = holder.get(a.state)!
        holder.delete(a.state)
        release(state, false)
        break
      }
      case 'adjoint': {
        const adjointFn = need(adjoint, 'adjoint', a)
        const clear = need(clearGradient, 'clearGradient', a)
        if (!seeded) {
          const output = live.get(T)
          if (output === undefined) throw new TypeError('adjoint sweep started but s_T was never available to seed')
          seedWith(output, a)
        }
        spare ??= need(allocGradient, 'allocGradient', a)()
        const src = live.get(a.step - 1)!
        const dst = live.get(a.step)
        // an uncomputing adjoint gets dst only when this action uncomputes it
        adjointFn(a.step, src, bar!, spare, adjointUncomputes && !a.uncomputes ? undefined : dst)
        if (a.uncomputes) {
          if (!adjointUncomputes) need(uncompute, 'uncompute', a)(a.step, dst!, src)
          live.delete(a.step)
          release(dst!, true)
        }
        clear(bar!)
        const t = bar
        bar = spare
        spare = t
        break
      }
    }
  }
  sim.finish()
  for (const s of snapshots.values()) release(s, false)
  if (chain.freeState) for (const s of [...pool, ...dirty]) chain.freeState(s)
  return {
    states: live.toMap(),
    gradient: sim.cost.adjoint > 0 ? bar : undefined,
    cost: { ...sim.cost, schedule: meta?.name ?? 'schedule', wallTimeMs: performance.now() - start },
  }
}

/**
 * The reversible driver: run a reversible schedule (Bennett, Knill, or an inverse of one)
 * forwards over user state, with `forward`/`uncompute` callbacks only. Refuses any action
 * that discards information. Returns the live states at the end (for Bennett: s₀ and s_T)
 * and the cost log. Run {@link invertSchedule} of the same schedule, starting from those
 * states, to go back.
 */
export function runReversible<S, G = S>(
  chain: Chain<S, G>,
  schedule: Schedule,
  initial: S | ReadonlyMap<number, S>,
): RunResult<S, G> {
  return runSchedule(chain, schedule, { initial, reversible: true })
}

/**
 * Reversible gradient, no tape: run a reversible gradient schedule
 * ({@link bennettGradientSchedule}, {@link knillGradientSchedule} or
 * {@link reversibleGradientSchedule}) from s₀. `seed` sees s_T and fills ∂L/∂s_T; the result's
 * `gradient` is ∂L/∂s₀. Needs `uncompute` (or `adjointUncomputes`) and the gradient callbacks.
 */
export function reversibleGradient<S, G = S>(
  chain: Chain<S, G>,
  schedule: Schedule,
  s0: S,
  seed: (output: S, outputBar: G) => void,
): RunResult<S, G> {
  return runSchedule(chain, schedule, { initial: s0, seed, reversible: true })
}

/**
 * The irreversible (checkpointing) driver: run a gradient schedule that stores, restores and
 * frees states ({@link binomialSchedule}, {@link storeAllSchedule},
 * {@link recomputeAllSchedule}) from s₀ with a step function and its vector–Jacobian product.
 * `seed` sees s_T and fills ∂L/∂s_T; the result's `gradient` is ∂L/∂s₀.
 */
export function checkpointedRun<S, G = S>(
  chain: Chain<S, G>,
  schedule: Schedule,
  s0: S,
  seed: (output: S, outputBar: G) => void,
): RunResult<S, G> {
  return runSchedule(chain, schedule, { initial: s0, seed })
}
