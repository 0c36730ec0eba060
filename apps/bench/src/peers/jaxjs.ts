/**
 * jax-js on its `wasm` device. Notes that matter for the figures:
 * - jax-js 0.1.25 touches `Float16Array`, which Node 20 lacks: a minimal stand-in is installed
 *   on `globalThis` before the import (only used for float16 data, which the suite never makes);
 * - constants must be passed as Float64Array arrays: its `jit` rounds JS number literals to f32;
 * - its wasm device evaluates exp/log in single precision, so its float64 results carry about
 *   1e-7 relative error in transcendental-heavy workloads (reported beside each time).
 * - arrays follow move semantics: every use consumes, `.ref` keeps a reference.
 */
export type Jax = typeof import('@jax-js/jax')

let loading: Promise<Jax> | undefined

export function loadJax(): Promise<Jax> {
  loading ??= (async () => {
    const g = globalThis as { Float16Array?: unknown }
    if (typeof g.Float16Array === 'undefined') {
      g.Float16Array = class Float16Array extends Float32Array {}
    }
    const jax = await import('@jax-js/jax')
    const devices = await jax.init('wasm')
    if (!devices.includes('wasm')) throw new Error(`jax-js: wasm device unavailable (have ${devices.join(', ')})`)
    jax.defaultDevice('wasm')
    return jax
  })()
  return loading
}

export const JAX_ROW = 'jax-js (wasm)'

/** Tolerance for jax-js: float64 storage, single-precision exp/log on wasm. */
export const JAX_TOLERANCE = 1e-5
