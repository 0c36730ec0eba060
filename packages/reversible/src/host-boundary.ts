/**
 * The host boundary: what a Tenet function accepts from JavaScript for each parameter, how a host
 * value becomes the representation (fixed point rounds onto its grid, ulog encodes), and the one
 * error per mistake that every entry point raises — a call, `gradient`/`grad`, `jvp`, `jacobian`,
 * `hessian`, `taylor`, the eval-free drivers:
 *
 * | mistake | code |
 * |---|---|
 * | wrong number of arguments | `call/arity` |
 * | an argument of the wrong type (a string for `f64`, a Float32Array for `f64[]`, …) | `call/type` |
 * | a typed array whose ArrayBuffer was detached | `call/detached` |
 *
 * Messages name the argument as the function declares it: ``argument 2 (`x: f64[]`) of `norm` ``.
 */
import { TenetError, typeToString, type Param, type Registry, type Type } from '@tenet/ir'

/** The typed-array constructors of the number systems' host arrays. */
export const HOST_ARRAY_CTORS = { Float64Array, Float32Array, Int32Array, Uint8Array } as const
/** A host array of some number system. */
export type HostArray = Float64Array | Float32Array | Int32Array | Uint8Array
type HostArrayCtor = (typeof HOST_ARRAY_CTORS)[keyof typeof HOST_ARRAY_CTORS]

/**
 * The host conversions of a parameter type: `fromHost` turns a host number into the
 * representation (absent where they agree, and for arrays of a system whose host arrays are
 * exact), `toHost` turns it back.
 */
export function hostConversionsOf(
  registry: Registry,
  t: Type,
): { fromHost?: (x: number) => number; toHost?: (x: number) => number } {
  const ns = registry.findNumberSystem(t.kind === 'scalar' ? t.name : t.elem)
  const fromHost = ns?.fromHost && !(t.kind === 'array' && ns.hostArraysExact) ? ns.fromHost : undefined
  return { ...(fromHost ? { fromHost } : {}), ...(ns?.toHost ? { toHost: ns.toHost } : {}) }
}

/** What one parameter takes from the host. */
export interface HostParam {
  readonly kind: 'number' | 'boolean' | 'array' | 'stack'
  /** For arrays: the typed array the number system's elements live in. */
  readonly ctor?: HostArrayCtor
  readonly fromHost?: (x: number) => number
  readonly toHost?: (x: number) => number
}

/** The host side of each parameter of a function. */
export function hostParams(registry: Registry, params: readonly Param[]): HostParam[] {
  return params.map((p): HostParam => {
    const t = p.type
    if (t.kind === 'scalar')
      return t.name === 'bool' ? { kind: 'boolean' } : { kind: 'number', ...hostConversionsOf(registry, t) }
    if (t.kind === 'array')
      return {
        kind: 'array',
        ctor: HOST_ARRAY_CTORS[registry.numberSystem(t.elem).arrayType],
        ...hostConversionsOf(registry, t),
      }
    return { kind: 'stack' }
  })
}

/** `argument 2 (`x: f64[]`) of `norm`` */
export function describeArgument(fn: string, params: readonly Param[], i: number): string {
  return `argument ${i + 1} (\`${params[i]!.name}: ${typeToString(params[i]!.type)}\`) of \`${fn}\``
}

/** How a host value reads in an error: `null`, `a Float32Array`, `a string`, … */
export function describeHostValue(a: unknown): string {
  if (a === null) return 'null'
  if (a === undefined) return 'undefined'
  if (typeof a === 'object') return `a ${(a as object).constructor?.name ?? 'object'}`
  return `a ${typeof a}`
}

/** The `call/arity` error: `fn` takes n arguments (its parameter list), got `got`. */
export function arityError(fn: string, params: readonly Param[], got: number): never {
  throw new TenetError(
    'call/arity',
    `\`${fn}\` takes ${params.length} argument${params.length === 1 ? '' : 's'} (${params.map((p) => p.name).join(', ')}), got ${got}`,
  )
}

