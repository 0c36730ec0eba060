import type { RowFamily } from '../harness/registry.js'
import { jaxRows } from './jaxjs.js'
import { parallelRows } from './parallel.js'
import { tenetRows } from './tenet.js'
import { tenetWasmRows } from './tenet-wasm.js'
import { tfRows } from './tfjs.js'
import { adapterRows } from './adapter.js'
import { dualRows } from './dual.js'
import { table1JaxRows, table1TfRows } from './table1-peers.js'
import { table1TenetRows } from './table1-tenet.js'
import { unfPeerRows } from './unf-peers.js'
import { webgpuRows } from './webgpu.js'
import { jaxWebgpuRows } from './jaxjs-webgpu.js'
import { tenetHigherOrderRows } from './tenet-higher-order.js'
import { tenetWasmTwinRows } from './tenet-wasm-twins.js'
import { tenetChecksRows } from './tenet-checks.js'
import { tenetWasmChecksRows } from './tenet-wasm-checks.js'

/**
 * The row families beyond each workload's own plain-TS rows. Adding an engine is
 * one file under `src/rows/` exporting a `defineRowFamily(...)`, plus one entry here.
 */
export const ROW_FAMILIES: RowFamily[] = [tenetRows, tenetWasmRows, tfRows, jaxRows, parallelRows]
// TF.js with Tenet's adjoints plugged in (@tenet/adapter-tfjs), and TF.js's own norm gradient
ROW_FAMILIES.push(adapterRows)
// the dual-numbers engine as the tape row (@tenet/dual)
ROW_FAMILIES.push(dualRows)
// TF.js and jax-js on seed 003's Table 1 (workload `dual`)
ROW_FAMILIES.push(table1TfRows, table1JaxRows)
// Tenet's reversible version where it is natural (workload `dual`)
ROW_FAMILIES.push(table1TenetRows)
// the UNF engine's rows and its peers on its workload (@tenet/unf)
ROW_FAMILIES.push(unfPeerRows)
// Tenet on WebGPU (@tenet/backend-webgpu; emulated where the adapter is SwiftShader)
ROW_FAMILIES.push(webgpuRows)
// Taylor mode, nested tangents and the second-order adjoint (Bessel, graph embedding)
ROW_FAMILIES.push(tenetHigherOrderRows)
// jax-js on its webgpu device (float32; emulated where the adapter is SwiftShader)
ROW_FAMILIES.push(jaxWebgpuRows)
// Tenet on wasm for the Tenet rows outside tenet.ts: Table 1 (`dual`), the norm, the store-all chain
ROW_FAMILIES.push(tenetWasmTwinRows)
// the Tenet objectives with the run-time reversibility checks on (issue 29: forward ≤ 2× with checks)
ROW_FAMILIES.push(tenetChecksRows)
// the Tenet objectives on wasm with the run-time reversibility checks on (issue 29: forward ≤ 2× with checks)
ROW_FAMILIES.push(tenetWasmChecksRows)
