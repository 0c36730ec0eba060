/**
 * A pool of worker threads that evaluates tasks — typically the gradient of one data shard —
 * and sums their results in task order, so the reduction is deterministic: the same tasks give
 * the same bits whatever the number of workers and whichever finishes first.
 *
 * Each worker loads a *worker module* (a file exporting `setup`) once, with an `init` value, and
 * then runs its task function on the tasks it is given. Threads claim tasks one at a time from a
 * shared counter (the calling thread too, and it starts at once), so a thread that runs slower —
 * a busy core, a worker woken late, a caller whose JIT code is slower — simply runs fewer tasks;
 * which thread ran a task never changes its output row, so the sum stays the same. A call wakes
 * the workers through a shared word (`Atomics.notify`), not a message, and the calling thread
 * waits for them the same way (spinning first for a time bounded by the work: `spinMicroseconds`), so `sum` and `map` are
 * synchronous and cost a few microseconds of coordination per call (Node's main thread may block;
 * a browser page's may not — see the README). A task list fixed with `taskList` is sent to the
 * workers once; an array is sent with every call. Arrays in `init` and in tasks that live in a
 * `SharedArrayBuffer` (`sharedArray`) are shared with the workers, not copied.
 */
import { existsSync } from 'node:fs'
import { availableParallelism } from 'node:os'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { MessageChannel, receiveMessageOnPort, Worker, type MessagePort } from 'node:worker_threads'
import { TenetError } from '@tenet/ir'
import {
  CTRL_BLOCK,
  CTRL_DONE,
  CTRL_FAILED,
  CTRL_GEN,
  CTRL_LIST,
  CTRL_OUTLEN,
  CTRL_POSTED,
  CTRL_ROUNDS,
  CTRL_STOP,
  CTRL_STRIDE,
  callerSpinMs,
  claimTasks,
  ctrlWords,
  resetSegments,
  rowStride,
  type TaskFailure,
  type TaskFunction,
  waitWhile,
  warmLocal,
} from './claim.js'
import type { PoolMessage } from './worker-entry.js'

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
  /**
   * How long a thread that waits — a worker for the next call, the caller for the workers — spins
   * before it sleeps in `Atomics.wait`: microseconds (default 0: sleep at once), or `'auto'`. A
   * sleeping thread takes tens of microseconds to wake (measured on a 2-core VM: a calling thread
   * asleep resumed a median 33 µs after the worker's notify, a spinning one 1 µs), more on a VM
   * whose idle vCPU has halted, so a spin about as long as the wait saves that. Where the threads
   * share a core with other work, a spin delays the thread it waits for (measured: a fixed 200 µs
   * made a pool call of no-op tasks 415 µs instead of 15 µs on a loaded 2-core machine). `'auto'`
   * bounds each spin by the work: the calling thread, out of tasks, spins for up to twice its mean
   * task time in the call (a running worker finishes within about one task); a worker, after a
   * call, for a sixteenth of the time since it woke for the call before (about one call when calls
   * come back to back); neither for more than 0.2 ms. Measured on a
   * 2-core VM whose pool had the cores: for back-to-back BA Jacobians at ba1 size (2 ms calls)
   * a sleeping worker waited 0.33–0.60 ms per call to run again, a spinning one 0.14–0.21 ms, for
   * the same CPU; but for the GMM gradient at d = 2, n = 10³ (0.3 ms calls) two threads ran
   * 0.65–0.79× as fast as one in 8 of 10 runs with `'auto'`, against 0.83–1.41× (median 0.85×) in
   * 9 runs without: so it is not the default.
   */
  spinMicroseconds?: number | 'auto'
}

/**
 * A task list fixed for many calls (`Pool.taskList`): sent to the workers once, so that a call
 * with it sends nothing but a wake-up. Its tasks are a snapshot (a structured clone) of the array
 * it was made from: changing that array later changes nothing.
 */
export interface TaskList {
  readonly length: number
  /** Lets the workers drop their copy (the list cannot be used afterwards). */
  release(): void
}

