import type { Row, Workload } from './types.js'
import { WORKLOADS, type WorkloadCaseMap, type WorkloadId } from '../workloads/index.js'

/**
 * A row family: one engine's rows for any workloads it can express, in one file under
 * `src/rows/`. Typed against {@link WorkloadCaseMap}, so a row receives its workload's case.
 */
export interface RowFamily {
  family: string
  rows: { [K in WorkloadId]?: Row<WorkloadCaseMap[K]>[] }
}

export function defineRowFamily(family: RowFamily): RowFamily {
  for (const rows of Object.values(family.rows)) for (const row of rows ?? []) row.family ??= family.family
  return family
}

/** The workloads with every family's rows appended (selected ids only, in registry order). */
export function assembleWorkloads(families: readonly RowFamily[], ids?: readonly string[]): Workload[] {
  const known = Object.keys(WORKLOADS)
  for (const id of ids ?? [])
    if (!known.includes(id)) throw new Error(`unknown workload "${id}"; available: ${known.join(', ')}`)
  const out: Workload[] = []
  for (const id of known as WorkloadId[]) {
    if (ids && ids.length > 0 && !ids.includes(id)) continue
    const w = WORKLOADS[id] as Workload
    const extra = families.flatMap((f) => (f.rows[id] ?? []) as Row<unknown>[])
    out.push({ ...w, rows: [...w.rows, ...extra] })
  }
  return out
}
