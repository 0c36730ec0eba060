/**
 * A pool of worker threads that evaluates tasks — typically the gradient of one data shard —
 * and sums their results in task order, so the reduction is deterministic: the same tasks give
 * the same bits whatever the number of workers and whichever finishes first.
 *
 * Each worker loads a *worker module* (a file exporting `setup`) once, with an `init` value, and
 * then runs its task function on the tasks it is given. The calling thread takes a share of the
 * tasks itself and waits for the workers with `Atomics.wait`, so `sum` and `map` are
 * synchronous and cost a few microseconds of coordination per call (Node's main thread may
 * block; a browser page's may not — see the README). Arrays in `init` and in tasks that live in
 * a `SharedArrayBuffer` (`sharedArray`) are shared with the workers, not copied.
 */
import { existsSync } from 'node:fs'
import { availableParallelism } from 'node:os'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { MessageChannel, receiveMessageOnPort, Worker, type MessagePort } from 'node:worker_threads'
import { TenetError } from '@tenet/ir'
import { sumRows } from './layout.js'

/** What a worker module exports: `setup(init)` returns the task function. */
export type TaskFunction = (task: unknown, out: Float64Array) => void
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
  /** Whether the calling thread runs a share of the tasks itself (default true). */
  callerRuns?: boolean
}

/** A pool: run tasks, sum or collect their outputs; `close` ends the threads. */
export interface Pool {
  /** Worker threads (the calling thread is extra when `callerRuns`). */
  readonly workers: number
  /** Runs every task (output length `outLength`) and returns their sum, added in task order. */
  sum(tasks: readonly unknown[], outLength: number, out?: Float64Array): Float64Array
  /** Runs every task and returns the outputs, one row of `outLength` per task (row-major). */
  map(tasks: readonly unknown[], outLength: number): Float64Array
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

const CTRL_DONE = 0,
  CTRL_FAILED = 1

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
  const ctrl = new Int32Array(new SharedArrayBuffer(8))
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

  /** Runs every task into row t of a shared output block; returns the block. */
  function run(tasks: readonly unknown[], outLength: number): Float64Array {
    if (closed) parallelError('the pool is closed')
    if (!Number.isInteger(outLength) || outLength < 0)
      parallelError(`the output length must be a non-negative integer, got ${outLength}`)
    const size = tasks.length * outLength
    let block = outputs.get(size)
    if (!block) outputs.set(size, (block = sharedArray(size)))
    block.fill(0)
    // contiguous shares: tasks [0, a) on the caller, then one range per worker
    const lanes = threads.length + (local ? 1 : 0)
    const per = Math.ceil(tasks.length / lanes)
    Atomics.store(ctrl, CTRL_DONE, 0)
    Atomics.store(ctrl, CTRL_FAILED, 0)
    let posted = 0
    threads.forEach((t, w) => {
      const lo = (w + (local ? 1 : 0)) * per,
        hi = Math.min(tasks.length, lo + per)
      if (lo >= hi) return
      posted++
      t.port.postMessage({ lo, hi, tasks: tasks.slice(lo, hi), outLength, block })
    })
    let localError: unknown
    if (local) {
      for (let i = 0; i < Math.min(per, tasks.length); i++) {
        try {
          local(tasks[i], block.subarray(i * outLength, (i + 1) * outLength))
        } catch (e) {
          localError = e
          break
        }
      }
    }
    // wait for the workers (they count themselves done, failed or not)
    for (let done = Atomics.load(ctrl, CTRL_DONE); done < posted; done = Atomics.load(ctrl, CTRL_DONE))
      Atomics.wait(ctrl, CTRL_DONE, done, 60_000)
    if (localError !== undefined) throw localError
    if (Atomics.load(ctrl, CTRL_FAILED)) {
      for (const t of threads) {
        const m = receiveMessageOnPort(t.port)?.message as { error?: string; code?: string } | undefined
        if (m?.error) throw new TenetError(m.code ?? 'parallel/task', `a task failed in a worker: ${m.error}`)
      }
      parallelError('a task failed in a worker')
    }
    return block
  }

  return {
    workers: threads.length,
    map(tasks, outLength) {
      return run(tasks, outLength).slice()
    },
    sum(tasks, outLength, out = new Float64Array(outLength)) {
      const block = run(tasks, outLength)
      if (out.length !== outLength) parallelError(`\`out\` has ${out.length} elements, the tasks give ${outLength}`)
      // in task order: the bits do not depend on the number of workers or on timing
      return sumRows(block, tasks.length, outLength, out)
    },
    async close() {
      closed = true
      await Promise.all(threads.map((t) => t.worker.terminate()))
    },
  }
}
