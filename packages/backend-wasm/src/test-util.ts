/** Helpers of the lane tests (not part of the build). */
import { expect } from 'vitest'
import { createRegistry, parse } from '@tenet/ir'
import { compileModule } from '@tenet/reversible'
import { cpuBackend } from '@tenet/backend-cpu'
import { createWasmBackend, type WasmProgram } from './index.js'
import type { MathChoice } from './math/index.js'

/** Lane pairs emitted by the last wasm compilation of `compile`. */
export let lastPairs = -1
/** Map loops run in lanes by the last wasm compilation of `compile`. */
export let lastMapLanes = -1
/** Elements runs keep in locals in the last wasm compilation of `compile`. */
export let lastRunElements = -1

/** Compiles `text` for a backend ('wasm' with or without SIMD, and a math choice, or 'cpu'), recording `lastPairs`. */
export const compile = (text: string, backend: string, checks = false, simd = true, math?: MathChoice) => {
  const spec = createWasmBackend({ simd, ...(math ? { math } : {}) })
  const wasm = {
    ...spec,
    doCompile: (...a: Parameters<typeof spec.doCompile>) => {
      const p = spec.doCompile(...a) as WasmProgram
      lastPairs = p.lanePairs
      lastMapLanes = p.mapLanes
      lastRunElements = p.runElements
      return p
    },
  }
  return compileModule(parse({ text, name: 'lanes' }), {
    registry: createRegistry().registerBackend(cpuBackend).registerBackend(wasm),
    backend,
    checks,
  })
}

/** A number as text that tells −0 from 0 and keeps NaN (whose payload bits wasm leaves open). */
export const exact = (v: unknown) => (typeof v !== 'number' ? v : Object.is(v, -0) ? '-0' : Number.isNaN(v) ? 'NaN' : v)

/** Runs f of each module forwards and then backwards on fresh arguments: all the same bits. */
export function expectSameRuns(modules: Array<ReturnType<typeof compile>>, args: () => unknown[]): void {
  const results = modules.map((m) => {
    const fwd = m.f!(...args()) as unknown[]
    const back = m.f!.inverse(...fwd) as unknown[]
    return JSON.stringify(
      [fwd, back].map((r) => r.map((v) => (ArrayBuffer.isView(v) ? Array.from(v as Float64Array, exact) : exact(v)))),
    )
  })
  for (const r of results.slice(1)) expect(r).toBe(results[0])
}
