/**
 * `checkGrad`: a gradient against central finite differences.
 */
import type { TenetFunction } from '@tenet/reversible'
import { compileAdjoint, compileForwardGradient } from './compile.js'
import { argsOf, optionsOf, positiveNumber } from './options.js'
import {
  argError,
  checkLoss,
  cloneArgs,
  copyIn,
  floatParams,
  hostConversions,
  type Gradient,
  type LossOptions,
  type TypedArray,
} from './arguments.js'
import type { GradOptions } from './grad.js'
import { onceGradient, surfaceArgs } from './gradient.js'

/** Options of `checkGrad`. */
export interface CheckGradOptions extends LossOptions, Pick<GradOptions, 'uncompute' | 'uncomputeTolerance'> {
  /** Absolute tolerance (default 1e-6). */
  atol?: number
  /** Relative tolerance, times |finite difference| (default 1e-6). */
  rtol?: number
  /** Relative finite-difference step (default 1e-6). */
  step?: number
  /**
   * Which gradients are checked (default `'both'`): the reverse-mode one and, for a function that
   * `grad` differentiates in forward mode (see `GradOptions.mode`), the forward-mode one too;
   * `'reverse'` or `'forward'` for one of them.
   */
  mode?: 'both' | 'forward' | 'reverse'
}

/** What `checkGrad` found. */
export interface CheckGradResult {
  ok: boolean
  /** The largest |ad − fd| over all float input scalars. */
  maxError: number
  /** Where the largest error is: argument index, element index (0 for a scalar), both values, and the mode whose gradient it is. */
  worst: { arg: number; index: number; ad: number; fd: number; mode: 'forward' | 'reverse' } | null
}

/**
 * Compares the gradient with central finite differences of the loss, for every float scalar of
 * every float argument: the adjoint's and, where `grad` uses forward mode, the tangent's too
 * (`mode`). Each finite-difference run goes forwards on a perturbed copy
 * and is undone with the inverse, so the copy returns to the inputs between runs. Fixed-point
 * and ulog arguments are perturbed in their real values (use a `step` well above their grid,
 * e.g. 1e-4 for the default `fixed`). A function with complex parameters may be given its
 * arguments as written (as for `gradient`); `worst.arg` then indexes the lowered arguments.
 */
export function checkGrad(f: TenetFunction, args: unknown[], options: CheckGradOptions): CheckGradResult {
  optionsOf('checkGrad', options, true)
  argsOf('checkGrad', args)
  positiveNumber('checkGrad', 'step', options.step)
  positiveNumber('checkGrad', 'atol', options.atol, true)
  positiveNumber('checkGrad', 'rtol', options.rtol, true)
  const view = surfaceArgs(f, args)
  if (view) {
    const { lossPart: _, ...rest } = options
    return checkGrad(f, view.toLowered(args), { ...rest, loss: view.lossIndex(options.loss, options.lossPart) })
  }
  const c = compileAdjoint(f)
  checkLoss(c, options.loss)
  const atol = options.atol ?? 1e-6,
    rtol = options.rtol ?? 1e-6,
    rel = options.step ?? 1e-6
  const mode = options.mode ?? 'both'
  if (mode !== 'both' && mode !== 'forward' && mode !== 'reverse')
    argError(`\`mode\` must be 'both', 'forward' or 'reverse', got ${String(mode)}`)
  const ads: Array<['forward' | 'reverse', Gradient]> = []
  const check = {
    ...(options.uncompute ? { uncompute: options.uncompute } : {}),
    ...(options.uncomputeTolerance !== undefined ? { uncomputeTolerance: options.uncomputeTolerance } : {}),
  }
  if (mode !== 'forward')
    ads.push(['reverse', onceGradient(f, { loss: options.loss, mode: 'reverse', ...check }, args)])
  if (mode === 'forward' || (mode === 'both' && compileForwardGradient(f, options.loss)))
    ads.push(['forward', onceGradient(f, { loss: options.loss, mode: 'forward' }, args)])
  const work = cloneArgs(args)
  const fwd = c.forward,
    inv = c.inverse
  const conv = c.params.map((_, i) => hostConversions(c, i))
  const converts = conv.some((h) => h.fromHost)
  // number systems with a host encoding (fixed, ulog) run on converted copies of the host values
  const inner = converts ? work.map((a) => (ArrayBuffer.isView(a) ? (a as Float64Array).slice() : a)) : work
  const invArgs = work.slice()
  const run = (): number => {
    if (converts) {
      for (let i = 0; i < work.length; i++) {
        const a = work[i],
          fh = conv[i]!.fromHost
        if (ArrayBuffer.isView(a)) copyIn(inner[i] as TypedArray, a as TypedArray, fh)
        else inner[i] = typeof a === 'number' && fh ? fh(a) : a
      }
    }
    fwd.apply(undefined, inner)
    const raw = fwd.results[options.loss]!
    const lossValue = conv[options.loss]!.toHost ? conv[options.loss]!.toHost!(raw) : raw
    for (let i = 0; i < work.length; i++) {
      const p = c.params[i]!
      invArgs[i] =
        p.type.kind === 'scalar' ? (p.type.name === 'bool' ? fwd.results[i] !== 0 : fwd.results[i]) : inner[i]
    }
    inv.apply(undefined, invArgs)
    return lossValue
  }
  let ok = true,
    maxError = 0
  let worst: CheckGradResult['worst'] = null
  for (const p of floatParams(c)) {
    const a = work[p]
    const count = typeof a === 'number' ? 1 : (a as Float64Array).length
    for (let e = 0; e < count; e++) {
      const get = () => (typeof a === 'number' ? (work[p] as number) : (a as Float64Array)[e]!)
      const set = (v: number) => {
        if (typeof a === 'number') work[p] = v
        else (a as Float64Array)[e] = v
      }
      const x0 = get()
      const h = rel * Math.max(1, Math.abs(x0))
      set(x0 + h)
      const up = run()
      set(x0 - h)
      const down = run()
      set(x0)
      const fd = (up - down) / (2 * h)
      for (const [m, ad] of ads) {
        const g = ad[p]!
        const adv = typeof g === 'number' ? g : g[e]!
        const err = Math.abs(adv - fd)
        if (!(err <= atol + rtol * Math.abs(fd))) ok = false
        if (!(err <= maxError) || worst === null) {
          maxError = Number.isNaN(err) ? Infinity : Math.max(maxError, err)
          worst = { arg: p, index: e, ad: adv, fd, mode: m }
        }
      }
    }
  }
  return { ok, maxError, worst }
}
