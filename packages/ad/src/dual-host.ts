/**
 * Host functions written against the dual-numbers API (`hostFunction` of `@tenet/dual`) inside a
 * Tenet program: `y += ${h}(a, b)` is differentiated through the dual engine. The adjoint reads
 * each partial ∂h/∂argₖ from a generated helper primitive that asks the host for its gradient at
 * the call's arguments (one reverse sweep of the dual engine per point: the host remembers the
 * last one). Any other host function read by a derivative is a static error, arrays included (an
 * array argument used to get a silent zero gradient).
 */
import { TenetStaticError, type Expr } from '@tenet/ir'
import { dualHostInfo } from '@tenet/dual'

/** The element type of an array-typed host argument (set by the checker), or undefined. */
export function arrayElementType(e: Expr): string | undefined {
  const t = (e as { type?: unknown }).type
  if (t && typeof t === 'object' && (t as { kind: string }).kind === 'array') return (t as { elem: string }).elem
  return undefined
}

/**
 * The partial derivatives of a call of the host function `host` at the argument expressions `args`:
 * one scalar function per argument (evaluated at the call's argument values by a generated helper
 * primitive). The host must be a dual host function with scalar arguments; anything else is a
 * static error (with the call's location).
 */
export function dualHostPartials(host: unknown, args: Expr[], loc: Expr['loc']): Array<(...a: number[]) => number> {
  const info = dualHostInfo(host)
  if (!info) {
    throw new TenetStaticError('ad/no-derivative', 'an interpolated host function has no derivative; write it against the dual-numbers API and wrap it with `hostFunction` (@tenet/dual), or register it as a pure primitive with `partials` (registry.registerPrimitive), to differentiate through it', loc)
  }
  const arrays = args.flatMap((a, k) => (arrayElementType(a) !== undefined ? [k] : []))
  if (arrays.length > 0) {
    throw new TenetStaticError('ad/host-array', `the dual host function \`${info.name}\` takes an array (argument ${arrays.map((k) => k + 1).join(', ')}); inside a Tenet gradient only scalar arguments of host functions are differentiated so far: pass the elements it reads as scalars`, loc)
  }
  return args.map((_, k) => (...a: number[]): number => info.gradientAt(a)[k] as number)
}
