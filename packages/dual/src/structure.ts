/**
 * Nested inputs and outputs (JAX's pytrees, seed 003's `Structure`): numbers and `Float64Array`s are
 * differentiable; arrays and plain records are walked; anything else (booleans, strings, integer
 * arrays, null) is a static leaf, passed through unchanged. A shape is described once per call
 * site; while later calls have the same shape, the handle structure the function receives is the
 * cached one (its input handles are the same every call: inputs are the first nodes of the arena),
 * so a call allocates nothing on the way in.
 */
import { DualError } from './errors.js'
import { HANDLE_BASE, type Real, type Tape } from './tape.js'

/** A value with differentiable leaves, as the user passes it. */
export type Tree =
  | number
  | Float64Array
  | readonly Tree[]
  | { readonly [k: string]: Tree }
  | boolean
  | string
  | null
  | undefined
  | Int32Array
  | Uint8Array

/**
 * The plain value a dual-engine function's parameter of handle type `P` is called with: `Real` →
 * number; an array of `Real` → a `Float64Array` or a number array; arrays and records walked; other
 * types (booleans, strings, integer arrays) unchanged. Every number argument is differentiated, so a
 * parameter typed `number` (not `Real`) is refused: pass constants through a closure instead.
 */
export type Plain<P> = P extends Real
  ? number
  : P extends number
    ? never // a plain number parameter would receive a handle: capture constants in a closure
    : P extends readonly Real[]
      ? Float64Array | readonly number[]
      : P extends Int32Array | Uint8Array | boolean | string | null | undefined | ((...a: never[]) => unknown)
        ? P
        : P extends readonly unknown[]
          ? { readonly [K in keyof P]: Plain<P[K]> }
          : P extends object
            ? { readonly [K in keyof P]: Plain<P[K]> }
            : P

/** The gradient (cotangent) of a parameter of handle type `P`: its plain structure, numbers for handles. */
export type Cotangent<P> = P extends Real
  ? number
  : P extends readonly Real[]
    ? Float64Array | number[]
    : P extends Int32Array | Uint8Array | boolean | string | null | undefined
      ? P
      : P extends readonly unknown[]
        ? { -readonly [K in keyof P]: Cotangent<P[K]> }
        : P extends object
          ? { -readonly [K in keyof P]: Cotangent<P[K]> }
          : P

/** The plain-number structure of a function result made of handles (`Real` → number). */
export type Valued<T> = T extends Real
  ? number
  : T extends readonly unknown[]
    ? { -readonly [K in keyof T]: Valued<T[K]> }
    : T extends object
      ? { -readonly [K in keyof T]: Valued<T[K]> }
      : T

/** A cotangent for a result of handle type `R`: numbers for handles; an array of handles takes a `Float64Array` too. */
export type OutputCotangent<R> = R extends Real
  ? number
  : R extends readonly Real[]
    ? readonly number[] | Float64Array
    : R extends readonly unknown[]
      ? { readonly [K in keyof R]: OutputCotangent<R[K]> }
      : R extends object
        ? { readonly [K in keyof R]: OutputCotangent<R[K]> }
        : R

/** The shape of an input tree. Flat positions (`index`) number the differentiable scalars. */
export type Shape =
  | { kind: 'scalar'; index: number }
  | { kind: 'vector'; index: number; length: number }
  | { kind: 'array'; items: Shape[] }
  | { kind: 'record'; keys: string[]; items: Shape[] }
  | { kind: 'static' }

const isRecord = (v: unknown): v is Record<string, unknown> => {
  if (typeof v !== 'object' || v === null || Array.isArray(v) || ArrayBuffer.isView(v)) return false
  const p = Object.getPrototypeOf(v)
  return p === Object.prototype || p === null
}

/** Describes `value` (numbering its scalars from `start`); returns the shape and the next index. */
export function describe(value: unknown, start: number, path = 'argument'): { shape: Shape; next: number } {
  if (typeof value === 'number') return { shape: { kind: 'scalar', index: start }, next: start + 1 }
  if (value instanceof Float64Array)
    return { shape: { kind: 'vector', index: start, length: value.length }, next: start + value.length }
  if (Array.isArray(value)) {
    const items: Shape[] = []
    let next = start
    value.forEach((v, k) => {
      const d = describe(v, next, `${path}[${k}]`)
      items.push(d.shape)
      next = d.next
    })
    return { shape: { kind: 'array', items }, next }
  }
  if (isRecord(value)) {
    const keys = Object.keys(value)
    const items: Shape[] = []
    let next = start
    for (const k of keys) {
      const d = describe(value[k], next, `${path}.${k}`)
      items.push(d.shape)
      next = d.next
    }
    return { shape: { kind: 'record', keys, items }, next }
  }
  if (
    value === null ||
    value === undefined ||
    typeof value === 'boolean' ||
    typeof value === 'string' ||
    value instanceof Int32Array ||
    value instanceof Uint8Array
  ) {
    return { shape: { kind: 'static' }, next: start }
  }
  if (ArrayBuffer.isView(value))
    throw new DualError(
      'dual/input',
      `${path}: a ${value.constructor.name} is neither differentiable (use a Float64Array) nor a static integer array (Int32Array, Uint8Array)`,
    )
  throw new DualError(
    'dual/input',
    `${path}: expected a number, a Float64Array, an array or a plain record, got ${typeof value === 'object' ? (value.constructor?.name ?? 'object') : typeof value}`,
  )
}