/** Tasks as a call takes them: an array (sent with the call) or a fixed `TaskList`. */
export type Tasks = readonly unknown[] | TaskList

/** A pool: run tasks, sum or collect their outputs; `close` ends the threads. */
export interface Pool {
  /** Worker threads (the calling thread is extra when `callerRuns`). */
  readonly workers: number
  /** Runs every task (output length `outLength`) and returns their sum, added in task order. */
  sum(tasks: Tasks, outLength: number, out?: Float64Array): Float64Array
  /**
   * Runs every task and returns the outputs, one row of `outLength` per task (row-major), in
   * `out` when given (its length must be tasks × `outLength`: nothing allocated per call).
   */
  map(tasks: Tasks, outLength: number, out?: Float64Array): Float64Array
  /**
   * Runs every task `rounds` times on every thread (each worker and, when `callerRuns`, the
   * calling thread), into scratch rows that are thrown away, so that each thread's JIT has
   * compiled the task function before the calls that count (a fresh worker's first call runs
   * about three times slower than its later ones). Tasks must be safe to run again (they are
   * when their only effect is their output row, or writing the same values again).
   */
  warmUp(tasks: Tasks, outLength: number, rounds?: number): void
  /**
   * Fixes a task list for many calls: the workers get it once, here, and a call with the returned
   * `TaskList` costs no message (an array is structured-cloned to every worker on every call).
   */
  taskList(tasks: readonly unknown[]): TaskList
  close(): Promise<void>
}

/** A Float64Array in a SharedArrayBuffer with the values of `values` (shared with workers, never copied). */
export function sharedArray(values: ArrayLike<number> | number): Float64Array {
  const n = typeof values === 'number' ? values : values.length
  const a = new Float64Array(new SharedArrayBuffer(n * 8))
  if (typeof values !== 'number') a.set(values as ArrayLike<number>)
  return a
}

/** An output block of the pool: its id (known to the workers), the rows, and the rows' finished marks. */
interface OutputBlock {
  id: number
  block: Float64Array
  done: Int32Array
}

