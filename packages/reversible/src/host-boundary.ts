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
 * | an array the function writes that shares memory with another array argument | `call/overlap` |
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

/**
 * The most elements an array argument may hold: 2³¹ − 1. `len(a)` and every index are i32 values,
 * and the compilers prove bounds and aliasing with that (a longer array would wrap `len(a)`).
 */
export const MAX_ARRAY_LENGTH = 0x7fffffff

/**
 * The `call/type` (or, for a detached typed array, `call/detached`; for one longer than
 * {@link MAX_ARRAY_LENGTH}, `call/length`) error of argument i holding `a`.
 */
export function argumentError(fn: string, params: readonly Param[], hp: HostParam, i: number, a: unknown): never {
  if (hp.kind === 'array' && a instanceof hp.ctor! && (a as HostArray).length > MAX_ARRAY_LENGTH) {
    throw new TenetError(
      'call/length',
      `${describeArgument(fn, params, i)} has ${(a as HostArray).length} elements; an array argument holds at most 2³¹ − 1 (len is an i32)`,
    )
  }
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
 * empty array is checked for a detached buffer: a detached view reads as empty; an array longer
 * than {@link MAX_ARRAY_LENGTH} is refused.)
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
      if (
        !(a instanceof hp.ctor!) ||
        ((a as HostArray).length === 0 && isDetached(a as HostArray)) ||
        (a as HostArray).length > MAX_ARRAY_LENGTH
      )
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

/**
 * The aliasing rule of the language at the host boundary: **an array argument that a function
 * writes shares no memory with any other array argument of the same call** (read-only arrays may
 * overlap each other). The passes and the code generators take two array parameters for distinct
 * memory, as the checker does for the arrays of one call inside a program (`f(x, x)` is a static
 * error); a host could break that by passing one typed array (or two views of one buffer whose
 * byte ranges overlap) for two parameters. Every checked entry point (a call and its `.inverse`
 * on every backend, the reference interpreter included, and the AD drivers' entry points) raises
 * `call/overlap`, naming both arguments and the function, before it runs anything. (The
 * `.core` of a function, like its argument types, is not checked: its caller keeps to the rules.)
 *
 * Cheap: the guard remembers the arrays of the last call it found apart, so a call with the same
 * arrays compares one reference per array; otherwise it compares the buffers of each pair (written
 * array, other array), and only for one buffer the byte ranges. Nothing is allocated per call.
 * The arrays are remembered only where the answer cannot change while they stay the same objects:
 * two views of one resizable (or growable) buffer change their byte ranges as it resizes. (The
 * guard keeps the last arrays it saw alive, as the `$apart` caches of the cpu backend do.)
 */
export interface OverlapGuard {
  /** The pairs of parameter indices it tests, flattened: `[w0, o0, w1, o1, …]`, `w` written. */
  readonly pairs: readonly number[]
  /** The parameter indices that occur in `pairs`, ascending. */
  readonly arrays: readonly number[]
  /**
   * Per entry of `arrays`, the argument of the last call whose arrays were all found apart (and
   * stay so: see {@link OverlapGuard}), or undefined: a caller with the same arrays passes. A
   * generated caller tests `if (a${arrays[0]} !== seen[0] || …) guard.check(arguments)`.
   */
  readonly seen: unknown[]
  /** Throws `call/overlap` when a written array of `args` shares memory with another array of `args`. */
  check(args: ArrayLike<unknown>): void
}

/**
 * True when host arrays `a` and `b` share memory: one typed array (not empty), or two views of one
 * buffer whose byte ranges intersect. Other values (JS arrays: stacks) share memory only when they
 * are one object.
 */
export function sharesMemory(a: unknown, b: unknown): boolean {
  if (!ArrayBuffer.isView(a) || !ArrayBuffer.isView(b)) return a === b && a !== undefined && a !== null
  if (a === b) return a.byteLength > 0
  if (a.buffer !== b.buffer) return false
  const ao = a.byteOffset,
    bo = b.byteOffset
  return a.byteLength > 0 && b.byteLength > 0 && ao < bo + b.byteLength && bo < ao + a.byteLength
}

/** Whether the answer of {@link sharesMemory} for `a`, `b` holds as long as they are the same objects. */
function lasting(a: unknown, b: unknown): boolean {
  if (!ArrayBuffer.isView(a) || !ArrayBuffer.isView(b) || a.buffer !== b.buffer) return true
  const buf = a.buffer as ArrayBufferLike & { resizable?: boolean; growable?: boolean }
  return !(buf.resizable || buf.growable)
}

/**
 * The `call/overlap` error: argument `w` (written by `fn`) shares memory with argument `o`.
 * `converted`: `w` is not written but converted in place on entry (its number system has a host
 * conversion), which changes it all the same.
 */
export function overlapError(
  fn: string,
  params: readonly Param[],
  w: number,
  o: number,
  converted = false,
): TenetError {
  const [i, j] = w < o ? [w, o] : [o, w]
  const n = (k: number): string => `${k + 1} (\`${params[k]!.name}: ${typeToString(params[k]!.type)}\`)`
  const how = converted
    ? `converts \`${params[w]!.name}\` in place (its number system has a host conversion): an array a call converts or writes`
    : `writes \`${params[w]!.name}\`: an array a function writes`
  return new TenetError(
    'call/overlap',
    `arguments ${n(i)} and ${n(j)} of \`${fn}\` share memory, and \`${fn}\` ${how} must not overlap any other array argument (pass a copy, e.g. \`${params[o]!.name}.slice()\`)`,
  )
}

/**
 * The aliasing guard of a function (see {@link OverlapGuard}), or undefined where it has nothing to
 * test (no written array, or fewer than two arrays). `writes`: per parameter, whether the function
 * writes it (`Program.writes`); a function and its inverse write the same parameters.
 */
export function overlapGuard(
  fn: string,
  params: readonly Param[],
  writes: readonly boolean[],
): OverlapGuard | undefined {
  const pairs: number[] = []
  const arrays = params.flatMap((p, i) => (p.type.kind === 'array' || p.type.kind === 'stack' ? [i] : []))
  for (const w of arrays) {
    if (!writes[w]) continue
    for (const o of arrays) {
      // (two written arrays: the pair once, named from the first)
      if (o === w || (writes[o] && o < w)) continue
      pairs.push(w, o)
    }
  }
  if (!pairs.length) return undefined
  const used = arrays.filter((i) => pairs.includes(i))
  const seen: unknown[] = new Array(used.length).fill(undefined)
  /** Tests every pair; remembers the arrays where all are apart for good. */
  const full = (args: ArrayLike<unknown>): void => {
    let last = true
    for (let k = 0; k < pairs.length; k += 2) {
      const a = args[pairs[k]!],
        b = args[pairs[k + 1]!]
      if (sharesMemory(a, b)) {
        seen.fill(undefined)
        throw overlapError(fn, params, pairs[k]!, pairs[k + 1]!)
      }
      if (!lasting(a, b)) last = false
    }
    for (let k = 0; k < used.length; k++) seen[k] = last ? args[used[k]!] : undefined
  }
  return {
    pairs,
    arrays: used,
    seen,
    check(args: ArrayLike<unknown>): void {
      for (let k = 0; k < used.length; k++) {
        if (args[used[k]!] !== seen[k]) {
          full(args)
          return
        }
      }
    },
  }
}
