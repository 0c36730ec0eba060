import type { RowFamily } from '../harness/registry.js'
import { jaxRows } from './jaxjs.js'
import { parallelRows } from './parallel.js'
import { tenetRows, tenetWasmRows } from './tenet.js'
import { tfRows } from './tfjs.js'
import { adapterRows } from './adapter.js'

/**
 * The row families beyond each workload's own plain-TS rows. Adding an engine is
 * one file under `src/rows/` exporting a `defineRowFamily(...)`, plus one entry here.
 */
export const ROW_FAMILIES: RowFamily[] = [tenetRows, tenetWasmRows, tfRows, jaxRows, parallelRows]
// TF.js with Tenet's adjoints plugged in (@tenet/adapter-tfjs), and TF.js's own norm gradient
ROW_FAMILIES.push(adapterRows)
