/**
 * Types at the host boundary: TypeScript reads the signatures of the functions in a Tenet
 * source given as a string literal, so a compiled module knows its function names, their
 * argument types and their result types (`m.typo()` and `m.f(1)` for a two-argument `f` are
 * compile errors). The same mapping serves a declared signature map (`rev<{ f: [number] }>`).
 *
 * Host types, as the runtime converts them: `f64`, `f32`, `i32`, `fixed`, `ulog`, `tropical` →
 * `number`; `bool` → `boolean`; `complex` → `{ re, im }`; arrays → their typed array
 * (`f64[]` → `Float64Array`, `f32[]` → `Float32Array`, `i32[]` → `Int32Array`, `bool[]` →
 * `Uint8Array`, arrays of the other number systems and `complex[]` (interleaved) →
 * `Float64Array`); a stack → `number[]`.
 */
import type { TenetFunction } from '@tenet/reversible'

type Space = ' ' | '\n' | '\t' | '\r'
/** `S` without leading and trailing white space. */
export type Trim<S extends string> = S extends `${Space}${infer R}`
  ? Trim<R>
  : S extends `${infer R}${Space}`
    ? Trim<R>
    : S

/** The host type of a Tenet type name (as written in a parameter list). */
export type HostType<T extends string> = T extends 'f64' | 'f32' | 'i32' | 'fixed' | 'ulog' | 'tropical'
  ? number
  : T extends 'bool'
    ? boolean
    : T extends 'complex'
      ? { re: number; im: number }
      : T extends 'f32[]'
        ? Float32Array
        : T extends 'i32[]'
          ? Int32Array
          : T extends 'bool[]'
            ? Uint8Array
            : T extends `${string}[]`
              ? Float64Array
              : T extends `stack<${string}>`
                ? number[]
                : unknown

/** The host type of one parameter (`name: type`). */
type ParamType<P extends string> = P extends `${string}:${infer T}` ? HostType<Trim<T>> : unknown

/** The host types of a parameter list (`y: f64, x: f64[]`), in order. */
export type ParamTypes<S extends string> =
  Trim<S> extends '' ? [] : S extends `${infer P},${infer Rest}` ? [ParamType<P>, ...ParamTypes<Rest>] : [ParamType<S>]

/** The name and parameter list of every `fn name(params)` in a source, as a map. */
export type Signatures<S extends string> = S extends `${string}fn ${infer Name}(${infer Params})${infer Rest}`
  ? { [K in Trim<Name>]: ParamTypes<Params> } & Signatures<Rest>
  : unknown

/** A map from function names to argument types (results have the same types, in order). */
export type SignatureMap = Record<string, unknown[]>

/** A compiled module whose functions are typed by a signature map. */
export type TypedModule<M> = { readonly [K in keyof M]: M[K] extends unknown[] ? TenetFunction<M[K], M[K]> : never }

/** Flattens an intersection of objects into one object type (for readable hovers). */
type Flatten<T> = { [K in keyof T]: T[K] }

/** The typed module of a Tenet source given as a string literal type. */
export type ModuleOf<S extends string> = TypedModule<Flatten<Signatures<S>>>
