/**
 * "Tenet (wasm, checks on)": the objective rows of `tenet.ts` on the wasm backend with the
 * run-time reversibility checks kept (`withBackend('wasm')` and `withChecks(true)` around every
 * row's setup, so every `compile` makes a checked wasm module, in caches of its own), for issue
 * 29's goal of a forward run within 2× of plain TS with checks on, on wasm as on cpu. Each row is
 * the cpu row itself (same arguments, same check against the same reference), from a fourth
 * instance of `tenet.ts` so that its closures keep V8 feedback of their own (see `tenet-wasm.ts`).
 */
import { defineRowFamily } from '../harness/registry.js'
import { withBackend, withChecks } from '../tenet/compile.js'
import type * as CpuRows from './tenet.js'
import { checkedObjectiveRows } from './tenet-checks.js'

/** The family and row-name prefix of the checked wasm rows. */
export const TENET_WASM_CHECKS_ROW = 'Tenet (wasm, checks on)'

const FOURTH_INSTANCE = './tenet.js?instance=wasm-checks'
const copy = (await import(FOURTH_INSTANCE)) as typeof CpuRows

export const tenetWasmChecksRows = defineRowFamily({
  family: TENET_WASM_CHECKS_ROW,
  rows: checkedObjectiveRows(copy, TENET_WASM_CHECKS_ROW, (setup) =>
    withBackend('wasm', () => withChecks(true, setup)),
  ),
})
