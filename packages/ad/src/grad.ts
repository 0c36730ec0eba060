/**
 * `grad`: the compiled gradient function of a Tenet function, reusable. The program it runs is
 * chosen by `planGradient` (plan.ts) and driven by a driver of `driver.ts`.
 */
import { TenetError } from '@tenet/ir'
import type { TenetFunction } from '@tenet/reversible'
import { compileAdjoint, compileTangent, hasForwardGradientShape, type CompiledAdjoint } from './compile.js'
import { optionsOf, positiveNumber } from './options.js'
import { argError, checkLoss, hostConversions, type Gradient, type LossOptions } from './arguments.js'
import { Sweep } from './sweep.js'
import { makeDriver, DRIVER, lastLoss, collected } from './driver.js'
import { planGradient, type GradientPlan } from './plan.js'

/** A reusable gradient function made by `grad`. */
export interface GradientFunction {
  /**
   * Runs `f` forwards on copies of `args` (arrays that `f` only reads are used as they are),
   * seeds the loss gradient with 1 and runs the adjoint (in forward mode, see `GradOptions.mode`:
   * one run of `f`'s tangent seeded along its input).
   * Returns one gradient per argument, fresh on every call: a later call never changes what an
   * earlier one returned (on the wasm backend the arrays are copies out of the module's memory).
   * This allocates the result; `run` is the allocation-free form for hot loops.
   */
  (...args: unknown[]): Gradient
  /**
   * The same sweep without building the result: scalar gradients go to `scalars[i]`, array
   * gradients to `buffers[i]`, the loss value to `lastLoss`. Allocates nothing in steady state.
   */
  readonly run: (...args: unknown[]) => void
  /** Scalar gradients of the last call, by argument index (0 for arguments without one). */
  readonly scalars: Float64Array
  /** Array gradients of the last call, by argument index (undefined for non-array and scratch arguments); reused. */
  readonly buffers: ReadonlyArray<Float64Array | Float32Array | undefined>
  /** The compiled adjoint (parameters: values…, gradients…, `g$sink`). */
  readonly adjoint: TenetFunction
  /**
   * The compiled program that a call runs, as `plan` chose it: the fused gradient program, the
   * tangent in forward mode, or the adjoint for the two sweeps (which run `f` first).
   * `generatedCode(g.program)` gives the JavaScript that the cpu backend generated for it, for
   * reading what a gradient costs. It is not meant to be called: its parameters are laid out
   * for the driver, not as `f`'s.
   */
  readonly program: TenetFunction
  /**
   * Which gradient program runs (forward tangent, one-pass, adjoint-only, routine-fused, map-forward or the two sweeps), why,
   * why each cheaper one did not apply, and what is checked after a sweep; `String(g.plan)` prints it.
   */
  readonly plan: GradientPlan
  /** The loss value of the last call (the loss argument after the forward run). */
  readonly lastLoss: number
  /**
   * The inverse of the whole gradient program (`f` then its adjoint): given the arguments and a
   * gradient as a call left them, runs the adjoint's inverse (the gradients go back to the seed
   * while the values are recomputed to f's outputs) and then `f`'s inverse (the values return to
   * the inputs). On copies; returns the arguments, the cleared gradient (1 for the loss, 0
   * elsewhere) and the sink.
   *
   * Ancilla caveat: the adjoint drops the gradient of each ancilla where the forward allocates
   * it (its value is a gradient with respect to a constant, moved into the sink without checks);
   * the inverse cannot restore that information, so the gradients are cleared exactly only for
   * programs whose dropped ancilla gradients are zero (pass the sink that the forward call
   * accumulated, `sink`, to undo its additions; the default is 0).
   */
  readonly inverse: (
    args: unknown[],
    gradient: Gradient,
    sink?: number,
  ) => { args: unknown[]; gradient: Gradient; sink: number }
  /**
   * On a backend with its own memory (wasm): gives back the memory that the work arrays and
   * gradients of the last calls hold there, for a gradient function no longer needed (a later
   * call allocates again). The buffers of earlier results are then no longer valid. Nothing to
   * do on the cpu backend.
   */
  readonly release: () => void
  /**
   * Releases the memory like \`release\`, for good: a later call throws a \`TenetError\` with code
   * \`ad/disposed\`. A gradient function that is dropped without either is freed when the garbage
   * collector finds it, its \`run\` and every gradient array it returned unreachable (a
   * \`FinalizationRegistry\`); \`dispose\` frees it at once.
   */
  readonly dispose: () => void
}