/** The handle structure for a shape (static leaves filled in by `load`). */
export function mirror(shape: Shape): unknown {
  switch (shape.kind) {
    case 'scalar':
      return shape.index + HANDLE_BASE
    case 'vector':
      return Array.from({ length: shape.length }, (_, k) => shape.index + k + HANDLE_BASE)
    case 'array':
      return shape.items.map(mirror)
    case 'record': {
      const o: Record<string, unknown> = {}
      shape.keys.forEach((k, i) => {
        o[k] = mirror(shape.items[i]!)
      })
      return o
    }
    case 'static':
      return undefined
  }
}

/** Whether `value` has exactly this shape (same keys, lengths and leaf kinds); allocates nothing. */
export function matches(shape: Shape, value: unknown): boolean {
  switch (shape.kind) {
    case 'scalar':
      return typeof value === 'number'
    case 'vector':
      return value instanceof Float64Array && value.length === shape.length
    case 'array': {
      if (!Array.isArray(value) || value.length !== shape.items.length) return false
      for (let k = 0; k < value.length; k++) if (!matches(shape.items[k]!, value[k])) return false
      return true
    }
    case 'record': {
      if (!isRecord(value)) return false
      const keys = shape.keys
      let n = 0
      for (const _ in value) n++
      if (n !== keys.length) return false
      for (let k = 0; k < keys.length; k++) {
        const key = keys[k]!
        if (!(key in value) || !matches(shape.items[k]!, value[key])) return false
      }
      return true
    }
    case 'static':
      return !(typeof value === 'number' || value instanceof Float64Array || Array.isArray(value) || isRecord(value))
  }
}

/**
 * Records the scalars of `value` as the arena's input nodes (in flat order) and writes its static
 * leaves into the handle structure `m`. `value` must match `shape`.
 */
export function load(shape: Shape, value: unknown, m: unknown, tape: Tape): void {
  switch (shape.kind) {
    case 'scalar':
      tape.leaf(value as number)
      return
    case 'vector': {
      tape.inputs(value as Float64Array)
      return
    }
    case 'array': {
      const v = value as unknown[],
        mm = m as unknown[]
      for (let k = 0; k < v.length; k++) {
        const s = shape.items[k]!
        if (s.kind === 'static') mm[k] = v[k]
        else load(s, v[k], mm[k], tape)
      }
      return
    }
    case 'record': {
      const v = value as Record<string, unknown>,
        mm = m as Record<string, unknown>
      for (let k = 0; k < shape.keys.length; k++) {
        const s = shape.items[k]!,
          key = shape.keys[k]!
        if (s.kind === 'static') mm[key] = v[key]
        else load(s, v[key], mm[key], tape)
      }
      return
    }
    case 'static':
      return
  }
}

/** A new tree shaped like `value` whose differentiable leaves are `flat[index …]` (static leaves kept). */
export function build(shape: Shape, value: unknown, flat: ArrayLike<number>): unknown {
  switch (shape.kind) {
    case 'scalar':
      return flat[shape.index]!
    case 'vector': {
      const out = new Float64Array(shape.length)
      for (let k = 0; k < shape.length; k++) out[k] = flat[shape.index + k]!
      return out
    }
    case 'array':
      return shape.items.map((s, k) => build(s, (value as unknown[])[k], flat))
    case 'record': {
      const o: Record<string, unknown> = {}
      shape.keys.forEach((key, k) => {
        o[key] = build(shape.items[k]!, (value as Record<string, unknown>)[key], flat)
      })
      return o
    }
    case 'static':
      return value
  }
}

/**
 * Writes `flat[index …]` into an existing tree `out` of the same shape, in place (numbers inside
 * arrays and records are assigned to their parent; `Float64Array`s are filled). Allocates nothing.
 */
