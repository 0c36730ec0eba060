/**
 * A Tenet reversible function as a chain step: `step(dst, src, ...args)` doing `dst += F(src)`
 * with `dst` zero on entry. Its compiled inverse uncomputes (`dst -= F(src)`), and its
 * generated adjoint (from `@tenet/ad`) does the vector–Jacobian product *and* the uncompute
 * in one run, so reversible schedules need no tape and no extra forward step (store-all hands
 * it the stored s_i too). Under a schedule that frees s_i before its adjoint (binomial,
 * recompute-all), `vjp` recomputes s_i first: one forward step per adjoint, counted in
 * `checkpointedGradient`'s `adjointForward` — unless the step was compiled without run-time
 * checks and its adjoint reduced to the gradients (`compileGradientAdjoint`) reads nothing of
 * s_i: then `vjp` runs that reduced adjoint alone, on a scratch s_i it never looks at (the
 * diffusion step's adjoint, for one: linear in `dst`). That reduced adjoint computes srcBar
 * only: it may leave dstBar changed, and accumulates nothing into the extra arguments'
 * gradients, which no driver reads. On a backend with memory of its own (wasm) the step carries
 * it (`memory`), so that store-all keeps its states there (see `CheckpointedGradientOptions.memory`).
 */
import { compileAdjoint, compileGradientAdjoint } from '@tenet/ad'
import { overlapGuard, TENET_FUNCTION, type TenetFunction, type TenetFunctionInfo } from '@tenet/reversible'
import type { ArrayStep } from './gradient.js'

export { isTenetFunction } from '@tenet/reversible'

/**
 * Wraps a Tenet function `step(dst: f64[], src: f64[], ...args)` as an {@link ArrayStep}.
 * `args` are passed after `dst` and `src` on every step (the same for all steps).
 */
export function tenetStep(step: TenetFunction, args: readonly unknown[] = []): ArrayStep {
  const params = step.ir.params
  if (params.length !== 2 + args.length) {
    throw new TypeError(
      `the step \`${step.name}\` has ${params.length} parameters; expected dst, src and ${args.length} extra argument${args.length === 1 ? '' : 's'}`,
    )
  }
  for (const k of [0, 1]) {
    const t = params[k]!.type
    if (t.kind !== 'array' || t.elem !== 'f64')
      throw new TypeError(
        `parameter ${k + 1} (\`${params[k]!.name}\`) of the step must be f64[] (the ${k === 0 ? 'destination' : 'source'} state)`,
      )
  }
  // the aliasing rule of the language (see \`overlapGuard\` of \`@tenet/reversible\`) on the extra
  // arguments, once: they are passed to every step as they are (the states are the driver's own)
  const info = (step as unknown as Record<symbol, TenetFunctionInfo>)[TENET_FUNCTION]!
  overlapGuard(
    `${info.name}${info.inverse ? '.inverse' : ''}`,
    params,
    info.program.writes.get(info.name) ?? [],
  )?.check([new Float64Array(0), new Float64Array(0), ...args])
  const adj = compileAdjoint(step)
  const { forward, inverse } = adj
  const core = adj.adjoint.core
  // the gradient-only adjoint, when it does not read dst: no recompute before it. The drivers
  // read back only srcBar (they clear dstBar, and ignore the extra arguments' gradients).
  const reduced = compileGradientAdjoint(step, [1])
  const lean = reduced && !reduced.reads[0] ? reduced.adjoint.core : null
  // adjoint arguments: the values, one gradient per float parameter (at its slot's index), the
  // sink g$sink last. The extra arguments' gradients are zero buffers, never read.
  const call: unknown[] = [undefined, undefined, ...args]
  adj.slots.forEach((slot, i) => {
    if (!slot || i < 2) return
    const n = slot.kind === 'scalar' ? 0 : (args[i - 2] as ArrayLike<unknown>).length
    call[slot.index] =
      slot.kind === 'scalar'
        ? 0
        : slot.kind === 'stack'
          ? new Array<number>(n).fill(0)
          : slot.type.kind === 'array' && slot.type.elem === 'f32'
            ? new Float32Array(n)
            : new Float64Array(n)
  })
  call[adj.adjoint.ir.params.length - 1] = 0 // g$sink
  const dstBarAt = adj.slots[0]!.index
  const srcBarAt = adj.slots[1]!.index
  let scratch: Float64Array | undefined
  /**
   * Whether a \`vjp\` is under way: one called from a host function of the step while another
   * runs (the host function runs a chain with this step) takes a buffer of its own, as \`scratch\`
   * holds the outer one's recomputed s_i, which its adjoint reads.
   */
  let busy = false
  const runAdjoint = (
    dst: Float64Array,
    src: Float64Array,
    dstBar: Float64Array,
    srcBar: Float64Array,
    program = core,
  ) => {
    call[0] = dst
    call[1] = src
    call[dstBarAt] = dstBar
    call[srcBarAt] = srcBar
    program(...call)
  }
  // a backend with memory of its own (wasm): the forward and the adjoints share it (one memory
  // per backend), so arrays allocated there pass to every call without copies
  const memory = forward.resident
  return {
    ...(memory ? { memory } : {}),
    forward: (dst, src) => forward(dst, src, ...args),
    inverse: (dst, src) => inverse(dst, src, ...args),
    vjpRecomputes: lean === null,
    vjp(srcBar, src, dstBar) {
      let buf: Float64Array
      if (busy) buf = new Float64Array(src.length)
      else if (!scratch || scratch.length !== src.length) buf = scratch = new Float64Array(src.length)
      else {
        buf = scratch
        // (the reduced adjoint reads nothing of dst, its length at most: any buffer will do)
        if (!lean) buf.fill(0)
      }
      const outer = !busy
      busy = true
      try {
        if (lean) runAdjoint(buf, src, dstBar, srcBar, lean)
        else {
          // recompute dst = F(src) into a scratch buffer; the adjoint uncomputes it again
          forward(buf, src, ...args)
          runAdjoint(buf, src, dstBar, srcBar)
        }
      } finally {
        if (outer) busy = false
      }
    },
    vjpUncompute(srcBar, src, dstBar, dst) {
      runAdjoint(dst, src, dstBar, srcBar)
    },
  }
}
