/**
 * The suite in fresh processes, so that no row is timed in a process that an earlier row has
 * made slower (see `protectors.ts`: once any ArrayBuffer is detached, typed-array code runs
 * slower in that process for good, and the wasm, WebGPU and jax-js rows detach buffers).
 *
 * The parent plans the run and merges the results; *child* processes (this suite's own script,
 * started again with `--trace-protector-invalidation` and its stdout in a file) run the work: one
 * job per child — a case's baseline and a list of its rows, or a workload's study. Before each row
 * the child reads its stdout file; if a row of this job has invalidated a V8 protector and the
 * next row is not known to do the same, the child stops and the parent starts a new one for the
 * rows left. Rows seen to invalidate a protector (per workload, row name and kind) go last in
 * later cases, so they cost a new process only once. With isolation `row`, every row gets a
 * process of its own. The baseline of a case is timed once, in its first (clean) process, and
 * every ratio of the case is against it. A child that dies (a crash, running out of memory) fails
 * only the row it was running.
 */
import { spawn } from 'node:child_process'
import { closeSync, mkdtempSync, openSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { machineInfo } from './machine.js'
import { FULL_MEASURE, QUICK_MEASURE } from './measure.js'
import { sampleClocks } from './run-clock.js'
import { createProgress } from './progress.js'
import type { ChildMessage, Job } from './child.js'
import { PROTECTOR_FLAG } from './protectors.js'
import {
  type BaselineTiming,
  type CaseResult,
  overBudget,
  plannedSteps,
  type RowResult,
  type RunOptions,
  type SuiteResult,
  type WorkloadResult,
} from './runner.js'
import type { CaseOptions, StudyResult, Workload } from './types.js'

export { serveChild } from './child.js'

/** How to start a child: a script that calls `serveChild` (`child.ts`; with the same workloads as the parent). */
export interface ChildCommand {
  script: string
  args?: string[]
  /** Node flags of the child (default: this process's `execArgv`); the protector flag is added. */
  execArgv?: string[]
  /** Extra environment variables of the child. */
  env?: Record<string, string>
}

/** Options of `runIsolated`. */
export interface IsolatedRunOptions extends RunOptions {
  /** `detach` (default): a new process per case and after protector-breaking rows; `row`: one per row. */
  isolation?: 'detach' | 'row'
  child: ChildCommand
  /** Passed to the child's `build` to make the same workloads (e.g. workload ids and a row filter). */
  selection?: unknown
}

/** The key under which a row is remembered as breaking a protector. */
const rowKey = (w: Workload, i: number): string => `${w.id}\u0000${w.rows[i]!.name}\u0000${w.rows[i]!.kind}`

/**
 * Runs `workloads` as `runSuite` does, but in child processes (see the module comment), and
 * merges what they report into one result, rows in the workloads' order. Rows carry the
 * protectors they invalidated (`invalidated`) and those already gone when they started (`ranAfter`).
 */
export async function runIsolated(workloads: Workload[], options: IsolatedRunOptions): Promise<SuiteResult> {
  const startedAt = new Date()
  const t0 = performance.now()
  const isolation = options.isolation ?? 'detach'
  const measureOptions = options.measure ?? (options.full ? FULL_MEASURE : QUICK_MEASURE)
  const progress = options.progress ?? createProgress(process.stderr, false)
  const caseOptions: CaseOptions = {
    full: options.full,
    ...(options.adbenchDir ? { adbenchDir: options.adbenchDir } : {}),
  }
  const plan = workloads.map((w) => ({ w, cases: w.cases(options) }))
  progress.start(plannedSteps(plan, options.studies))
  const dir = mkdtempSync(join(tmpdir(), 'tenet-bench-'))
  const breakers = new Set<string>()
  let jobs = 0
  const budgetLeft = (): number | undefined =>
    options.budgetMs === undefined ? undefined : options.budgetMs - (performance.now() - t0)

  /** Starts a child on `job`; calls `on` for each message; resolves with how it ended. */
  const runChild = (job: Omit<Job, 'log'>, on: (m: ChildMessage) => void): Promise<string | undefined> => {
    const log = join(dir, `child-${++jobs}.log`)
    const fd = openSync(log, 'w')
    const child = spawn(
      process.execPath,
      [
        ...(options.child.execArgv ?? process.execArgv),
        PROTECTOR_FLAG,
        options.child.script,
        ...(options.child.args ?? []),
      ],
      { stdio: ['ignore', fd, 'inherit', 'ipc'], env: { ...process.env, ...options.child.env } },
    )
    closeSync(fd)
    // the job goes out once the child listens for it (it says `ready`)
    child.on('message', (m: ChildMessage | { type: 'ready' }) =>
      m.type === 'ready' ? child.send({ ...job, log } satisfies Job) : on(m),
    )
    return new Promise((resolve) => {
      child.on('error', (e) => resolve(`the process could not start: ${e.message}`))
      child.on('exit', (code, signal) =>
        resolve(code === 0 ? undefined : `its process ended (${signal ? `signal ${signal}` : `exit code ${code}`})`),
      )
    })
  }

  const results: WorkloadResult[] = []
  try {
    for (const { w, cases } of plan) {
      const wStart = performance.now()
      const memory = { peakHeapUsedBytes: 0, heapDeltaBytes: 0, peakRssBytes: 0 }
      const mergeMemory = (m: WorkloadResult['memory']): void => {
        memory.peakHeapUsedBytes = Math.max(memory.peakHeapUsedBytes, m.peakHeapUsedBytes)
        memory.heapDeltaBytes = Math.max(memory.heapDeltaBytes, m.heapDeltaBytes)
        memory.peakRssBytes = Math.max(memory.peakRssBytes, m.peakRssBytes)
      }
      const caseResults: CaseResult[] = []
      const rowResults: RowResult[] = []
      for (const [caseIndex, spec] of cases.entries()) {
        const done = new Map<number, RowResult>()
        let pending = w.rows.map((_, i) => i)
        let baseline: BaselineTiming | undefined
        while (baseline === undefined || pending.length > 0) {
          const left = budgetLeft()
          if (left !== undefined && left <= 0 && baseline !== undefined) {
            for (const i of pending) {
              progress.step(`${w.id} ${spec.label} · ${w.rows[i]!.name} ${w.rows[i]!.kind}`)
              done.set(i, overBudget(w.rows[i]!, spec.label, options.budgetMs!))
            }
            break
          }
          const known = (i: number): boolean => breakers.has(rowKey(w, i))
          const order =
            isolation === 'row'
              ? pending.slice(0, 1)
              : [...pending.filter((i) => !known(i)), ...pending.filter((i) => known(i))]
          let running: number | undefined
          let progressed = false
          const ended = await runChild(
            {
              selection: options.selection,
              workload: w.id,
              caseIndex,
              caseLabel: spec.label,
              caseOptions,
              measure: measureOptions,
              ...(baseline ? { baseline } : {}),
              rows: order.map((index) => ({ index, known: known(index) })),
              ...(left !== undefined ? { budgetLeftMs: left, budgetMs: options.budgetMs } : {}),
            },
            (m) => {
              if (m.type === 'step') {
                progress.step(m.label)
                running = m.index
              } else if (m.type === 'case') {
                caseResults.push(m.result)
                baseline = m.result.baseline
                progressed = true
              } else if (m.type === 'row') {
                done.set(m.index, m.result)
                if (m.result.invalidated?.length) breakers.add(rowKey(w, m.index))
                running = undefined
                progressed = true
              } else if (m.type === 'memory') mergeMemory(m.memory)
              else if (m.type === 'fatal') progress.note(`${w.id} ${spec.label}: ${m.error}`)
            },
          )
          pending = pending.filter((i) => !done.has(i))
          if (ended && running !== undefined && !done.has(running)) {
            // the row that was running when its process died
            const row = w.rows[running]!
            done.set(running, {
              row: row.name,
              family: row.family ?? row.name,
              kind: row.kind,
              case: spec.label,
              status: 'error',
              reason: `${ended} while this row ran`,
            })
            pending = pending.filter((i) => i !== running)
            progressed = true
          }
          if (!progressed) {
            // nothing came back (the case could not be made, or the process failed at once): the rest fail
            const why = ended ?? 'its process stopped before running anything'
            progress.note(`${w.id} ${spec.label}: ${why}`)
            for (const i of pending)
              done.set(i, {
                row: w.rows[i]!.name,
                family: w.rows[i]!.family ?? w.rows[i]!.name,
                kind: w.rows[i]!.kind,
                case: spec.label,
                status: 'error',
                reason: `the case's process failed: ${why}`,
              })
            break
          }
        }
        for (let i = 0; i < w.rows.length; i++) if (done.has(i)) rowResults.push(done.get(i)!)
      }
      let study: StudyResult | undefined
      if (w.study && options.studies !== false) {
        const ended = await runChild(
          {
            selection: options.selection,
            workload: w.id,
            caseIndex: -1,
            caseOptions,
            measure: measureOptions,
            rows: [],
          },
          (m) => {
            if (m.type === 'step') progress.step(m.label)
            else if (m.type === 'study') {
              if (m.study) study = m.study
              else progress.note(`${w.id}: study failed: ${m.error}`)
            } else if (m.type === 'memory') mergeMemory(m.memory)
          },
        )
        if (ended && !study) progress.note(`${w.id}: study failed: ${ended}`)
      }
      results.push({
        id: w.id,
        title: w.title,
        ...(w.description ? { description: w.description } : {}),
        cases: caseResults,
        rows: rowResults,
        memory,
        ...(study ? { study } : {}),
        durationMs: performance.now() - wStart,
      })
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
  progress.done()
  return {
    startedAt: startedAt.toISOString(),
    durationMs: performance.now() - t0,
    machine: machineInfo(),
    options: {
      full: options.full,
      ...(options.adbenchDir ? { adbenchDir: options.adbenchDir } : {}),
      measure: measureOptions,
      isolation,
      clock: sampleClocks().delayKnown ? 'run' : 'wall',
    },
    workloads: results,
  }
}