export function store(shape: Shape, out: unknown, flat: ArrayLike<number>): void {
  switch (shape.kind) {
    case 'vector': {
      const o = out as Float64Array
      for (let k = 0; k < shape.length; k++) o[k] = flat[shape.index + k]!
      return
    }
    case 'array': {
      const o = out as unknown[]
      for (let k = 0; k < shape.items.length; k++) {
        const s = shape.items[k]!
        if (s.kind === 'scalar') o[k] = flat[s.index]!
        else store(s, o[k], flat)
      }
      return
    }
    case 'record': {
      const o = out as Record<string, unknown>
      for (let k = 0; k < shape.keys.length; k++) {
        const s = shape.items[k]!
        if (s.kind === 'scalar') o[shape.keys[k]!] = flat[s.index]!
        else store(s, o[shape.keys[k]!], flat)
      }
      return
    }
    default:
      return
  }
}

/**
 * The handles of a function's result, in flat order (a handle, or arrays and records of them), and
 * a function rebuilding that structure from per-handle numbers.
 */
export function outputsOf(
  result: unknown,
  top: number,
  path = 'result',
): { handles: number[]; rebuild: (values: (k: number) => unknown) => unknown } {
  const handles: number[] = []
  const walk = (v: unknown, p: string): ((values: (k: number) => unknown) => unknown) => {
    if (typeof v === 'number') {
      checkHandle(v, top, p)
      const k = handles.push(v) - 1
      return (values) => values(k)
    }
    if (Array.isArray(v)) {
      const parts = v.map((x, i) => walk(x, `${p}[${i}]`))
      return (values) => parts.map((f) => f(values))
    }
    if (isRecord(v)) {
      const keys = Object.keys(v)
      const parts = keys.map((key) => walk(v[key], `${p}.${key}`))
      return (values) => {
        const o: Record<string, unknown> = {}
        keys.forEach((key, i) => {
          o[key] = parts[i]!(values)
        })
        return o
      }
    }
    throw new DualError(
      'dual/output',
      `${p}: a dual-engine function must return handles (\`Real\`), or arrays and records of them; got ${v === null ? 'null' : typeof v}`,
    )
  }
  const rebuild = walk(result, path)
  return { handles, rebuild }
}

/** Throws unless `h` is a handle of the current call (catches `return 0` and constants from outside). */
export function checkHandle(h: number, top: number, path: string): void {
  const i = h - HANDLE_BASE
  if (!(Number.isInteger(i) && i >= 0 && i < top)) {
    throw new DualError(
      'dual/not-a-handle',
      `${path}: ${h} is not a handle of this call; wrap constants with \`d.constant(c)\` and compute results with \`d\``,
    )
  }
}

/** Reads the cotangent tree `cot` (numbers, arrays or Float64Arrays, records) in the order of `outputsOf`. */
export function flattenCotangent(cot: unknown, result: unknown, out: number[], path = 'cotangent'): void {
  if (typeof result === 'number') {
    if (typeof cot !== 'number') throw new DualError('dual/cotangent', `${path}: expected a number, got ${typeof cot}`)
    out.push(cot)
    return
  }
  if (Array.isArray(result)) {
    const c = cot as ArrayLike<unknown>
    if (!(Array.isArray(c) || c instanceof Float64Array) || c.length !== result.length)
      throw new DualError('dual/cotangent', `${path}: expected an array of length ${result.length}`)
    for (let k = 0; k < result.length; k++) flattenCotangent(c[k], result[k], out, `${path}[${k}]`)
    return
  }
  const r = result as Record<string, unknown>
  if (!isRecord(cot))
    throw new DualError('dual/cotangent', `${path}: expected a record with keys ${Object.keys(r).join(', ')}`)
  for (const key of Object.keys(r)) flattenCotangent(cot[key], r[key], out, `${path}.${key}`)
}

/** Writes the differentiable leaves of `value` (which matches `shape`) into `flat[index …]`; allocates nothing. */
export function gather(shape: Shape, value: unknown, flat: Float64Array): void {
  switch (shape.kind) {
    case 'scalar':
      flat[shape.index] = value as number
      return
    case 'vector': {
      const v = value as Float64Array,
        at = shape.index,
        n = shape.length
      if (n > 32) flat.set(v, at)
      else for (let k = 0; k < n; k++) flat[at + k] = v[k]!
      return
    }
    case 'array': {
      const v = value as unknown[]
      for (let k = 0; k < shape.items.length; k++) gather(shape.items[k]!, v[k], flat)
      return
    }
    case 'record': {
      const v = value as Record<string, unknown>
      for (let k = 0; k < shape.keys.length; k++) gather(shape.items[k]!, v[shape.keys[k]!], flat)
      return
    }
    case 'static':
      return
  }
}

/** Whether a shape has static leaves (booleans, strings, integer arrays, null). */
export function hasStatic(shape: Shape): boolean {
  if (shape.kind === 'static') return true
  if (shape.kind === 'array' || shape.kind === 'record') return shape.items.some(hasStatic)
  return false
}
