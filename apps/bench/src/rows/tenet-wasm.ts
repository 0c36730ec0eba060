/**
 * The Tenet rows on the wasm backend: every row's setup compiles its programs with
 * `backend: 'wasm'` (the caches are per backend), and the row is named "Tenet (wasm)". A program
 * the wasm backend does not lower (stacks, fixed-point) fails its setup, which the report shows.
 *
 * The rows are those of a second instance of `tenet.ts` (imported again under another URL), not
 * the cpu family's own functions: V8 keeps one feedback vector for all closures made from one
 * function literal, so a cpu row's `run` closure and its wasm twin shared theirs, and the wasm
 * row's calls went through call sites and property loads made polymorphic by the cpu row measured
 * before it (the single-z Bessel objective on wasm measured 55 ns after the cpu rows, 37 ns without
 * them). With its own instance each family's closures have their own feedback.
 */
import { defineRowFamily } from '../harness/registry.js'
import { withBackend } from '../tenet/compile.js'
import type * as CpuRows from './tenet.js'

/** The specifier of the second instance (relative, so that Node and Vite resolve it alike). */
const SECOND_INSTANCE = './tenet.js?instance=wasm'
const copy = (await import(SECOND_INSTANCE)) as typeof CpuRows
const { TENET_ROW, TENET_WASM_ROW } = copy

/** The cpu rows of the second instance, which the wasm rows run (not `tenet.ts`'s own `tenetRows`). */
export const secondInstanceRows = copy.tenetRows

export const tenetWasmRows = defineRowFamily({
  family: 'Tenet (wasm)',
  rows: Object.fromEntries(
    Object.entries(secondInstanceRows.rows).map(([id, rows]) => [
      id,
      rows!.map((row) => ({
        ...row,
        name: row.name.replace(TENET_ROW, TENET_WASM_ROW),
        family: 'Tenet (wasm)',
        setup: (c: never) => withBackend('wasm', () => row.setup(c)),
      })),
    ]),
  ) as typeof secondInstanceRows.rows,
})
