/**
 * The browser's pool: Web Workers (module workers) in place of Node's worker threads, with the
 * Node pool's semantics. Workers *claim* tasks: the main thread hands each worker a task, and the
 * next one each time a row comes back (two in flight per worker, so a worker never waits for the
 * next), so a worker that runs slower — a busy core, a throttled tab — simply runs fewer tasks.
 * Each task's output row goes to its own place and the rows are added in task order, so the same
 * tasks give the same bits on either pool, whatever the number of workers and whoever ran what.
 * A failed task stops only the worker that met it; every task handed out still runs, so the
 * error always names the lowest-numbered failed task. `warmUp` runs every task on every worker.
 *
 * A page's main thread may not block, so `sum`, `map` and `warmUp` return promises, and the main
 * thread runs no tasks (it stays free for the page). Claiming goes through messages, not a shared
 * counter: `SharedArrayBuffer` needs a cross-origin-isolated page, and this pool works on any.
 * Task data is structured-cloned to the workers, and rows come back copied, not transferred: a
 * transfer detaches the worker's buffer, after which V8 runs typed-array code more slowly in that
 * worker for good. This module imports nothing from Node.
 */
import { TenetError } from '@tenet/ir'
import { sumRows } from './layout.js'

/** Options of `createWebPool`. */
export interface WebPoolOptions {
  /** The worker module: a URL of an ES module that exports `setup(init)` (see `WorkerModule`). */
  module: string | URL
  /** Passed to `setup` in every worker (structured clone). */
  init?: unknown
  /** Web Workers to start (default: `navigator.hardwareConcurrency`, at least 1). */
  workers?: number
  /** The URL of this package's `web-worker-entry.js` (default: beside this module; set it when a bundler moves files). */
  workerEntry?: string | URL
}

/** A browser pool: run tasks on Web Workers, sum or collect their outputs; `close` ends them. */
export interface WebPool {
  readonly workers: number
  /** Runs every task (output length `outLength`) and resolves to their sum, added in task order. */
  sum(tasks: readonly unknown[], outLength: number, out?: Float64Array): Promise<Float64Array>
  /**
   * Runs every task and resolves to the outputs, one row of `outLength` per task (row-major), in
   * `out` when given (its length must be tasks × `outLength`).
   */
  map(tasks: readonly unknown[], outLength: number, out?: Float64Array): Promise<Float64Array>
  /**
   * Runs every task `rounds` times (default 3) on every worker, into scratch rows that are thrown
   * away, so that each worker's JIT has compiled the task function before the calls that count.
   * Tasks must be safe to run again.
   */
  warmUp(tasks: readonly unknown[], outLength: number, rounds?: number): Promise<void>
  close(): void
}

/** The part of the Web Worker API this module uses. */
interface WebWorker {
  postMessage(message: unknown): void
  terminate(): void
  onmessage: ((e: { data: Reply }) => void) | null
  onerror: ((e: { message?: string }) => void) | null
}
type WorkerConstructor = new (url: string | URL, options: { type: 'module' }) => WebWorker
/** What a worker answers: ready after setup; a task's row, a failed task, or a finished warm-up. */
type Reply =
  | { kind: 'ready' }
  | { kind: 'setup-error'; error: string }
  | { kind: 'row'; call: number; index: number; row: Float64Array }
  | { kind: 'failed'; call: number; index: number; error: string; code?: string }
  | { kind: 'warmed'; call: number }

/** A call under way: what each worker's answers to it do. */
interface Call {
  answer(worker: number, reply: Reply): void
  fail(e: unknown): void
}

/** Tasks each worker holds at once (one running, one waiting), so that none waits for the next. */
const IN_FLIGHT = 2

const webError = (code: string, msg: string): never => {
  throw new TenetError(code, msg)
}

/** The error of a failed task (the lowest-numbered one of a call). */
const taskError = (f: { index: number; error: string; code?: string }) =>
  new TenetError(f.code ?? 'parallel/task', `task ${f.index} failed in a worker: ${f.error}`)

/**
 * Starts `workers` Web Workers, loads `module` in each and calls its `setup(init)`. Resolves when
 * every worker is ready; rejects with the first setup error (and ends the workers).
 */