/** Options of `grad`. */
export interface GradOptions extends LossOptions {
  /**
   * Whether to use a fused gradient program when one applies (default true): the one-pass
   * program for a loss accumulated from values `f` never writes, the adjoint-only program (no
   * forward run) for a loss that `f` only accumulates when it writes no other argument, or the
   * program that skips the uncompute–recompute pair of a top-level routine (see `compileFused`),
   * and the two sweeps as one program where they can share values (see `compileTwoSweep`). With
   * false, every call runs `f` forwards and then its adjoint (the two sweeps of the paper, two
   * programs). The gradients agree up to the order in which floating-point sums are added.
   */
  fuse?: boolean
  /**
   * Which mode computes the gradient (default `'auto'`). `'reverse'`: `f` and its adjoint (or a
   * fused gradient program). `'forward'`: one tangent run of `f` seeded along its input; it applies
   * only to a function whose parameters are all scalars, with exactly one float scalar besides the
   * loss (f64 or f32), and which only accumulates into the loss (`loss += e`, `loss -= e`, e not
   * reading it) — a scalar function of one variable, such as the Bessel example; otherwise `grad`
   * throws. There a tangent run costs about one run of `f`, where reverse mode runs `f` and then
   * its adjoint. `'auto'` takes forward mode where it applies (and `fuse` is not false), reverse
   * mode elsewhere. Both give the same gradient up to rounding; `inverse` and `adjoint` are
   * always the reverse-mode ones.
   */
  mode?: 'auto' | 'forward' | 'reverse'
  /**
   * What to do when the adjoint sweep does not bring the arguments back to their inputs
   * (default \`'error'\`). Reverse mode recomputes values by uncomputing \`f\` instead of storing
   * them; where that is numerically unstable (a division by a small number, a cancellation),
   * the recomputed values drift and the gradient is taken at the wrong point, silently. After
   * every sweep the driver compares the recomputed value of each argument \`f\` writes with the
   * caller's (one comparison per scalar; forward mode, which does not uncompute, has nothing to
   * check). \`'error'\` throws a \`TenetError\` with code \`ad/uncompute\`, \`'warn'\` writes one
   * \`console.warn\` per gradient function and returns the gradient, \`'off'\` skips the check.
   * The check sees drift at the boundary only: an intermediate value that is recomputed wrongly
   * and then cancels out is not seen.
   */
  uncompute?: 'error' | 'warn' | 'off'
  /**
   * The tolerance of that check, relative to max(1, |input|) (default 1e-6: far above the
   * rounding of a stable uncompute, about 1e-16 to 1e-12 relative, far below a useless gradient).
   */
  uncomputeTolerance?: number
  /**
   * Indices of float arguments held constant (default none): no gradient is computed for them
   * (null in the result) and nothing is accumulated into them, as for data a loss only reads.
   * Only arguments that `f` never writes can be constants (others pass their gradients on:
   * an `ad/argument` error). The one-pass, adjoint-only, routine-fused and two-sweep programs
   * have a variant without their gradients (nothing zeroed, accumulated or propagated for them);
   * forward mode and the map-forward program do not (the plan says so).
   */
  constants?: number[]
  /**
   * Indices of array arguments that are work space (default none), such as arrays a function
   * fills with intermediate values and that the caller passes in as zeros: each call runs \`f\`
   * with zero arrays of the same lengths in their place (the caller's arrays give only the
   * lengths: they are neither read nor written, whatever they hold), and returns no gradient for
   * them (null in the result, no entry in \`buffers\`). This saves the copy of each such array
   * per call, and the driver zeroes them with the gradients in one block. The gradient is that of
   * \`f\` at zero work arrays: the same as without the option when the caller passes zeros.
   * Only arrays of plain numbers (no host conversion, such as a fixed-point or log number system)
   * can be scratch, and not a constant.
   */
  scratch?: number[]
}

/**
 * Compiles the gradient of `f` with respect to all its float arguments, once; the result is
 * callable many times. `loss` is the index of the scalar argument that holds the loss.
 * ```ts
 * const g = grad(m.norm, { loss: 0 })
 * g(0, 0, x)  // [1, dnorm/dy, Float64Array dnorm/dx] (fresh arrays; g.run(...) allocates nothing)
 * ```
 */
