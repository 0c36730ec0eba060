/** Helpers of the lane tests (not part of the build). */
import { expect } from 'vitest'
import { check, createRegistry, parse, printFunction, type FunctionDef, type Registry } from '@tenet/ir'
import { compileModule, interpreterBackend, preprocess } from '@tenet/reversible'
import { besselSource } from '@tenet/testing'
import { cpuBackend } from '@tenet/backend-cpu'
import { createWasmBackend, wasmBackend, type WasmOptions, type WasmProgram } from './index.js'
import type { MathChoice } from './math/index.js'

/** Lane pairs emitted by the last wasm compilation of `compile`. */
export let lastPairs = -1
/** Map loops run in lanes by the last wasm compilation of `compile`. */
export let lastMapLanes = -1
/** Map loops run two pairs at a time (lane quads) by the last wasm compilation of `compile`. */
export let lastLaneQuads = -1
/** Elements runs keep in locals in the last wasm compilation of `compile`. */
export let lastRunElements = -1
/** Loop-uniform names kept in scalar locals by the last wasm compilation of `compile`. */
export let lastLoopUniform = -1
/** Powers with a uniform run-time exponent decided once for both lanes in the last wasm compilation of `compile`. */
export let lastUniformPowers = -1
/** Pairs of adjacent block elements loaded and stored as whole v128s by the last wasm compilation of `compile`. */
export let lastBlockPairs = -1
/** Gathered blocks read from their lanes' bases in the last wasm compilation of `compile`. */
export let lastGatheredBlocks = -1
/** sin/cos calls in lanes that read an earlier branch's values in the last wasm compilation of `compile`. */
export let lastLaneSincosReused = -1
/** Divisions and math calls in lanes that read an earlier branch's values in the last wasm compilation of `compile`. */
export let lastLaneValuesReused = -1
/** With checks on, the functions and inverses whose map loop of series pass `pair-series` grouped in the last wasm compilation of `compile`. */
export let lastCheckedSeries = -1
/** Without checks, the loops whose tail `split-tails.ts` split off in the last wasm compilation of `compile`. */
export let lastSplitTails = -1
/** Array allocations that skip their zeroing in the last wasm compilation of `compile` (see \`ZeroingSite\`). */
export let lastUnzeroedTables = -1
/** Loop-carried elements kept in locals only, their stores dropped, in the last wasm compilation of `compile` (see \`deadCarriedStores\`). */
export let lastCarriedStores = -1
/** The math routines of the module of the last wasm compilation of `compile`. */
export let lastRoutines: readonly string[] = []

/** Compiles `text` for a backend ('wasm' with or without SIMD, and a math choice, 'cpu' or 'interpreter'), recording `lastPairs`. */
export const compile = (
  text: string,
  backend: string,
  checks = false,
  simd = true,
  math?: MathChoice,
  options: WasmOptions = {},
) => {
  const spec = createWasmBackend({ ...options, simd, ...(math ? { math } : {}) })
  const wasm = {
    ...spec,
    doCompile: (...a: Parameters<typeof spec.doCompile>) => {
      const p = spec.doCompile(...a) as WasmProgram
      lastPairs = p.lanePairs
      lastMapLanes = p.mapLanes
      lastLaneQuads = p.laneQuads
      lastRunElements = p.runElements
      lastCarriedStores = p.carriedStores
      lastLoopUniform = p.loopUniform
      lastUniformPowers = p.uniformPowers
      lastBlockPairs = p.blockPairs
      lastGatheredBlocks = p.gatheredBlocks
      lastLaneSincosReused = p.laneSincosReused
      lastLaneValuesReused = p.laneValuesReused
      lastRoutines = p.mathRoutines
      lastCheckedSeries = p.checkedSeries
      lastSplitTails = p.splitTails
      lastUnzeroedTables = p.unzeroedTables
      return p
    },
  }
  return compileModule(parse({ text, name: 'lanes' }), {
    registry: createRegistry().registerBackend(cpuBackend).registerBackend(wasm).registerBackend(interpreterBackend),
    backend,
    checks,
  })
}

/** A number as text that tells −0 from 0 and keeps NaN (whose payload bits wasm leaves open). */
export const exact = (v: unknown) => (typeof v !== 'number' ? v : Object.is(v, -0) ? '-0' : Number.isNaN(v) ? 'NaN' : v)

/** f of a compiled module forwards on \`args\`, then its inverse on the result, as one string of exact numbers. */
export function forwardAndBack(m: ReturnType<typeof compileModule>, args: unknown[]): string {
  const fwd = m.f!(...args) as unknown[]
  const back = m.f!.inverse(...fwd) as unknown[]
  return JSON.stringify(
    [fwd, back].map((r) => r.map((v) => (ArrayBuffer.isView(v) ? Array.from(v as Float64Array, exact) : exact(v)))),
  )
}

/** Runs f of each module forwards and then backwards on fresh arguments: all the same bits. */
export function expectSameRuns(modules: Array<ReturnType<typeof compile>>, args: () => unknown[]): void {
  const results = modules.map((m) => forwardAndBack(m, args()))
  for (const r of results.slice(1)) expect(r).toBe(results[0])
}

/** A registry with the cpu, wasm (default options) and interpreter backends: the pass tests' engines. */
export const passRegistry = () =>
  createRegistry().registerBackend(cpuBackend).registerBackend(wasmBackend).registerBackend(interpreterBackend)

/** Whether an IR pass (\`tabulate\`, \`forward-pure-values\`, … : function, registry, effectful functions, writes) changes \`f\` of \`source\`. */
export function passChanges(
  source: string,
  pass: (f: FunctionDef, registry: Registry, effectful: Set<string>, writes: Map<string, boolean[]>) => FunctionDef,
): boolean {
  const m = parse({ text: source, name: 'p' })
  const reg = createRegistry()
  const p = check(m.functions.map(preprocess), m.hosts, reg)
  const f = p.functions.get('f')!
  return printFunction(pass(f, reg, new Set(), p.writes)) !== printFunction(f)
}

/** The paper's Bessel J_ν(z) (seed 001) with the approximate multiplier, mapped over a batch. */
export const bessel = `${besselSource}
fn f(out: f64[], nu: i32, z: f64[]) {
  for i in 0..len(z) { ibesselj(out[i], nu, z[i]) }
}`

/** Runs f of each module forwards on fresh arguments: the same bits (arrays and scalar results). */
export function expectSameForward(modules: Array<ReturnType<typeof compile>>, args: () => unknown[]): void {
  const results = modules.map((m) => {
    const a = args()
    const fwd = m.f!(...a) as unknown[]
    return JSON.stringify(fwd.map((v) => (ArrayBuffer.isView(v) ? Array.from(v as Float64Array, exact) : exact(v))))
  })
  for (const r of results.slice(1)) expect(r).toBe(results[0])
}
