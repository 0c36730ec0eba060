/**
 * "Tenet (wasm)" twins of the Tenet rows that live outside `tenet.ts`: seed 003's Table 1
 * (workload `dual`, `table1-tenet.ts`), the norm gradient (`adapter.ts`) and the store-all
 * gradient of the diffusion chain (workload `checkpoint`). Each twin is the cpu row itself, run
 * with `wasm` as the backend of every `compile` its setup makes (`withBackend`), so it computes
 * the same thing with the same arguments and passes the same check against the same reference.
 *
 * As in `tenet-wasm.ts`, the dual and norm twins are the rows of second instances of their
 * modules (imported again under another URL), so that their closures have V8 feedback of their
 * own rather than call sites made polymorphic by the cpu row measured before them. The checkpoint
 * rows take a compiled step from their case, so the twin hands its setup a case whose step is
 * the same Tenet source compiled on wasm.
 */
import { TENET_FUNCTION, type TenetFunction } from 'tenet'
import { defineRowFamily } from '../harness/registry.js'
import type { Row } from '../harness/types.js'
import { compile, fn, withBackend } from '../tenet/compile.js'
import { type ChainCase, checkpointRows, diffusionSource } from '../workloads/checkpoint.js'
import type * as AdapterRows from './adapter.js'
import type * as Table1Rows from './table1-tenet.js'
import { TENET_ROW, TENET_WASM_ROW } from './tenet.js'

/** The family of every wasm twin (the quick suite's row filter `(wasm` selects it). */
export const TENET_WASM_FAMILY = 'Tenet (wasm)'

/**
 * A cpu row as a wasm row: named `name`, in the family "Tenet (wasm)", its setup run with `wasm`
 * as the bench backend (`withBackend`). Its `run` and `check` are the cpu row's own: the twin
 * is checked against the same reference before it is timed.
 */
export function wasmTwin<C>(
  row: Row<C>,
  name: string,
  setup: (c: C) => ReturnType<Row<C>['setup']> = row.setup,
): Row<C> {
  return { ...row, name, family: TENET_WASM_FAMILY, setup: (c: C) => withBackend('wasm', () => setup(c)) }
}

/** "Tenet (cpu) …" → "Tenet (wasm) …"; a name without the backend ("Tenet store-all") gets it after "Tenet". */
export function wasmName(cpuName: string): string {
  return cpuName.includes(TENET_ROW)
    ? cpuName.replace(TENET_ROW, TENET_WASM_ROW)
    : cpuName.replace(/^Tenet\b/, TENET_WASM_ROW)
}

const table1 = (await import('./table1-tenet.js?instance=wasm' as string)) as typeof Table1Rows
const adapter = (await import('./adapter.js?instance=wasm' as string)) as typeof AdapterRows

/** The diffusion step compiled on wasm (once per process, on first use). */
let wasmDiffusion: TenetFunction | undefined
/** The checkpoint workload's diffusion step on the wasm backend. */
export function diffusionOnWasm(): TenetFunction {
  wasmDiffusion ??= withBackend('wasm', () => fn(compile(diffusionSource), 'diffusion'))
  return wasmDiffusion
}

/** The backend a Tenet function was compiled with. */
export function backendOf(f: TenetFunction): string {
  return f[TENET_FUNCTION].options.backend ?? 'cpu'
}

/** Which checkpoint schedules get a wasm twin: store-all (the quick suite's chain row). */
const CHECKPOINT_TWINS = ['Tenet store-all']

export const tenetWasmTwinRows = defineRowFamily({
  family: TENET_WASM_FAMILY,
  rows: {
    dual: table1.table1TenetRows.rows.dual!.map((row) => wasmTwin(row, wasmName(row.name))),
    norm: adapter.adapterRows.rows
      .norm!.filter((row) => row.name === TENET_ROW)
      .map((row) => wasmTwin(row, wasmName(row.name))),
    checkpoint: checkpointRows
      .filter((row) => CHECKPOINT_TWINS.includes(row.name))
      .map((row) => wasmTwin(row, wasmName(row.name), (c: ChainCase) => row.setup({ ...c, step: diffusionOnWasm() }))),
  },
})
