import { assertPositiveInt, type Schedule } from './action.js'
import { bennettGradientSchedule, type BennettOptions } from './bennett.js'
import { binomialSchedule } from './binomial.js'
import type { CostLog } from './cost.js'
import { runSchedule, type Chain } from './drivers.js'
import { knillGradientSchedule } from './knill.js'
import { recomputeAllSchedule, storeAllSchedule } from './simple.js'
import { storeAllGradient } from './store-all.js'
import { isTenetFunction, tenetStep } from './tenet-step.js'
import type { TenetFunction } from '@tenet/reversible'

/**
 * One step s_i = F_i(s_{i−1}) of a chain over `Float64Array` states, i = 1 … T.
 * The shape of a Tenet reversible function `step(dst, src)` doing `dst += F(src)`.
 */
export interface ArrayStep {
  /** `dst += F_i(src)`; `dst` is zero on entry. */
  forward(dst: Float64Array, src: Float64Array, i: number): void
  /** `dst −= F_i(src)`, the inverse of `forward` (needed by the reversible schedules). */
  inverse?(dst: Float64Array, src: Float64Array, i: number): void
  /** `srcBar += (∂F_i/∂src)ᵀ dstBar`, evaluated at `src`. It may change `dstBar` (the drivers clear it after). */
  vjp(srcBar: Float64Array, src: Float64Array, dstBar: Float64Array, i: number): void
  /**
   * Set when `vjp` runs the forward step itself once (a Tenet step's adjoint needs s_i and
   * recomputes it from s_{i−1}); {@link checkpointedGradient} counts those runs in its cost log.
   */
  readonly vjpRecomputes?: boolean
  /**
   * Optional: `vjp` and the uncompute `dst −= F_i(src)` in one call, as the generated adjoint of
   * a reversible function does. Used by the reversible schedules when present.
   */
  vjpUncompute?(srcBar: Float64Array, src: Float64Array, dstBar: Float64Array, dst: Float64Array, i: number): void
  /**
   * Optional: the memory of the backend the step runs in, when it has one of its own (a Tenet
   * step compiled on the wasm backend: `CompiledFunction.resident`). A step called on arrays
   * that live there works on them in place; on others it copies them in and out on every call.
   * See {@link CheckpointedGradientOptions.memory}.
   */
  readonly memory?: StateMemory
}

/**
 * Memory of a step's backend in which states can live (the shape of `ResidentMemory` of
 * `@tenet/ir`): `allocate('f64', n)` returns a zeroed block whose `array` views it (a view that
 * the backend may detach when its memory grows during a call: read `array` again after one).
 */
export interface StateMemory {
  allocate(elem: 'f64', n: number): { readonly array: ArrayBufferView; release(): void }
  /** Whether \`allocate\` would refuse now (a call of the backend is under way: see \`ResidentMemory.busy\`). */
  busy?(): boolean
}

/** Which schedule {@link checkpointedGradient} uses. */
export type GradientScheduleName = 'bennett' | 'knill' | 'binomial' | 'store-all' | 'recompute-all'

/** Options of {@link checkpointedGradient}. */
export interface CheckpointedGradientOptions {
  /** The schedule. */
  schedule: GradientScheduleName
  /** Bennett's k (default 2). */
  k?: number
  /**
   * Bennett: uncompute the top-level boundary states after the forward run. Default `false`
   * here (unlike {@link BennettOptions.uncomputeTop}, which defaults to `true`): keeping them
   * live saves the adjoint sweep from recomputing them.
   */
  uncomputeTop?: boolean
  /**
   * Memory budget: Knill's pebbles (default: the fewest that reach T, ⌈log₂T⌉ + 1) or the
   * binomial schedule's snapshots (default ⌈log₂T⌉, at least 1). Ignored by the others.
   */
  budget?: number
  /** ∂L/∂s_T, the gradient of the loss with respect to the final state. */
  seed: Float64Array
  /** For a Tenet step `step(dst, src, ...args)`: the extra arguments passed on every step. */
  args?: readonly unknown[]
  /**
   * Where store-all keeps its states and the two gradient vectors: `'backend'` (the default) in
   * the step's backend memory when it has one (`ArrayStep.memory`: a Tenet step on the wasm
   * backend), so that no step call copies them in or out; `'host'` in JS typed arrays. Falls
   * back to the host when the block does not fit there. The other schedules keep their states
   * on the host.
   */
  memory?: 'backend' | 'host'
}

/** The cost log of {@link checkpointedGradient}: the schedule's counts plus the steps run inside adjoints. */
export interface GradientCostLog extends CostLog {
  /**
   * Forward steps run inside the adjoint callbacks, outside the schedule: a step whose `vjp`
   * recomputes s_i (a Tenet step, when the schedule does not hand its adjoint a live s_i to
   * uncompute) runs one per adjoint. The forward work of the run is `forward + adjointForward`.
   */
  adjointForward: number
}

