/**
 * "Tenet (cpu, checks on)": the objective rows of `tenet.ts` with the run-time reversibility
 * checks kept (`withChecks`: every `compile` of the row's setup compiles with `checks: true`, in
 * caches of their own), for issue 29's goal of a forward run within 2× of plain TS with checks
 * on. Each row is the cpu row itself (same arguments, same check against the same reference),
 * from a third instance of `tenet.ts` so that its closures keep V8 feedback of their own (see
 * `tenet-wasm.ts`).
 */
import { defineRowFamily } from '../harness/registry.js'
import { withChecks } from '../tenet/compile.js'
import type * as CpuRows from './tenet.js'

/** The family and row-name prefix of the checked rows. */
export const TENET_CHECKS_ROW = 'Tenet (cpu, checks on)'

const THIRD_INSTANCE = './tenet.js?instance=checks'
const copy = (await import(THIRD_INSTANCE)) as typeof CpuRows

/**
 * The objective rows of an instance of \`tenet.ts\` as the rows of \`family\` (renamed, each
 * setup run inside \`wrap\`, which sets the options every \`compile\` of the setup uses): the
 * checked rows of the cpu and wasm backends.
 */
export function checkedObjectiveRows(
  instance: typeof CpuRows,
  family: string,
  wrap: <T>(setup: () => T) => T,
): typeof CpuRows.tenetRows.rows {
  return Object.fromEntries(
    Object.entries(instance.tenetRows.rows)
      .map(([id, rows]) => [
        id,
        rows!
          .filter((row) => row.kind === 'objective')
          .map((row) => ({
            ...row,
            name: row.name.replace(instance.TENET_ROW, family),
            family,
            setup: (c: never) => wrap(() => row.setup(c)),
          })),
      ])
      .filter(([, rows]) => rows!.length > 0),
  ) as typeof CpuRows.tenetRows.rows
}

export const tenetChecksRows = defineRowFamily({
  family: TENET_CHECKS_ROW,
  rows: checkedObjectiveRows(copy, TENET_CHECKS_ROW, (setup) => withChecks(true, setup)),
})
