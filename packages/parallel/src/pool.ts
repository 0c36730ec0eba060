/**
 * A pool of worker threads that evaluates tasks — typically the gradient of one data shard —
 * and sums their results in task order, so the reduction is deterministic: the same tasks give
 * the same bits whatever the number of workers and whichever finishes first.
 *
 * Each worker loads a *worker module* (a file exporting `setup`) once, with an `init` value, and
 * then runs its task function on the tasks it is given. Threads claim tasks one at a time from a
 * shared counter (the calling thread too, and it starts at once), so a thread that runs slower —
 * a busy core, a worker woken late, a caller whose JIT code is slower — simply runs fewer tasks;
 * which thread ran a task never changes its output row, so the sum stays the same. The calling
 * thread waits for the workers with `Atomics.wait`, so `sum` and `map` are synchronous and cost a
 * few microseconds of coordination per call (Node's main thread may block; a browser page's may
 * not — see the README). Arrays in `init` and in tasks that live in a `SharedArrayBuffer`
 * (`sharedArray`) are shared with the workers, not copied.
 */
import { existsSync } from 'node:fs'
import { availableParallelism } from 'node:os'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { MessageChannel, receiveMessageOnPort, Worker, type MessagePort } from 'node:worker_threads'
import { TenetError } from '@tenet/ir'
import {
  CTRL_DONE,
  CTRL_FAILED,
  CTRL_NEXT,
  claimTasks,
  rowStride,
  type TaskFailure,
  type TaskFunction,
  warmLocal,
} from './claim.js'
import { sumRows } from './layout.js'

export type { TaskFunction }
/** What a worker module exports: `setup(init)` returns the task function. */
export interface WorkerModule {
  setup(init: unknown): TaskFunction | Promise<TaskFunction>
}

/** Options of `createPool`. */
export interface PoolOptions {
  /** The worker module: a URL or path of an ES module that exports `setup(init)`. */
  module: string | URL
  /** Passed to `setup` in every worker (structured clone; shared arrays are shared). */
  init?: unknown
  /** Threads besides the calling one (default: available cores − 1, at least 1). */
  workers?: number
  /** Whether the calling thread claims tasks too (default true). */
  callerRuns?: boolean
}

/** A pool: run tasks, sum or collect their outputs; `close` ends the threads. */
export interface Pool {
  /** Worker threads (the calling thread is extra when `callerRuns`). */
  readonly workers: number
  /** Runs every task (output length `outLength`) and returns their sum, added in task order. */
  sum(tasks: readonly unknown[], outLength: number, out?: Float64Array): Float64Array
  /**
   * Runs every task and returns the outputs, one row of `outLength` per task (row-major), in
   * `out` when given (its length must be tasks × `outLength`: nothing allocated per call).
   */
  map(tasks: readonly unknown[], outLength: number, out?: Float64Array): Float64Array
  /**
   * Runs every task `rounds` times on every thread (each worker and, when `callerRuns`, the
   * calling thread), into scratch rows that are thrown away, so that each thread's JIT has
   * compiled the task function before the calls that count (a fresh worker's first call runs
   * about three times slower than its later ones). Tasks must be safe to run again (they are
   * when their only effect is their output row, or writing the same values again).
   */
  warmUp(tasks: readonly unknown[], outLength: number, rounds?: number): void
  close(): Promise<void>
}

/** A Float64Array in a SharedArrayBuffer with the values of `values` (shared with workers, never copied). */
export function sharedArray(values: ArrayLike<number> | number): Float64Array {
  const n = typeof values === 'number' ? values : values.length
  const a = new Float64Array(new SharedArrayBuffer(n * 8))
  if (typeof values !== 'number') a.set(values as ArrayLike<number>)
  return a
}

const parallelError = (msg: string): never => {
  throw new TenetError('parallel/error', msg)
}

interface Thread {
  worker: Worker
  port: MessagePort
}

/**
 * A built file of this package (`worker-entry.js`, `tenet-worker.js`): beside this module once
 * built (dist/), or in dist/ when this module runs from its source (tests).
 */
export function builtFile(name: string): URL {
  const here = new URL(`./${name}`, import.meta.url)
  if (existsSync(fileURLToPath(here))) return here
  const built = new URL(`../dist/${name}`, import.meta.url)
  if (existsSync(fileURLToPath(built))) return built
  return parallelError(`@tenet/parallel: dist/${name} is missing: build the package first`)
}

/**
 * Starts `workers` threads, loads `module` in each and calls its `setup(init)`. Resolves when
 * every worker is ready; rejects with the first worker's setup error.
 */
