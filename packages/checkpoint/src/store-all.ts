/**
 * The store-all gradient without the schedule interpreter: one forward sweep that keeps every
 * state s₀ … s_T in one contiguous buffer, then one adjoint sweep backwards. The schedule is
 * fixed (`storeAllSchedule`), so there is nothing to check per action and nothing to look up:
 * the interpreter's per-action work (a generator, the simulator's sets, the state tables) costs
 * as much as a cheap step itself. Each adjoint also sees the step's output s_i, still stored, so
 * a step whose vector–Jacobian product needs its output gets it without recomputing it.
 */
import type { GradientCostLog } from './gradient.js'
import type { ArrayStep } from './gradient.js'

/**
 * The state buffer of the last run, kept weakly for the next one: a long chain's states are
 * megabytes, and fresh memory costs a page fault per 4 KiB on first touch — more than the
 * forward steps that fill it. Taken (set to undefined) while a run uses it, so that a step that
 * runs a chain itself gets a buffer of its own.
 */
let retained: WeakRef<ArrayBuffer> | undefined

function takeBuffer(bytes: number): { buffer: ArrayBuffer; zero: boolean } {
  const kept = retained?.deref()
  retained = undefined
  if (kept && kept.byteLength >= bytes) return { buffer: kept, zero: false }
  return { buffer: new ArrayBuffer(bytes), zero: true }
}

/**
 * ∂L/∂s₀ of the chain s_T = F_T(… F_1(s₀)) given ∂L/∂s_T (`seed`), keeping all T + 1 states:
 * T forward steps, T adjoints, no recomputation. The adjoint of step i gets s_{i−1} and s_i;
 * it runs `step.vjp` when that does not recompute s_i (`vjpRecomputes` unset), else
 * `step.vjpUncompute` on the stored s_i (which it may clear: s_i is not needed again), else
 * `step.vjp` (counted in `adjointForward`). The same vector–Jacobian products at the same
 * states as the interpreted schedule, so the gradients agree to the last bit.
 */
export function storeAllGradient(
  step: ArrayStep,
  s0: Float64Array,
  T: number,
  seed: Float64Array,
): { final: Float64Array; gradient: Float64Array; cost: GradientCostLog } {
  const start = performance.now()
  const n = s0.length
  const { buffer, zero } = takeBuffer(8 * n * (T + 1))
  try {
    const states = new Array<Float64Array>(T + 1)
    for (let i = 0; i <= T; i++) states[i] = new Float64Array(buffer, 8 * n * i, n)
    states[0]!.set(s0)
    for (let i = 1; i <= T; i++) {
      const dst = states[i]!
      if (!zero) dst.fill(0)
      step.forward(dst, states[i - 1]!, i)
    }
    const final = states[T]!.slice()
    let bar = seed.slice()
    let spare = new Float64Array(n)
    let adjointForward = 0
    const uncomputes = step.vjpRecomputes === true && step.vjpUncompute !== undefined
    for (let i = T; i >= 1; i--) {
      if (uncomputes) step.vjpUncompute!(spare, states[i - 1]!, bar, states[i]!, i)
      else {
        if (step.vjpRecomputes) adjointForward++
        step.vjp(spare, states[i - 1]!, bar, i)
      }
      bar.fill(0)
      const t = bar
      bar = spare
      spare = t
    }
    return {
      final,
      gradient: bar,
      cost: {
        forward: T,
        uncompute: 0,
        adjoint: T,
        stores: 0,
        restores: 0,
        peakStates: T + 1,
        schedule: 'store-all',
        wallTimeMs: performance.now() - start,
        adjointForward,
      },
    }
  } finally {
    retained = new WeakRef(buffer)
  }
}
