/**
 * The child side of \`runIsolated\` (\`isolate.ts\`): one job per process — make a case, time its
 * baseline unless the parent has it, then run the job's rows in order, reading this process's
 * stdout (where V8 reports protector invalidations) before each row, and stop before a row that
 * must not follow an invalidation; or run a workload's study. Results go to the parent over IPC.
 */
import { blackBox } from './black-box.js'
import { protectorLog } from './protectors.js'
import {
  type BaselineTiming,
  type CaseResult,
  errorText,
  memorySampler,
  overBudget,
  prepareBaseline,
  type RowResult,
  runRow,
  timeBaseline,
  type WorkloadResult,
} from './runner.js'
import type { CaseOptions, StudyResult, Workload } from './types.js'
import { type MeasureOptions, pairedEnabled } from './measure.js'

/** One job: a case (its baseline unless given, then the rows in this order) or a workload's study. */
export interface Job {
  selection: unknown
  workload: string
  /** the case's index, or -1 for the study */
  caseIndex: number
  caseLabel?: string
  caseOptions: CaseOptions
  measure: MeasureOptions
  baseline?: BaselineTiming
  rows: Array<{ index: number; known: boolean }>
  /** ms of the time budget left when the job was sent */
  budgetLeftMs?: number
  budgetMs?: number
  log: string
}

export type ChildMessage =
  | { type: 'step'; label: string; index?: number }
  | { type: 'case'; result: CaseResult }
  | { type: 'row'; index: number; result: RowResult }
  | { type: 'study'; study?: StudyResult; error?: string }
  | { type: 'memory'; memory: WorkloadResult['memory'] }
  | { type: 'fatal'; error: string }

/** Sends `m` to the parent and waits until it is written. */
const send = (m: ChildMessage): Promise<void> =>
  new Promise((resolve, reject) => process.send!(m, undefined, {}, (e) => (e ? reject(e) : resolve())))

/** Runs one job in this (child) process; see `runIsolated`. */
async function runJob(job: Job, workloads: Workload[]): Promise<void> {
  const w = workloads.find((x) => x.id === job.workload)
  if (!w) throw new Error(`the child has no workload "${job.workload}"`)
  const memory = memorySampler()
  const t0 = performance.now()
  if (job.caseIndex < 0) {
    await send({ type: 'step', label: `${w.id} · study` })
    try {
      await send({ type: 'study', study: await w.study!(job.caseOptions) })
    } catch (e) {
      await send({ type: 'study', error: errorText(e) })
    }
    memory.sample()
    await send({ type: 'memory', memory: memory.result() })
    return
  }
  const spec = w.cases(job.caseOptions)[job.caseIndex]
  if (!spec || spec.label !== job.caseLabel)
    throw new Error(`the child's case ${job.caseIndex} of ${w.id} is not "${job.caseLabel}"`)
  const mk = performance.now()
  const made = spec.make()
  const makeMs = performance.now() - mk
  // the case's inputs through the black box, for the baseline and every row alike (black-box.ts)
  const instance = blackBox(made)
  memory.sample()
  // with the pairs on (TENET_BENCH_PAIRED=1), the baseline is set up in every process of the case:
  // rows are timed in pairs with it (runRow)
  const pairedBase = pairedEnabled() ? prepareBaseline(w, instance) : undefined
  let baseline = job.baseline
  if (!baseline) {
    await send({ type: 'step', label: `${w.id} ${spec.label} · baseline` })
    baseline = await timeBaseline(w, instance, job.measure, pairedBase ?? prepareBaseline(w, instance))
    memory.sample()
    await send({
      type: 'case',
      result: { label: spec.label, params: spec.params, baseline: { name: w.baseline.name, ...baseline }, makeMs },
    })
  }
  const log = protectorLog(job.log)
  // what making the case and the baseline broke is no row's doing (and would be the same in a new process)
  const initial = log.read().length
  // pairs only in a process as clean as the baseline's own (no protector broken since): a row that
  // detached an ArrayBuffer would slow the baseline's typed-array code beside it (protectors.ts);
  // such a row is compared with the case's baseline timing instead
  if (pairedBase) pairedBase.usable = () => log.read().length === initial
  for (const [n, { index, known }] of job.rows.entries()) {
    const row = w.rows[index]!
    const before = log.read()
    // a row of this job broke a protector: only rows known to break one too may follow it here
    if (n > 0 && before.length > initial && !known) break
    await send({ type: 'step', label: `${w.id} ${spec.label} · ${row.name} ${row.kind}`, index })
    if (job.budgetLeftMs !== undefined && performance.now() - t0 > job.budgetLeftMs) {
      await send({ type: 'row', index, result: overBudget(row, spec.label, job.budgetMs!) })
      continue
    }
    const result = await runRow(row, spec.label, instance, baseline, job.measure, memory.sample, pairedBase)
    const after = log.read()
    const invalidated = after.filter((p) => !before.includes(p))
    await send({
      type: 'row',
      index,
      result: {
        ...result,
        ...(invalidated.length ? { invalidated } : {}),
        ...(before.length ? { ranAfter: before } : {}),
      },
    })
  }
  await send({ type: 'memory', memory: memory.result() })
}

/**
 * The child's side of `runIsolated`: call it at the start of the script the parent starts (in
 * place of the script's usual work). It waits for one job, builds the workloads with
 * `build(selection)` (they must be the parent's), runs the job, reports, and exits.
 */
export function serveChild(build: (selection: unknown) => Workload[] | Promise<Workload[]>): void {
  if (!process.send) throw new Error('serveChild: this process was not started by runIsolated (no IPC channel)')
  process.once('message', (job: Job) => {
    void (async () => {
      let code = 0
      try {
        await runJob(job, await build(job.selection))
      } catch (e) {
        code = 1
        await send({ type: 'fatal', error: errorText(e) }).catch(() => {})
      }
      // rows may leave handles open (worker pools, GPU devices): the job is over
      process.exit(code)
    })()
  })
  process.send({ type: 'ready' })
}