export async function createPool(options: PoolOptions): Promise<Pool> {
  const count = options.workers ?? Math.max(1, availableParallelism() - 1)
  if (!Number.isInteger(count) || count < 1)
    parallelError(`\`workers\` must be a positive integer, got ${String(options.workers)}`)
  const moduleUrl =
    options.module instanceof URL
      ? options.module.href
      : /^[a-z]+:/.test(options.module)
        ? options.module
        : pathToFileURL(options.module).href
  const ctrl = new Int32Array(new SharedArrayBuffer(12))
  const threads: Thread[] = []
  const ready: Array<Promise<void>> = []
  for (let w = 0; w < count; w++) {
    const { port1, port2 } = new MessageChannel()
    // no inherited flags: a test runner's `--conditions=source` would make the workers load TypeScript sources
    const worker = new Worker(builtFile('worker-entry.js'), {
      workerData: { module: moduleUrl, init: options.init, ctrl, port: port2 },
      transferList: [port2],
      execArgv: [],
    })
    worker.unref()
    threads.push({ worker, port: port1 })
    ready.push(
      new Promise((ok, fail) => {
        worker.once('message', (m: { ready?: true; error?: string }) =>
          m.ready ? ok() : fail(new TenetError('parallel/setup', `worker setup failed: ${m.error}`)),
        )
        worker.once('error', (e) => fail(new TenetError('parallel/setup', `worker failed to start: ${e.message}`)))
      }),
    )
  }
  try {
    await Promise.all(ready)
  } catch (e) {
    await Promise.all(threads.map((t) => t.worker.terminate()))
    throw e
  }
  // the calling thread's own copy of the task function
  const callerRuns = options.callerRuns ?? true
  const local = callerRuns ? await ((await import(moduleUrl)) as WorkerModule).setup(options.init) : undefined
  let closed = false
  const outputs = new Map<number, Float64Array>()

  const checkCall = (outLength: number): void => {
    if (closed) parallelError('the pool is closed')
    if (!Number.isInteger(outLength) || outLength < 0)
      parallelError(`the output length must be a non-negative integer, got ${outLength}`)
  }

  /**
   * Starts a call: every worker is sent the whole task list (`warm`: to run all of it `rounds`
   * times into scratch rows; else to claim tasks from the shared counter), and the calling thread
   * claims tasks at once. Waits until every worker has counted itself done, then throws the
   * failure of the lowest-numbered failed task, if any (deterministic whoever ran it).
   */
  function dispatch(
    tasks: readonly unknown[],
    outLength: number,
    stride: number,
    block: Float64Array,
    rounds: number,
  ): void {
    const warm = rounds > 0
    Atomics.store(ctrl, CTRL_DONE, 0)
    Atomics.store(ctrl, CTRL_FAILED, 0)
    Atomics.store(ctrl, CTRL_NEXT, 0)
    for (const t of threads) t.port.postMessage({ tasks, outLength, stride, block, rounds })
    let failure: TaskFailure | undefined
    if (local)
      failure = warm
        ? warmLocal(local, tasks, outLength, rounds)
        : claimTasks(local, tasks, outLength, stride, block, ctrl)
    // wait for the workers (each counts itself done, failed or not)
    for (let done = Atomics.load(ctrl, CTRL_DONE); done < threads.length; done = Atomics.load(ctrl, CTRL_DONE))
      Atomics.wait(ctrl, CTRL_DONE, done, 60_000)
    if (Atomics.load(ctrl, CTRL_FAILED)) {
      for (const t of threads) {
        const m = receiveMessageOnPort(t.port)?.message as TaskFailure | undefined
        if (m && (!failure || m.index < failure.index)) failure = m
      }
    }
    if (failure) {
      const where = failure.worker ? 'in a worker' : 'on the calling thread'
      throw new TenetError(failure.code ?? 'parallel/task', `task ${failure.index} failed ${where}: ${failure.error}`)
    }
  }

  /** Runs every task into row t of a shared output block (rows `rowStride(outLength)` apart); returns the block. */
  function run(tasks: readonly unknown[], outLength: number): Float64Array {
    checkCall(outLength)
    const stride = rowStride(outLength)
    const size = tasks.length * stride
    let block = outputs.get(size)
    if (!block) outputs.set(size, (block = sharedArray(size)))
    block.fill(0)
    if (tasks.length > 0) dispatch(tasks, outLength, stride, block, 0)
    return block
  }

  return {
    workers: threads.length,
    map(tasks, outLength, out) {
      if (out && out.length !== tasks.length * outLength)
        parallelError(`\`out\` has ${out.length} elements, the tasks give ${tasks.length * outLength}`)
      const block = run(tasks, outLength)
      const rows = out ?? new Float64Array(tasks.length * outLength)
      const stride = rowStride(outLength)
      for (let t = 0; t < tasks.length; t++) rows.set(block.subarray(t * stride, t * stride + outLength), t * outLength)
      return rows
    },
    sum(tasks, outLength, out = new Float64Array(outLength)) {
      const block = run(tasks, outLength)
      if (out.length !== outLength) parallelError(`\`out\` has ${out.length} elements, the tasks give ${outLength}`)
      // in task order: the bits do not depend on the number of workers or on timing
      return sumRows(block, tasks.length, outLength, out, rowStride(outLength))
    },
    warmUp(tasks, outLength, rounds = 3) {
      checkCall(outLength)
      if (!Number.isInteger(rounds) || rounds < 1) parallelError(`\`rounds\` must be a positive integer, got ${rounds}`)
      if (tasks.length > 0) dispatch(tasks, outLength, 0, new Float64Array(0), rounds)
    },
    async close() {
      closed = true
      await Promise.all(threads.map((t) => t.worker.terminate()))
    },
  }
}