/** What a parameter wants, in words. */
function wanted(hp: HostParam): string {
  return hp.kind === 'number'
    ? 'a number'
    : hp.kind === 'boolean'
      ? 'a boolean'
      : hp.kind === 'array'
        ? `a ${hp.ctor!.name}`
        : 'a JS array (a stack)'
}

/** The `call/type` (or, for a detached typed array, `call/detached`) error of argument i holding `a`. */
export function argumentError(fn: string, params: readonly Param[], hp: HostParam, i: number, a: unknown): never {
  if (ArrayBuffer.isView(a) && isDetached(a)) {
    throw new TenetError(
      'call/detached',
      `${describeArgument(fn, params, i)} is a view of a detached ArrayBuffer (transferred, or of a wasm memory that grew); pass an array with live memory`,
    )
  }
  throw new TenetError(
    'call/type',
    `${describeArgument(fn, params, i)} must be ${wanted(hp)}, got ${describeHostValue(a)}`,
  )
}

/**
 * Checks argument i against its parameter, throwing the boundary's error; returns nothing. (An
 * empty array is checked for a detached buffer: a detached view reads as empty.)
 */
export function checkArgument(fn: string, params: readonly Param[], hp: HostParam, i: number, a: unknown): void {
  switch (hp.kind) {
    case 'number':
      if (typeof a !== 'number') argumentError(fn, params, hp, i, a)
      return
    case 'boolean':
      if (typeof a !== 'boolean') argumentError(fn, params, hp, i, a)
      return
    case 'array':
      if (!(a instanceof hp.ctor!) || ((a as HostArray).length === 0 && isDetached(a as HostArray)))
        argumentError(fn, params, hp, i, a)
      return
    case 'stack':
      if (!Array.isArray(a)) argumentError(fn, params, hp, i, a)
  }
}

/**
 * Checks a whole argument list (count, then each argument) and returns the representation of
 * each: numbers converted by `fromHost`, arrays copied into fresh typed arrays (converted),
 * stacks copied. For callers that must not touch the caller's values.
 */
export function loadArguments(
  fn: string,
  params: readonly Param[],
  hps: readonly HostParam[],
  args: ArrayLike<unknown>,
): unknown[] {
  if (args.length !== params.length) arityError(fn, params, args.length)
  const out = new Array<unknown>(params.length)
  for (let i = 0; i < params.length; i++) {
    const hp = hps[i]!,
      a = args[i]
    checkArgument(fn, params, hp, i, a)
    if (hp.kind === 'number') out[i] = hp.fromHost ? hp.fromHost(a as number) : a
    else if (hp.kind === 'array') out[i] = copyToRepresentation(a as HostArray, hp, undefined)
    else if (hp.kind === 'stack') out[i] = (a as unknown[]).slice()
    else out[i] = a
  }
  return out
}

/**
 * A copy of host array `a` in the representation (each element converted by `fromHost`), into
 * `into` when it has the right type and length (and is not `a`), else into a fresh array.
 */
export function copyToRepresentation(a: HostArray, hp: HostParam, into: unknown): HostArray {
  const ctor = hp.ctor!
  const copy =
    into instanceof ctor && (into as HostArray).length === a.length && into !== a
      ? (into as HostArray)
      : new ctor(a.length)
  const fh = hp.fromHost
  if (fh) for (let j = 0; j < a.length; j++) copy[j] = fh(a[j]!)
  else copy.set(a as never)
  return copy
}

/**
 * True for a typed array whose buffer was detached (transferred, or a grown wasm memory's old
 * buffer): its length reads 0 and most of its methods throw. Cheap for non-empty views.
 */
export function isDetached(a: ArrayBufferView): boolean {
  if (a.byteLength !== 0) return false
  const b = a.buffer as ArrayBuffer & { detached?: boolean }
  if (typeof b.detached === 'boolean') return b.detached
  if (b.byteLength !== 0) return false
  // (Node 20 has no `detached` getter: a view of a detached buffer cannot be made)
  try {
    new Uint8Array(b)
    return false
  } catch {
    return true
  }
}