/** Adds the row of `block` that starts at `at` into `out` (element by element, in order). */
function addRow(out: Float64Array, block: Float64Array, at: number): void {
  for (let j = 0; j < out.length; j++) out[j] += block[at + j]!
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
  const spinMicroseconds = options.spinMicroseconds ?? 0
  const auto = spinMicroseconds === 'auto'
  if (!auto && !(spinMicroseconds >= 0))
    parallelError(
      `\`spinMicroseconds\` must be a non-negative number or 'auto', got ${String(options.spinMicroseconds)}`,
    )
  /** The fixed spin in milliseconds; -1: adaptive (the workers read it so too). */
  const spinMs = auto ? -1 : (spinMicroseconds as number) / 1000
  const callerRuns = options.callerRuns ?? true
  /** The threads that claim a call's tasks: the workers, and the calling thread (slot 0) when it runs tasks. */
  const claiming = count + (callerRuns ? 1 : 0)
  const ctrl = new Int32Array(new SharedArrayBuffer(ctrlWords(claiming) * 4))
  const threads: Thread[] = []
  const ready: Array<Promise<void>> = []
  for (let w = 0; w < count; w++) {
    const { port1, port2 } = new MessageChannel()
    // no inherited flags: a test runner's `--conditions=source` would make the workers load TypeScript sources
    const worker = new Worker(builtFile('worker-entry.js'), {
      workerData: {
        module: moduleUrl,
        init: options.init,
        ctrl,
        port: port2,
        spinMs,
        slot: w + (callerRuns ? 1 : 0),
        threads: claiming,
      },
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
  const local = callerRuns ? await ((await import(moduleUrl)) as WorkerModule).setup(options.init) : undefined
  let closed = false
  /**
   * The output blocks, one per size, their ids (id 0: the empty block of warm-ups) and their rows'
   * finished marks (row t holds the generation of the call that last finished it).
   */
  const outputs = new Map<string, OutputBlock>()
  /** The scratch sum of `sum` (kept between calls). */
  let total = new Float64Array(0)
  const noOutput: OutputBlock = { id: 0, block: new Float64Array(0), done: new Int32Array(0) }
  let blockIds = 0
  /** Fixed task lists: id → the caller's snapshot (id 0 is the list sent with a call). */
  const fixed = new Map<number, readonly unknown[]>()
  const listIds = new WeakMap<TaskList, number>()
  let nextList = 1
  /** Sends a message to every worker; it reads it when the next call wakes it. */
  const post = (m: PoolMessage): void => {
    for (const t of threads) t.port.postMessage(m)
    Atomics.add(ctrl, CTRL_POSTED, 1)
  }
  /** The call's list: its id and the tasks the calling thread runs (an array is sent now, as list 0). */
  const listOf = (tasks: Tasks): { id: number; local: readonly unknown[] } => {
    if (Array.isArray(tasks)) {
      if (tasks.length > 0) post({ list: 0, tasks })
      return { id: 0, local: tasks }
    }
    const id = listIds.get(tasks as TaskList)
    const local = id === undefined ? undefined : fixed.get(id)
    if (!local) return parallelError('the task list was released or belongs to another pool')
    return { id: id!, local }
  }

  const checkCall = (outLength: number): void => {
    if (closed) parallelError('the pool is closed')
    if (!Number.isInteger(outLength) || outLength < 0)
      parallelError(`the output length must be a non-negative integer, got ${outLength}`)
  }

  /** The tasks the calling thread ran in the current call. */
  const ran = { tasks: 0 }
  /**
   * Starts a call: every worker is sent the whole task list (`warm`: to run all of it `rounds`
   * times into scratch rows; else to claim tasks from the shared counter), and the calling thread
   * claims tasks at once. Waits until every worker has counted itself done, then throws the
   * failure of the lowest-numbered failed task, if any (deterministic whoever ran it).
   */
  function dispatch(
    list: number,
    tasks: readonly unknown[],
    outLength: number,
    stride: number,
    out: OutputBlock,
    rounds: number,
    consume?: (t: number) => void,
  ): void {
    const warm = rounds > 0
    Atomics.store(ctrl, CTRL_DONE, 0)
    Atomics.store(ctrl, CTRL_FAILED, 0)
    resetSegments(ctrl, claiming)
    Atomics.store(ctrl, CTRL_LIST, list)
    Atomics.store(ctrl, CTRL_BLOCK, out.id)
    Atomics.store(ctrl, CTRL_OUTLEN, outLength)
    Atomics.store(ctrl, CTRL_STRIDE, stride)
    Atomics.store(ctrl, CTRL_ROUNDS, rounds)
    // the call starts: wake the workers (those still spinning see the new generation at once)
    const generation = Atomics.add(ctrl, CTRL_GEN, 1) + 1
    Atomics.notify(ctrl, CTRL_GEN)
    let failure: TaskFailure | undefined
    const started = performance.now()
    ran.tasks = 0
    /** Takes the rows finished so far, in task order (after each of the calling thread's tasks, and when it has none left). */
    let t = 0
    const take =
      consume &&
      ((): void => {
        while (t < tasks.length && Atomics.load(out.done, t) === generation && !Atomics.load(ctrl, CTRL_FAILED))
          consume(t++)
      })
    if (local)
      failure = warm
        ? warmLocal(local, tasks, outLength, rounds)
        : claimTasks(
            local,
            tasks,
            outLength,
            stride,
            out.block,
            ctrl,
            out.done,
            generation,
            0,
            claiming,
            false,
            ran,
            take,
          )
    // no task left to claim: while the workers finish theirs, take the finished rows in task order
    if (take && !failure) take()
    // wait for the workers (each counts itself done, failed or not)
    const spin = spinMs >= 0 ? spinMs : callerSpinMs(performance.now() - started, ran.tasks)
    for (let done = Atomics.load(ctrl, CTRL_DONE); done < threads.length; )
      done = waitWhile(ctrl, CTRL_DONE, done, spin)
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
    if (consume) while (t < tasks.length) consume(t++)
  }

  /**
   * Runs every task into row t of a shared output block (rows `rowStride(outLength)` apart; each
   * row is zeroed by the thread that runs its task) and hands each row, in task order, to
   * `consume(t, block, stride)` when given: the calling thread consumes the rows finished so far
   * after each task of its own and when it has none left (while the workers finish theirs), then
   * the rest. Returns the block.
   */
  function run(
    tasks: Tasks,
    outLength: number,
    consume?: (t: number, block: Float64Array, stride: number) => void,
  ): Float64Array {
    const { id, local: list } = listOf(tasks)
    const stride = rowStride(outLength)
    const size = list.length * stride
    let out = outputs.get(`${list.length},${stride}`)
    if (!out) {
      out = { id: ++blockIds, block: sharedArray(size), done: new Int32Array(new SharedArrayBuffer(4 * list.length)) }
      outputs.set(`${list.length},${stride}`, out)
      post({ block: out.id, array: out.block, done: out.done })
    }
    const { block } = out
    if (list.length > 0) dispatch(id, list, outLength, stride, out, 0, consume && ((t) => consume(t, block, stride)))
    return block
  }

  return {
    workers: threads.length,
    map(tasks, outLength, out) {
      if (out && out.length !== tasks.length * outLength)
        parallelError(`\`out\` has ${out.length} elements, the tasks give ${tasks.length * outLength}`)
      checkCall(outLength)
      const block = run(tasks, outLength)
      // (copied once every task has succeeded: \`out\` is left alone when one fails)
      const rows = out ?? new Float64Array(tasks.length * outLength)
      const stride = rowStride(outLength)
      if (outLength > 0)
        for (let t = 0; t < tasks.length; t++)
          rows.set(block.subarray(t * stride, t * stride + outLength), t * outLength)
      return rows
    },
    sum(tasks, outLength, out = new Float64Array(outLength)) {
      if (out.length !== outLength) parallelError(`\`out\` has ${out.length} elements, the tasks give ${outLength}`)
      checkCall(outLength)
      // in task order, whatever thread ran what (the same bits for any number of workers), into a
      // scratch sum first (\`out\` is left alone when a task fails)
      if (total.length !== outLength) total = new Float64Array(outLength)
      total.fill(0)
      const sums = total
      run(tasks, outLength, (t, block, stride) => addRow(sums, block, t * stride))
      out.set(sums)
      return out
    },
    warmUp(tasks, outLength, rounds = 3) {
      checkCall(outLength)
      if (!Number.isInteger(rounds) || rounds < 1) parallelError(`\`rounds\` must be a positive integer, got ${rounds}`)
      const { id, local: list } = listOf(tasks)
      if (list.length > 0) dispatch(id, list, outLength, 0, noOutput, rounds)
    },
    taskList(tasks) {
      if (closed) parallelError('the pool is closed')
      if (!Array.isArray(tasks)) parallelError('`taskList` takes an array of tasks')
      const id = nextList++
      // (the caller's own snapshot, so that it and the workers run the same tasks)
      const snapshot = structuredClone(tasks) as unknown[]
      fixed.set(id, snapshot)
      post({ list: id, tasks: snapshot })
      const handle: TaskList = {
        length: snapshot.length,
        release() {
          if (!fixed.delete(id) || closed) return
          post({ drop: id })
        },
      }
      listIds.set(handle, id)
      return handle
    },
    async close() {
      if (closed) return
      closed = true
      // the workers leave their loop; terminate ends them either way
      Atomics.store(ctrl, CTRL_STOP, 1)
      Atomics.add(ctrl, CTRL_GEN, 1)
      Atomics.notify(ctrl, CTRL_GEN)
      await Promise.all(threads.map((t) => t.worker.terminate()))
    },
  }
}
