/**
 * Dual-engine functions as host functions of a Tenet program: `hostFunction(f)` is a plain JS
 * function (numbers and `Float64Array`s in, a number out) that a Tenet template can interpolate
 * (`y += ${h}(x, a)`), carrying the dual definition so that `@tenet/ad` differentiates the call
 * through this engine instead of rejecting it.
 */
import { evaluate, grad } from './api.js'
import type { Dual } from './dual.js'
import { DualError } from './errors.js'
import type { Real } from './tape.js'

/** The marker property of a host function made by `hostFunction` (shared across package copies). */
export const DUAL_HOST: unique symbol = Symbol.for('tenet.dual.host') as never

/** What `@tenet/ad` reads from a dual host function. */
export interface DualHostInfo {
  /** The function's name (for error messages). */
  name: string
  /**
   * The gradient at `args` (numbers for scalars, `Float64Array`s for arrays): one entry per
   * argument, a number or a fresh `Float64Array`. The last point is remembered, so asking for the
   * partials of several arguments at one point sweeps once.
   */
  gradientAt(args: ReadonlyArray<number | Float64Array>): ReadonlyArray<number | Float64Array>
}

/** A host function made by `hostFunction`. */
export type DualHostFunction<P extends unknown[]> = ((
  ...args: { [K in keyof P]: P[K] extends Real ? number : Float64Array }
) => number) & {
  readonly [DUAL_HOST]: DualHostInfo
}

/**
 * Wraps a scalar-valued dual-engine function of scalars (`Real`) and arrays (`Real[]`) as a host
 * function for Tenet programs. Called from a program it evaluates `f` (through the engine); when a
 * Tenet gradient reaches the call, `@tenet/ad` takes its partial derivatives from one reverse sweep
 * of this engine.
 *
 * ```ts
 * const softNorm = hostFunction((d, x: Real[]) => d.sqrt(d.offset(d.dot(x, x), 1)))
 * const m = rev`fn f(y: f64, x: f64[]) { y += ${softNorm}(x) }`
 * grad(m.f, { loss: 0 })(0, x) // ∂y/∂x through the dual engine
 * ```
 */
export function hostFunction<P extends Array<Real | Real[]>>(
  f: (d: Dual, ...args: P) => Real,
  name = f.name || 'host function',
): DualHostFunction<P> {
  const value = evaluate(f as never) as unknown as (...args: unknown[]) => number
  const g = grad(f as never) as unknown as (...args: unknown[]) => unknown
  let lastArgs: Array<number | Float64Array> | undefined
  let lastGrad: ReadonlyArray<number | Float64Array> = []
  const same = (args: ReadonlyArray<number | Float64Array>): boolean => {
    if (!lastArgs || lastArgs.length !== args.length) return false
    for (let k = 0; k < args.length; k++) {
      const a = args[k]!,
        b = lastArgs[k]!
      if (
        typeof a === 'number'
          ? a !== b
          : !(b instanceof Float64Array) || a.length !== b.length || a.some((v, i) => v !== b[i])
      )
        return false
    }
    return true
  }
  const info: DualHostInfo = {
    name,
    gradientAt(args) {
      if (same(args)) return lastGrad
      for (const a of args)
        if (typeof a !== 'number' && !(a instanceof Float64Array))
          throw new DualError(
            'dual/host-argument',
            `${name}: a dual host function takes numbers and Float64Arrays, got ${typeof a}`,
          )
      const r = g(...args)
      lastGrad = args.length === 1 ? [r as number | Float64Array] : (r as Array<number | Float64Array>)
      lastArgs = args.map((a) => (typeof a === 'number' ? a : a.slice()))
      return lastGrad
    },
  }
  const host = ((...args: unknown[]) => value(...args)) as DualHostFunction<P>
  Object.defineProperty(host, DUAL_HOST, { value: info })
  Object.defineProperty(host, 'name', { value: name })
  return host
}

/** The dual definition of a host function made by `hostFunction`, or undefined for any other value. */
export function dualHostInfo(v: unknown): DualHostInfo | undefined {
  return typeof v === 'function'
    ? ((v as unknown as Record<symbol, unknown>)[DUAL_HOST] as DualHostInfo | undefined)
    : undefined
}
