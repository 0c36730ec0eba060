import { createRegistry as createBaseRegistry, parse, withStackGuard, type Module, type Registry } from '@tenet/ir'
import { compileModule, interpreterBackend, type TenetModule } from '@tenet/reversible'
import { cpuBackend } from '@tenet/backend-cpu'
import { registerNumbers } from '@tenet/numbers'
import type { ModuleOf, SignatureMap, TypedModule } from './typed.js'

/**
 * A new registry with the standard instruction set, the standard number systems (f64, f32, i32,
 * bool), the number systems of `@tenet/numbers` (complex, fixed, ulog, tropical) and the `cpu`
 * and `interpreter` backends. Register your own primitives into it and pass it to
 * `rev.with({ registry })`.
 */
export function createRegistry(): Registry {
  return registerNumbers(createBaseRegistry()).registerBackend(cpuBackend).registerBackend(interpreterBackend)
}

/** The registry `rev` uses unless told otherwise. */
export const defaultRegistry: Registry = createRegistry()

/** Options of `rev.with(...)`. */
export interface RevOptions {
  /** `'cpu'` (default: generated JavaScript) or `'interpreter'` (no eval), or any registered backend. */
  backend?: 'cpu' | 'interpreter' | (string & {})
  /** Run-time reversibility checks (default true). */
  checks?: boolean
  /** Tolerance of float deallocation checks (default 1e-8). */
  tolerance?: number
  /** The registry to resolve primitives, number systems and backends in (default `defaultRegistry`). */
  registry?: Registry
}

/** The `rev` tag: compiles Tenet source into a module of reversible functions. */
export interface Rev {
  (strings: TemplateStringsArray, ...values: unknown[]): TenetModule
  /**
   * The tag with a declared signature map, ``rev<{ f: [number, Float64Array] }>`fn f(…) { … }` ``:
   * the module has exactly those functions, with those argument (and result) types.
   */
  <M extends SignatureMap>(strings: TemplateStringsArray, ...values: unknown[]): TypedModule<M>
  /**
   * Compiles source text given as a string literal; TypeScript reads the signatures from it, so
   * `rev.typed('fn f(y: f64, x: f64[]) { … }').f` is typed `(y: number, x: Float64Array) =>
   * [number, Float64Array]`, and an unknown function name or a wrong argument is a compile error.
   */
  typed<const S extends string>(source: S): ModuleOf<S>
  /** The same tag with other options: ``rev.with({ backend: 'interpreter' })`...` ``. */
  with(options: RevOptions): Rev
  /** Compiles a module built with the builder API (`build.fn(...)`). */
  fromIR(module: Module): TenetModule
}

function makeRev(options: RevOptions): Rev {
  const registry = options.registry ?? defaultRegistry
  const config = {
    registry,
    ...(options.backend ? { backend: options.backend } : {}),
    ...(options.checks !== undefined ? { checks: options.checks } : {}),
    ...(options.tolerance !== undefined ? { tolerance: options.tolerance } : {}),
  }
  const tag = (strings: TemplateStringsArray, ...values: unknown[]): TenetModule => {
    // the raw text, as written: the cooked strings are undefined after an escape JavaScript
    // rejects (`\u`, `\x` in a comment) and turn `\n` into a line break inside a string literal
    const parts = strings.raw ?? strings
    let text = parts[0] ?? ''
    for (let i = 0; i < values.length; i++) text += '${' + i + '}' + (parts[i + 1] ?? '')
    return withStackGuard('compiling a rev template', () =>
      compileModule(parse({ text, name: 'rev template' }, values), config),
    )
  }
  return Object.assign(tag as Rev, {
    typed: <const S extends string>(source: S) =>
      withStackGuard('compiling a rev.typed source', () =>
        compileModule(parse({ text: source, name: 'rev.typed source' }), config),
      ) as unknown as ModuleOf<S>,
    with: (more: RevOptions) => makeRev({ ...options, ...more }),
    fromIR: (module: Module) => withStackGuard('compiling a module', () => compileModule(module, config)),
  })
}

/**
 * Compiles reversible functions written in Tenet syntax:
 * ```ts
 * const m = rev`fn f(y: f64, x: f64) { y += x * x }`
 * m.f(0, 3)          // [9, 3]
 * m.f.inverse(9, 3)  // [0, 3]
 * ```
 */
export const rev: Rev = makeRev({})
