/**
 * `gradient`: one gradient of a Tenet function, in the surface view of its parameters (complex
 * numbers as `{ re, im }`), and the surface view itself.
 */
import type { TenetFunction } from '@tenet/reversible'
import { compileAdjoint } from './compile.js'
import { argsOf, optionsOf } from './options.js'
import { argError, type ComplexGradient, type Gradient, type LossOptions, type SurfaceGradient } from './arguments.js'
import { grad, type GradOptions } from './grad.js'

export function copyGradient(g: Gradient): Gradient {
  return g.map((x) => (x === null || typeof x === 'number' ? x : x.slice()))
}

/**
 * The view of a function with lowered parameters (complex → pairs of f64) as written: maps
 * surface arguments to the lowered ones and lowered gradients back. Null when no parameter of
 * `f` is lowered.
 */
export interface SurfaceView {
  /** The surface arguments → the positional arguments of the lowered function. */
  toLowered(args: unknown[]): unknown[]
  /** A surface loss (parameter index and part) → the index of the lowered loss argument. */
  lossIndex(loss: number, part?: 're' | 'im'): number
  /** Lowered gradients → one per surface parameter (`{ re, im }` for complex scalars). */
  fromLowered(g: Gradient): SurfaceGradient
  /** Number of surface parameters. */
  readonly arity: number
}

/** The surface view of `f` (see `SurfaceView`), or null when none of its parameters is lowered. */
export function surfaceView(f: TenetFunction): SurfaceView | null {
  const info = compileAdjoint(f).info
  const surface = info.surface
  const hooks = surface.params.map(
    (p) => info.registry.findNumberSystem(p.type.kind === 'scalar' ? p.type.name : p.type.elem)?.lowering,
  )
  if (!hooks.some(Boolean)) return null
  const widths = surface.params.map((p, i) => hooks[i]?.arity(p.type) ?? 1)
  const starts: number[] = []
  widths.reduce((k, w, i) => {
    starts[i] = k
    return k + w
  }, 0)
  return {
    arity: surface.params.length,
    toLowered(args) {
      if (args.length !== surface.params.length)
        argError(
          `\`${surface.name}\` takes ${surface.params.length} arguments (${surface.params.map((p) => p.name).join(', ')}), got ${args.length}`,
        )
      return args.flatMap((a, i) => {
        const h = hooks[i]
        return h
          ? h.toArgs(
              a,
              surface.params[i]!.type,
              `argument ${i + 1} (\`${surface.params[i]!.name}\`) of \`${surface.name}\``,
            )
          : [a]
      })
    },
    lossIndex(loss, part = 're') {
      const p = surface.params[loss]
      if (!Number.isInteger(loss) || !p)
        return argError(
          `\`loss\` must be the index of a parameter of \`${surface.name}\` (0..${surface.params.length - 1}), got ${loss}`,
        )
      return starts[loss]! + (hooks[loss] && p.type.kind === 'scalar' && part === 'im' ? 1 : 0)
    },
    fromLowered(g) {
      return surface.params.map((p, i) => {
        const k = starts[i]!
        if (!hooks[i]) return g[k]!
        if (p.type.kind === 'scalar') {
          const re = g[k],
            im = g[k + 1]
          return typeof re === 'number' && typeof im === 'number' ? { re, im } : null
        }
        const a = g[k]
        if (!a || typeof a === 'number') return null
        const out: ComplexGradient[] = []
        for (let j = 0; j + 1 < a.length; j += 2) out.push({ re: a[j]!, im: a[j + 1]! })
        return out
      })
    },
  }
}

/** Whether `args` are surface arguments of a function with lowered (complex) parameters. */
export function surfaceArgs(f: TenetFunction, args: unknown[]): SurfaceView | null {
  const view = surfaceView(f)
  return view && args.length === view.arity ? view : null
}

/**
 * The gradient of the loss argument with respect to every argument of `f` at `args`: a number
 * for each float scalar, a `Float64Array` (`Float32Array` for f32) for each float array, null for
 * integer, bool and stack arguments. The caller's arrays are left as passed. Fixed-point and
 * ulog arguments are passed as real values and get f64 gradients w.r.t. them.
 *
 * For a function with complex parameters, `args` may be given as written (`{ re, im }` per
 * complex scalar, an interleaved `Float64Array` per complex array, `loss` the index of a
 * parameter as written, a complex one standing for its real part unless `lossPart: 'im'`): then
 * the gradient of a complex scalar is `{ re: ∂L/∂Re z, im: ∂L/∂Im z }` and that of a complex
 * array an array of them. Given the lowered arguments (`z$re, z$im, …`) instead, the result is
 * per lowered argument.
 * ```ts
 * gradient(m.f, [0, 3], { loss: 0 })  // for y += x * x: [1, 6]
 * gradient(m.clog, [{ re: 0, im: 0 }, { re: 0.6, im: -1.3 }], { loss: 0 })  // y += log(x): x̄ = conj(1/x)
 * ```
 */
export function gradient(
  f: TenetFunction,
  args: unknown[],
  options: LossOptions & Pick<GradOptions, 'mode' | 'uncompute' | 'uncomputeTolerance' | 'constants'>,
): SurfaceGradient {
  optionsOf('gradient', options, true)
  argsOf('gradient', args)
  const view = surfaceArgs(f, args)
  if (view) {
    if (options.constants?.length) argError('`constants` are not supported for functions with complex parameters yet')
    const { lossPart: _, ...rest } = options
    return view.fromLowered(
      onceGradient(f, { ...rest, loss: view.lossIndex(options.loss, options.lossPart) }, view.toLowered(args)),
    )
  }
  return onceGradient(f, options, args)
}

/** One call of a fresh \`grad(f)\`: a copy of its gradient, its wasm memory given back. */
export function onceGradient(f: TenetFunction, options: GradOptions, args: unknown[]): Gradient {
  const g = grad(f, options)
  try {
    return copyGradient(g(...args))
  } finally {
    g.release()
  }
}
