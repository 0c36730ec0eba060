import { createRegistry, rev, TENET_FUNCTION, type TenetFunction, type TenetModule } from 'tenet'
import { wasmBackend } from '@tenet/backend-wasm'

/** The backends the Tenet rows run on: generated JavaScript, or a WebAssembly module. */
export type BenchBackend = 'cpu' | 'wasm'

let current: BenchBackend = 'cpu'
/** The backend `compile` uses now (a row family sets it around its rows' setup). */
export const benchBackend = (): BenchBackend => current

let checksOn = false
/** Whether `compile` keeps the run-time reversibility checks now (a row family sets it around its rows' setup). */
export const benchChecks = (): boolean => checksOn

/**
 * The key of the compiled-module caches: the backend, and whether the checks are on (a module
 * compiled with checks is a different module).
 */
export const benchTarget = (): string => (checksOn ? `${current}+checks` : current)

/** Runs `f` with the run-time checks `on` (or off) in every `compile` it makes. */
export function withChecks<T>(on: boolean, f: () => T): T {
  const before = checksOn
  checksOn = on
  try {
    return f()
  } finally {
    checksOn = before
  }
}

/** Runs `f` with `backend` as the backend of every `compile` it makes (caches are per backend). */
export function withBackend<T>(backend: BenchBackend, f: () => T): T {
  const before = current
  current = backend
  try {
    return f()
  } finally {
    current = before
  }
}

const wasmRegistry = createRegistry().registerBackend(wasmBackend)
/** The fast path: no run-time reversibility checks. */
export const fast = rev.with({ checks: false })

/**
 * Compile Tenet source text given as a string (not a template), on the current backend, with the
 * run-time checks off unless a caller (or `withChecks`) asks for them.
 */
export function compile(source: string, checks = checksOn): TenetModule {
  const tag = current === 'wasm' ? rev.with({ checks, backend: 'wasm', registry: wasmRegistry }) : checks ? rev : fast
  return tag(Object.assign([source], { raw: [source] }) as unknown as TemplateStringsArray)
}

/** A function of a module, or a clear error. */
export function fn(m: TenetModule, name: string): TenetFunction {
  const f = m[name]
  if (!f) throw new Error(`Tenet module has no function \`${name}\``)
  return f
}

/** The compiled JavaScript of a function (for looking at what the cpu backend generated). */
export function generatedSource(f: TenetFunction, name = f.name): string {
  const info = f[TENET_FUNCTION]
  return info.compiled.sourceOf?.(name, false) ?? ''
}
