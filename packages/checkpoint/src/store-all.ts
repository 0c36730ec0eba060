/**
 * The store-all gradient without the schedule interpreter: one forward sweep that keeps every
 * state s₀ … s_T in one contiguous buffer, then one adjoint sweep backwards. The schedule is
 * fixed (`storeAllSchedule`), so there is nothing to check per action and nothing to look up:
 * the interpreter's per-action work (a generator, the simulator's sets, the state tables) costs
 * as much as a cheap step itself. Each adjoint also sees the step's output s_i, still stored, so
 * a step whose vector–Jacobian product needs its output gets it without recomputing it.
 */
import type { ArrayStep, GradientCostLog, StateMemory } from './gradient.js'

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
 * The states s₀ … s_T and the two gradient vectors as views of one block: a host buffer (reused
 * through `takeBuffer`), or a block of the step's backend memory (`memory`), so that no step call
 * copies them. Such a memory may grow during a call, which detaches every earlier view of it:
 * `current()` makes the views anew when that happened (the block's contents stay where they were).
 */
interface StateBlock {
  states: Float64Array[]
  /** The gradient of the current state (seeded with ∂L/∂s_T). */
  bar: Float64Array
  /** The gradient of the previous state, accumulated by the next adjoint (zero). */
  spare: Float64Array
  /** Whether the states are zero (fresh memory) and need no clearing before a forward step. */
  zero: boolean
  /** Swaps `bar` and `spare`. */
  swap(): void
  /** Re-makes the views if the block's memory grew since they were made. */
  current(): void
  /** Gives the block back (the host buffer for the next run; the backend block for reuse). */
  done(): void
}

function stateBlock(n: number, T: number, memory: StateMemory | undefined): StateBlock {
  let resident: ReturnType<StateMemory['allocate']> | undefined
  // (not while a call of the memory is under way, when it refuses to allocate: a chain run from
  // a host function of its step keeps its states on the host)
  if (memory && n > 0 && !memory.busy?.()) {
    try {
      resident = memory.allocate('f64', n * (T + 3))
    } catch (e) {
      // too large for the backend's memory (2 GiB for wasm): keep the states on the host
      if (!(e instanceof RangeError)) throw e
    }
  }
  const states = new Array<Float64Array>(T + 1)
  if (!resident) {
    const { buffer, zero } = takeBuffer(8 * n * (T + 1))
    for (let i = 0; i <= T; i++) states[i] = new Float64Array(buffer, 8 * n * i, n)
    const block: StateBlock = {
      states,
      bar: new Float64Array(n),
      spare: new Float64Array(n),
      zero,
      swap() {
        const t = block.bar
        block.bar = block.spare
        block.spare = t
      },
      current() {},
      done() {
        retained = new WeakRef(buffer)
      },
    }
    return block
  }
  const block = resident
  // which of the two gradient vectors (after the states) is `bar` now: they swap every step
  let swapped = false
  const views = (): [Float64Array, Float64Array] => {
    const { buffer, byteOffset } = block.array
    for (let i = 0; i <= T; i++) states[i] = new Float64Array(buffer, byteOffset + 8 * n * i, n)
    const a = new Float64Array(buffer, byteOffset + 8 * n * (T + 1), n)
    const b = new Float64Array(buffer, byteOffset + 8 * n * (T + 2), n)
    return swapped ? [b, a] : [a, b]
  }
  const [bar, spare] = views()
  const out: StateBlock = {
    states,
    bar,
    spare,
    zero: true,
    swap() {
      swapped = !swapped
      const t = out.bar
      out.bar = out.spare
      out.spare = t
    },
    current() {
      // a grown memory detaches the old views, whose length then reads 0
      if (states[0]!.length !== 0) return
      ;[out.bar, out.spare] = views()
    },
    done() {
      block.release()
    },
  }
  return out
}

/**
 * ∂L/∂s₀ of the chain s_T = F_T(… F_1(s₀)) given ∂L/∂s_T (`seed`), keeping all T + 1 states:
 * T forward steps, T adjoints, no recomputation. The adjoint of step i gets s_{i−1} and s_i;
 * it runs `step.vjp` when that does not recompute s_i (`vjpRecomputes` unset), else
 * `step.vjpUncompute` on the stored s_i (which it may clear: s_i is not needed again), else
 * `step.vjp` (counted in `adjointForward`). The same vector–Jacobian products at the same
 * states as the interpreted schedule, so the gradients agree to the last bit. With `memory` (the
 * step's backend memory, see `ArrayStep.memory`) the states and gradients live there.
 */
export function storeAllGradient(
  step: ArrayStep,
  s0: Float64Array,
  T: number,
  seed: Float64Array,
  memory?: StateMemory,
): { final: Float64Array; gradient: Float64Array; cost: GradientCostLog } {
  const start = performance.now()
  const n = s0.length
  const block = stateBlock(n, T, memory)
  try {
    const { states } = block
    states[0]!.set(s0)
    for (let i = 1; i <= T; i++) {
      const dst = states[i]!
      if (!block.zero) dst.fill(0)
      step.forward(dst, states[i - 1]!, i)
      block.current()
    }
    const final = states[T]!.slice()
    block.bar.set(seed)
    block.spare.fill(0)
    let adjointForward = 0
    const uncomputes = step.vjpRecomputes === true && step.vjpUncompute !== undefined
    for (let i = T; i >= 1; i--) {
      if (uncomputes) step.vjpUncompute!(block.spare, states[i - 1]!, block.bar, states[i]!, i)
      else {
        if (step.vjpRecomputes) adjointForward++
        step.vjp(block.spare, states[i - 1]!, block.bar, i)
      }
      block.current()
      block.bar.fill(0)
      block.swap()
    }
    return {
      final,
      gradient: block.bar.slice(),
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
    block.done()
  }
}