export function grad(f: TenetFunction, options: GradOptions): GradientFunction {
  optionsOf('grad', options, true)
  const constants = options.constants ?? []
  if (!Array.isArray(constants)) argError(`\`constants\` must be an array of argument indices, got ${typeof constants}`)
  if (constants.includes(options.loss)) argError(`the loss (argument ${options.loss}) cannot be held constant`)
  const c = compileAdjoint(f, 1, constants)
  checkLoss(c, options.loss)
  const scratch = scratchArguments(c, options.scratch, constants)
  const mode = options.mode ?? 'auto'
  if (mode !== 'auto' && mode !== 'forward' && mode !== 'reverse')
    argError(`\`mode\` must be 'auto', 'forward' or 'reverse', got ${String(mode)}`)
  if (constants.length && mode === 'forward') argError("`constants` need reverse mode: use mode 'reverse' or 'auto'")
  // the choice of program is planGradient's (plan.ts): the plan says which and why
  const { plan, forward, fused } = planGradient(f, { ...options, scratch })
  if (mode === 'forward' && !forward) {
    // a function of the right shape whose tangent cannot be built: the tangent's own error says why
    if (hasForwardGradientShape(f, options.loss)) compileTangent(f, 1)
    argError(
      `forward mode needs a function of scalars with one float argument besides the loss, which it only accumulates into (\`loss += e\`); \`${c.info.name}\` is not one: use mode 'reverse' or 'auto'`,
    )
  }
  const policy = options.uncompute ?? 'error'
  if (policy !== 'error' && policy !== 'warn' && policy !== 'off')
    argError(`\`uncompute\` must be 'error', 'warn' or 'off', got ${String(policy)}`)
  const tolerance = positiveNumber('grad', 'uncomputeTolerance', options.uncomputeTolerance, true) ?? 1e-6
  // the plan says whether the program uncomputes (two-sweep, routine-fused with checks): only then is there a drift to check
  const { run: unguarded, ctx } = makeDriver(
    c,
    options.loss,
    fused?.core ?? null,
    forward,
    {
      policy: plan.uncomputeCheck === 'off' ? 'off' : policy,
      tolerance,
    },
    scratch,
  )
  const run = guardReentry(unguarded, c.info.program.hosts, c.info.name)
  const slots = c.slots
  // fresh results every call (a = g(...); b = g(...) must not alias); `run` is the allocation-free form
  const g = (...args: unknown[]): Gradient => {
    run(...args)
    const out: Gradient = new Array(slots.length)
    for (let i = 0; i < out.length; i++) {
      const s = slots[i]
      out[i] =
        !s || s.kind === 'stack' || scratch.includes(i)
          ? null
          : s.kind === 'scalar'
            ? ctx.scalars[i]!
            : ctx.buffers[i]!.slice()
    }
    return out
  }
  Object.defineProperties(g, {
    run: { value: run },
    scalars: { value: ctx.scalars },
    buffers: { value: ctx.buffers },
    adjoint: { value: c.adjoint },
    program: { value: forward?.fn ?? fused ?? c.adjoint },
    plan: { value: plan },
    [DRIVER]: { value: ctx },
    lastLoss: { get: lastLoss },
    inverse: { value: (args: unknown[], gr: Gradient, sink = 0) => inverseGradient(c, args, gr, sink) },
    release: { value: () => ctx.release() },
    dispose: {
      value: () => {
        ctx.release()
        ctx.disposed = true
        collected?.unregister(ctx.token)
      },
    },
  })
  if (ctx.adj.resident || ctx.fwd.resident) collected?.register(ctx.token, ctx.held, ctx.token)
  return g as unknown as GradientFunction
}

