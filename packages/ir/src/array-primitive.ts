/**
 * `arrayPrimitive`: a pure primitive some of whose arguments are whole arrays (`det(A)`,
 * `dot(x, y)`, `logsumexp(x)`), typed so that `evaluate` and `partials` see a Float64Array where
 * the argument is an array and a number where it is a scalar.
 */
import type { PurePrimitiveSpec } from './plugin.js'

/** The kind of each argument of an array primitive. */
export type ArgKind = 'scalar' | 'array'

/** The host value of each argument kind: a Float64Array for an array, a number for a scalar. */
export type ArgValues<K extends readonly ArgKind[]> = {
  -readonly [I in keyof K]: K[I] extends 'array' ? Float64Array : number
}

/** The definition of an array primitive (see `arrayPrimitive`). */
export interface ArrayPrimitiveDef<K extends readonly ArgKind[]> {
  name: string
  /** The kind of each argument, in order (its length is the arity). */
  args: K
  /** The value, given the arguments (arrays as Float64Arrays, read-only). */
  evaluate: (...args: ArgValues<K>) => number
  /**
   * ∂f/∂argᵢ for every argument: a number for a scalar, a Float64Array with one entry per
   * element for an array (a new array, or one the primitive reuses: it is read at once).
   */
  partials?: (...args: ArgValues<K>) => ArgValues<K>
  description?: string
  override?: boolean
}

/**
 * A pure primitive with array arguments, for `registry.registerPrimitive`. Its array arguments
 * are `f64[]` variables passed by name; `y += f(A, x)` is differentiable in reverse mode
 * (gradients, reverse Jacobians) when `partials` is given, with the whole array's partials
 * accumulated into the array's gradient in one call.
 */
export function arrayPrimitive<const K extends readonly ArgKind[]>(def: ArrayPrimitiveDef<K>): PurePrimitiveSpec {
  return {
    specificationVersion: 'v1',
    name: def.name,
    kind: 'pure',
    arity: def.args.length,
    argKinds: [...def.args],
    evaluate: def.evaluate as unknown as (...args: number[]) => number,
    ...(def.partials ? { partials: def.partials as unknown as (...args: number[]) => number[] } : {}),
    ...(def.description ? { description: def.description } : {}),
    ...(def.override ? { override: true } : {}),
  }
}
