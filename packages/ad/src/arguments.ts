/**
 * What every AD entry point does with its arguments: the gradient and loss types, the argument
 * error, host conversions of number-system values, which arrays may be used in place, the loss
 * check, and copies of argument lists.
 */
import { TenetError } from '@tenet/ir'
import { hostConversionsOf } from '@tenet/reversible'
import type { CompiledAdjoint } from './compile.js'

/** A gradient per argument: a number for a float scalar, a typed array for a float array, null otherwise. */
export type Gradient = Array<number | Float64Array | Float32Array | null>

/**
 * The gradient of a complex value in the surface view: `re` = ∂L/∂Re z, `im` = ∂L/∂Im z, i.e.
 * the complex number ḡ_z = ∂L/∂x + i·∂L/∂y for z = x + iy (see "Complex numbers" in the README).
 */
export interface ComplexGradient {
  re: number
  im: number
}

/**
 * A gradient per argument of the function *as written* (before complex numbers are lowered to
 * pairs of f64): like `Gradient`, plus `{ re, im }` for a complex scalar and an array of them for
 * a complex array.
 */
export type SurfaceGradient = Array<number | Float64Array | Float32Array | ComplexGradient | ComplexGradient[] | null>

/** Which argument holds the loss. */
export interface LossOptions {
  /**
   * Index of the float scalar argument that holds the loss (NiLang's `Val(i)`, 0-based). With
   * arguments in the surface view of a function with complex parameters, the index of a
   * parameter as written; a complex loss parameter means its real part (see `lossPart`).
   */
  loss: number
  /** For a complex loss parameter in the surface view: which part is the loss (default `'re'`). */
  lossPart?: 're' | 'im'
}

export type TypedArray = Float64Array | Float32Array | Int32Array | Uint8Array
export const CTORS = { Float64Array, Float32Array, Int32Array, Uint8Array } as const

export const argError = (msg: string): never => {
  throw new TenetError('ad/argument', msg)
}

/** The host conversions of parameter i of a compiled adjoint (see `hostConversionsOf`). */
export function hostConversions(
  c: CompiledAdjoint,
  i: number,
): { fromHost?: (x: number) => number; toHost?: (x: number) => number } {
  return hostConversionsOf(c.info.registry, c.params[i]!.type)
}

/**
 * How a driver takes scalar parameter i back from a compiled function's results (a
 * Float64Array): `'bool'` (nonzero is true), `'int'` (a value held in 32 bits, read back with
 * `| 0`: the same value, but a small integer to V8, as the caller passed it, where a plain read
 * gives a heap-allocated double and the next call of the generated code, compiled for small
 * integers, deoptimises and reruns its integer arithmetic — the index arithmetic of every loop —
 * in doubles), `'float'`; null for a non-scalar.
 */
export function scalarReadBack(c: CompiledAdjoint, i: number): 'bool' | 'int' | 'float' | null {
  const t = c.params[i]!.type
  if (t.kind !== 'scalar') return null
  if (t.name === 'bool') return 'bool'
  return c.info.registry.numberSystem(t.name).arrayType === 'Int32Array' ? 'int' : 'float'
}

/**
 * Per parameter: whether the driver may run `f` and its adjoint on the caller's own array (no
 * copy): `f` never writes it (nor do its adjoint and fused programs, which write only what `f`
 * writes, and gradients) and its elements need no conversion.
 */
export function sharedArrays(c: CompiledAdjoint): boolean[] {
  const written = c.info.program.writes.get(c.info.name)
  return c.params.map(
    (p, i) =>
      p.type.kind === 'array' && written !== undefined && written[i] === false && !hostConversions(c, i).fromHost,
  )
}

/** Copies host values into an internal array, converting each with `fromHost` when given. */
export function copyIn(dst: TypedArray, src: TypedArray, fromHost: ((x: number) => number) | undefined): void {
  if (!fromHost) {
    dst.set(src as never)
    return
  }
  for (let j = 0; j < src.length; j++) dst[j] = fromHost(src[j]!)
}

export function checkLoss(c: Pick<CompiledAdjoint, 'params' | 'slots' | 'info'>, loss: number): void {
  const p = c.params[loss]
  if (!Number.isInteger(loss) || !p)
    argError(`\`loss\` must be the index of an argument of \`${c.info.name}\` (0..${c.params.length - 1}), got ${loss}`)
  if (p!.type.kind !== 'scalar' || !c.slots[loss])
    argError(
      `\`loss\` must be a float scalar argument, but argument ${loss} (\`${p!.name}\`) of \`${c.info.name}\` is ${p!.type.kind === 'scalar' ? p!.type.name : p!.type.kind}`,
    )
}

/** The float scalar and float array parameters of `f` (those with a gradient), by index. */
export function floatParams(c: Pick<CompiledAdjoint, 'params' | 'slots'>): number[] {
  return c.params.flatMap((p, i) => (c.slots[i] && p.type.kind !== 'stack' ? [i] : []))
}

/** Copies of the arguments (typed arrays and stacks copied, scalars as they are). */
export function cloneArgs(args: unknown[]): unknown[] {
  return args.map((a) => (ArrayBuffer.isView(a) ? (a as Float64Array).slice() : Array.isArray(a) ? a.slice() : a))
}