/** The validated \`scratch\` option of \`grad\` (see \`GradOptions.scratch\`): the indices, each once. */
function scratchArguments(c: CompiledAdjoint, scratch: unknown, constants: readonly number[]): number[] {
  if (scratch === undefined) return []
  if (!Array.isArray(scratch)) argError(`\`scratch\` must be an array of argument indices, got ${typeof scratch}`)
  const out: number[] = []
  for (const i of scratch as unknown[]) {
    const p = typeof i === 'number' && Number.isInteger(i) ? c.params[i] : undefined
    if (!p)
      argError(
        `\`scratch\` must hold indices of arguments of \`${c.info.name}\` (0..${c.params.length - 1}), got ${String(i)}`,
      )
    const at = i as number
    if (p!.type.kind !== 'array')
      argError(
        `\`scratch\` arguments must be arrays, but argument ${at} (\`${p!.name}\`) of \`${c.info.name}\` is ${p!.type.kind === 'scalar' ? p!.type.name : p!.type.kind}`,
      )
    if (constants.includes(at)) argError(`argument ${at} (\`${p!.name}\`) cannot be both scratch and a constant`)
    if (hostConversions(c, at).fromHost)
      argError(
        `argument ${at} (\`${p!.name}\`) cannot be scratch: its elements are not plain numbers (their zero is not the zero bit pattern)`,
      )
    if (!out.includes(at)) out.push(at)
  }
  return out
}

/** Runs the adjoint's inverse and then f's inverse on copies: see `GradientFunction.inverse`. */
function inverseGradient(
  c: CompiledAdjoint,
  args: unknown[],
  gr: Gradient,
  sink: number,
): { args: unknown[]; gradient: Gradient; sink: number } {
  const sweep = new Sweep(c)
  sweep.load(args)
  const n = c.params.length
  const inv = c.adjoint.inverse.core
  const adjArgs = new Array<unknown>(n + c.slots.filter((s) => s).length + 1)
  for (let i = 0; i < n; i++) adjArgs[i] = sweep.fwd[i]
  c.slots.forEach((s, i) => {
    if (!s) return
    const x = gr[i]
    if (s.kind === 'scalar')
      adjArgs[s.index] = typeof x === 'number' ? x : argError(`the gradient of argument ${i} must be a number`)
    else if (s.kind === 'array')
      adjArgs[s.index] = ArrayBuffer.isView(x)
        ? (x as Float64Array).slice()
        : argError(`the gradient of argument ${i} must be a typed array`)
    else adjArgs[s.index] = new Array<number>((sweep.fwd[i] as unknown[]).length).fill(0)
  })
  adjArgs[adjArgs.length - 1] = sink
  inv.apply(undefined, adjArgs)
  const res = inv.results
  const isBool = (i: number) => {
    const p = c.params[i]!
    return p.type.kind === 'scalar' && p.type.name === 'bool'
  }
  const vals: unknown[] = adjArgs
    .slice(0, n)
    .map((v, i) => (c.params[i]!.type.kind === 'scalar' ? (isBool(i) ? res[i] !== 0 : res[i]) : v))
  const finv = c.inverse
  finv.apply(undefined, vals)
  const out = vals.map((v, i) => {
    const th = hostConversions(c, i).toHost
    if (c.params[i]!.type.kind === 'scalar')
      return isBool(i) ? finv.results[i] !== 0 : th ? th(finv.results[i]!) : finv.results[i]
    if (th && ArrayBuffer.isView(v)) return (v as Float64Array).map(th)
    return v
  })
  const gradientOut: Gradient = c.slots.map((s) =>
    !s || s.kind === 'stack' ? null : s.kind === 'scalar' ? res[s.index]! : (adjArgs[s.index] as Float64Array),
  )
  return { args: out, gradient: gradientOut, sink: res[adjArgs.length - 1]! }
}

/**
 * The driver `run`, refusing a call made while a call of it is still running: a module that calls
 * host functions can call this gradient again from inside one of them, and the inner call would
 * overwrite the buffers and scalars the outer call is using (wrong values, silently). Such a call
 * throws a `TenetError` with code `ad/reentrant`; a separate `grad(...)` object of the same
 * function is the way to differentiate from inside a host function. Without host functions no call
 * can re-enter, and `run` is returned as it is (no cost on the hot path).
 */
function guardReentry(
  run: (...a: unknown[]) => void,
  hosts: readonly unknown[],
  name: string,
): (...a: unknown[]) => void {
  if (!hosts.some((h) => typeof h === 'function')) return run
  let busy = false
  return (...args: unknown[]): void => {
    if (busy)
      throw new TenetError(
        'ad/reentrant',
        `the gradient of \`${name}\` was called again from inside its own call (from a host function its program calls): the inner call would overwrite the outer call's buffers; differentiate there with a separate \`grad(...)\` object`,
      )
    busy = true
    try {
      run(...args)
    } finally {
      busy = false
    }
  }
}