export async function createWebPool(options: WebPoolOptions): Promise<WebPool> {
  const W = (globalThis as { Worker?: WorkerConstructor }).Worker
  if (!W)
    webError(
      'parallel/unsupported',
      'Web Workers are not available here: in Node, use `createPool` or `tenetGradientPool` from `@tenet/parallel`',
    )
  const cores = (globalThis as { navigator?: { hardwareConcurrency?: number } }).navigator?.hardwareConcurrency ?? 1
  const count = options.workers ?? Math.max(1, cores)
  if (!Number.isInteger(count) || count < 1)
    webError('parallel/error', `\`workers\` must be a positive integer, got ${String(options.workers)}`)
  const module = new URL(options.module, (globalThis as { location?: { href: string } }).location?.href).href
  const entry = options.workerEntry ?? new URL('./web-worker-entry.js', import.meta.url)
  const calls = new Map<number, Call>()
  const workers: WebWorker[] = []
  const ready: Array<Promise<void>> = []
  for (let w = 0; w < count; w++) {
    const worker = new W!(entry, { type: 'module' })
    workers.push(worker)
    ready.push(
      new Promise<void>((ok, fail) => {
        worker.onerror = (e) => {
          const err = new TenetError(
            'parallel/setup',
            `a Web Worker failed: ${e.message ?? 'no message (is the module URL right?)'}`,
          )
          fail(err)
          for (const c of [...calls.values()]) c.fail(err)
        }
        worker.onmessage = ({ data }) => {
          if (data.kind === 'ready') return ok()
          if (data.kind === 'setup-error')
            return fail(new TenetError('parallel/setup', `worker setup failed: ${data.error}`))
          calls.get(data.call)?.answer(w, data)
        }
      }),
    )
    worker.postMessage({ kind: 'setup', module, init: options.init })
  }
  try {
    await Promise.all(ready)
  } catch (e) {
    for (const w of workers) w.terminate()
    throw e
  }
  let closed = false
  let nextCall = 0

  const checkCall = (outLength: number): void => {
    if (closed) webError('parallel/error', 'the pool is closed')
    if (!Number.isInteger(outLength) || outLength < 0)
      webError('parallel/error', `the output length must be a non-negative integer, got ${outLength}`)
  }

  /**
   * Starts a call: `begin(call)` sends the first messages; the call settles when `answer` says
   * so. Registered under its id until then, so that `close` and a dying worker can fail it.
   */
  function start<T>(
    setup: (
      id: number,
      settle: { ok: (v: T) => void; fail: (e: unknown) => void },
    ) => { answer: Call['answer']; begin(): void },
  ): Promise<T> {
    const id = nextCall++
    return new Promise<T>((resolve, reject) => {
      const settle = {
        ok: (v: T) => {
          calls.delete(id)
          resolve(v)
        },
        fail: (e: unknown) => {
          calls.delete(id)
          reject(e)
        },
      }
      const { answer, begin } = setup(id, settle)
      calls.set(id, { answer, fail: settle.fail })
      begin()
    })
  }

  /** Runs every task, each worker claiming the next as it answers; writes row t at t × `outLength` of `block`. */
  function run(tasks: readonly unknown[], outLength: number, block: Float64Array): Promise<Float64Array> {
    if (tasks.length === 0) return Promise.resolve(block)
    return start<Float64Array>((call, settle) => {
      let next = 0
      let inFlight = 0
      let failure: { index: number; error: string; code?: string } | undefined
      const stopped = new Set<number>()
      const give = (w: number): void => {
        if (next >= tasks.length || stopped.has(w)) return
        const index = next++
        inFlight++
        workers[w]!.postMessage({ kind: 'task', call, index, task: tasks[index], outLength })
      }
      const finish = (): void => {
        // every task handed out has answered, and none is left (or every worker has stopped)
        if (inFlight > 0 || (next < tasks.length && stopped.size < workers.length)) return
        if (failure) settle.fail(taskError(failure))
        else settle.ok(block)
      }
      return {
        answer(w, reply) {
          inFlight--
          if (reply.kind === 'row') {
            block.set(reply.row, reply.index * outLength)
            give(w)
          } else if (reply.kind === 'failed') {
            stopped.add(w)
            if (!failure || reply.index < failure.index) failure = reply
          }
          finish()
        },
        begin() {
          for (let k = 0; k < IN_FLIGHT; k++) for (let w = 0; w < workers.length; w++) give(w)
        },
      }
    })
  }

  return {
    workers: workers.length,
    async map(tasks, outLength, out) {
      checkCall(outLength)
      if (out && out.length !== tasks.length * outLength)
        webError('parallel/error', `\`out\` has ${out.length} elements, the tasks give ${tasks.length * outLength}`)
      const block = await run(tasks, outLength, new Float64Array(tasks.length * outLength))
      // (into `out` only once every task has succeeded: a failed call leaves it as it was)
      if (!out) return block
      out.set(block)
      return out
    },
    async sum(tasks, outLength, out = new Float64Array(outLength)) {
      checkCall(outLength)
      if (out.length !== outLength)
        webError('parallel/error', `\`out\` has ${out.length} elements, the tasks give ${outLength}`)
      const block = await run(tasks, outLength, new Float64Array(tasks.length * outLength))
      // in task order: the bits do not depend on the number of workers or on timing
      return sumRows(block, tasks.length, outLength, out)
    },
    async warmUp(tasks, outLength, rounds = 3) {
      checkCall(outLength)
      if (!Number.isInteger(rounds) || rounds < 1)
        webError('parallel/error', `\`rounds\` must be a positive integer, got ${rounds}`)
      if (tasks.length === 0) return
      await start<void>((call, settle) => {
        let waiting = workers.length
        let failure: { index: number; error: string; code?: string } | undefined
        return {
          answer(_w, reply) {
            if (reply.kind === 'failed' && (!failure || reply.index < failure.index)) failure = reply
            if (--waiting === 0) {
              if (failure) settle.fail(taskError(failure))
              else settle.ok()
            }
          },
          begin() {
            for (const worker of workers) worker.postMessage({ kind: 'warm', call, tasks, outLength, rounds })
          },
        }
      })
    },
    close() {
      closed = true
      for (const w of workers) w.terminate()
      for (const c of [...calls.values()])
        c.fail(new TenetError('parallel/error', 'the pool was closed while a call was running'))
    },
  }
}