/** The result of {@link checkpointedGradient}. */
export interface CheckpointedGradientResult {
  /** s_T. */
  final: Float64Array
  /** ∂L/∂s₀ = J₁ᵀ J₂ᵀ … J_Tᵀ seed, with J_i the Jacobian of F_i at s_{i−1}. */
  gradient: Float64Array
  /** What the run cost (peak states counts working states and snapshots). */
  cost: GradientCostLog
}

function log2Ceil(T: number): number {
  return Math.max(0, Math.ceil(Math.log2(T)))
}

/** Build the gradient schedule {@link checkpointedGradient} would use. */
export function gradientSchedule(T: number, options: Omit<CheckpointedGradientOptions, 'seed'>): Schedule {
  switch (options.schedule) {
    case 'bennett':
      return bennettGradientSchedule({ steps: T, k: options.k ?? 2, uncomputeTop: options.uncomputeTop ?? false })
    case 'knill':
      return knillGradientSchedule({ steps: T, pebbles: options.budget ?? log2Ceil(T) + 1 })
    case 'binomial':
      return binomialSchedule({ steps: T, snapshots: options.budget ?? Math.max(1, log2Ceil(T)) })
    case 'store-all':
      return storeAllSchedule({ steps: T })
    case 'recompute-all':
      return recomputeAllSchedule({ steps: T })
    default: {
      const bad: never = options.schedule
      throw new RangeError(`unknown schedule ${String(bad)}`)
    }
  }
}

/**
 * Zeroed states of length `n`, cut from slabs of several states at once: a schedule that keeps
 * thousands of states (store-all) then allocates a few hundred buffers instead of one per step,
 * which cost more than a cheap step itself (allocation and garbage collection). The slabs hold
 * about 64 KiB each (one state at least); a state freed by the driver goes back to its pool.
 */
function slabAllocator(n: number): () => Float64Array {
  const per = Math.max(1, Math.floor(8192 / Math.max(1, n)))
  let slab = new ArrayBuffer(0)
  let next = per
  return () => {
    if (next === per) {
      slab = new ArrayBuffer(8 * per * n)
      next = 0
    }
    return new Float64Array(slab, 8 * n * next++, n)
  }
}

/**
 * Gradient of the chain s_T = F_T(… F_1(s₀)) in bounded memory: s_T and ∂L/∂s₀ given
 * ∂L/∂s_T (`seed`). `'bennett'` and `'knill'` reverse-compute (they need `step.inverse`,
 * and keep no snapshots); `'binomial'`, `'store-all'` and `'recompute-all'` checkpoint.
 * Every schedule runs the same vector–Jacobian products at the same states, so the gradients
 * agree to the last bit; the cost log shows the forward steps and memory each used.
 * `'store-all'` runs without the schedule interpreter (see `storeAllGradient`): its adjoints get
 * the stored outputs, so a Tenet step's adjoint never recomputes one.
 */
export function checkpointedGradient(
  stepOrTenet: ArrayStep | TenetFunction,
  s0: Float64Array,
  T: number,
  options: CheckpointedGradientOptions,
): CheckpointedGradientResult {
  assertPositiveInt(T, 'T')
  const step = isTenetFunction(stepOrTenet) ? tenetStep(stepOrTenet, options.args ?? []) : stepOrTenet
  const n = s0.length
  if (options.seed.length !== n) throw new RangeError(`seed has length ${options.seed.length}, state ${n}`)
  if (options.schedule === 'store-all')
    return storeAllGradient(step, s0, T, options.seed, options.memory === 'host' ? undefined : step.memory)
  const reversible = options.schedule === 'bennett' || options.schedule === 'knill'
  const inverse = step.inverse
  let adjointForward = 0
  const vjp = (i: number, src: Float64Array, dstBar: Float64Array, srcBar: Float64Array) => {
    if (step.vjpRecomputes) adjointForward++
    step.vjp(srcBar, src, dstBar, i)
  }
  if (reversible && !inverse) throw new TypeError(`the '${options.schedule}' schedule needs step.inverse`)
  const chain: Chain<Float64Array> = {
    allocState: slabAllocator(n),
    forward: (i, dst, src) => step.forward(dst, src, i),
    ...(inverse ? { uncompute: (i: number, dst: Float64Array, src: Float64Array) => inverse(dst, src, i) } : {}),
    copyState: (dst, src) => dst.set(src),
    clearState: (s) => s.fill(0),
    allocGradient: () => new Float64Array(n),
    clearGradient: (g) => g.fill(0),
    ...(reversible && step.vjpUncompute
      ? {
          adjointUncomputes: true,
          adjoint: (
            i: number,
            src: Float64Array,
            dstBar: Float64Array,
            srcBar: Float64Array,
            dst: Float64Array | undefined,
          ) => (dst ? step.vjpUncompute!(srcBar, src, dstBar, dst, i) : vjp(i, src, dstBar, srcBar)),
        }
      : { adjoint: vjp }),
  }
  const final = new Float64Array(n)
  const run = runSchedule(chain, gradientSchedule(T, options), {
    initial: s0,
    reversible,
    seed: (output, outputBar) => {
      final.set(output)
      outputBar.set(options.seed)
    },
  })
  return { final, gradient: run.gradient!, cost: { ...run.cost, adjointForward } }
}
