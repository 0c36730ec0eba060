/**
 * The browser's pool: Web Workers (module workers) in place of Node's worker threads. A page's
 * main thread may not block, so `sum` and `map` return promises; the reduction is the same as
 * the Node pool's — each task's output row, added in task order — so the same tasks give the
 * same bits on either pool, whatever the number of workers. The main thread runs no tasks (it
 * stays free for the page); it only splits the tasks into contiguous ranges and adds the rows.
 *
 * Task data is structured-cloned to the workers; each worker sends its rows back in a
 * transferred buffer (no copy). This module imports nothing from Node.
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
  /** Runs every task and resolves to the outputs, one row of `outLength` per task (row-major). */
  map(tasks: readonly unknown[], outLength: number): Promise<Float64Array>
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
/** What a worker answers: ready after setup, or the rows of one range of tasks. */
type Reply =
  | { kind: 'ready' }
  | { kind: 'setup-error'; error: string }
  | { kind: 'rows'; id: number; rows: Float64Array }
  | { kind: 'failed'; id: number; error: string; code?: string }

const webError = (code: string, msg: string): never => {
  throw new TenetError(code, msg)
}

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
  // per worker, the calls waiting for its rows (answers come back in the order asked)
  const waiting: Array<Map<number, { ok: (rows: Float64Array) => void; fail: (e: unknown) => void }>> = []
  const workers: WebWorker[] = []
  const ready: Array<Promise<void>> = []
  for (let w = 0; w < count; w++) {
    const worker = new W!(entry, { type: 'module' })
    const calls = new Map<number, { ok: (rows: Float64Array) => void; fail: (e: unknown) => void }>()
    workers.push(worker)
    waiting.push(calls)
    ready.push(
      new Promise<void>((ok, fail) => {
        worker.onerror = (e) => {
          const err = new TenetError(
            'parallel/setup',
            `a Web Worker failed: ${e.message ?? 'no message (is the module URL right?)'}`,
          )
          fail(err)
          for (const c of calls.values()) c.fail(err)
          calls.clear()
        }
        worker.onmessage = ({ data }) => {
          if (data.kind === 'ready') return ok()
          if (data.kind === 'setup-error')
            return fail(new TenetError('parallel/setup', `worker setup failed: ${data.error}`))
          const call = calls.get(data.id)
          if (!call) return
          calls.delete(data.id)
          if (data.kind === 'rows') call.ok(data.rows)
          else call.fail(new TenetError(data.code ?? 'parallel/task', `a task failed in a worker: ${data.error}`))
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
  let nextId = 0

  /** Runs every task; resolves to the task-major block of rows. */
  async function run(tasks: readonly unknown[], outLength: number): Promise<Float64Array> {
    if (closed) webError('parallel/error', 'the pool is closed')
    if (!Number.isInteger(outLength) || outLength < 0)
      webError('parallel/error', `the output length must be a non-negative integer, got ${outLength}`)
    const block = new Float64Array(tasks.length * outLength)
    const per = Math.ceil(tasks.length / workers.length)
    const parts: Array<Promise<void>> = []
    workers.forEach((worker, w) => {
      const lo = w * per,
        hi = Math.min(tasks.length, lo + per)
      if (lo >= hi) return
      const id = nextId++
      parts.push(
        new Promise<Float64Array>((ok, fail) => waiting[w]!.set(id, { ok, fail })).then((rows) =>
          block.set(rows, lo * outLength),
        ),
      )
      worker.postMessage({ kind: 'run', id, tasks: tasks.slice(lo, hi), outLength })
    })
    // wait for every range even when one fails, so no answer arrives after the caller moved on
    const settled = await Promise.allSettled(parts)
    const failure = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected')
    if (failure) throw failure.reason
    return block
  }

  return {
    workers: workers.length,
    map: (tasks, outLength) => run(tasks, outLength),
    async sum(tasks, outLength, out = new Float64Array(outLength)) {
      if (out.length !== outLength)
        webError('parallel/error', `\`out\` has ${out.length} elements, the tasks give ${outLength}`)
      const block = await run(tasks, outLength)
      return sumRows(block, tasks.length, outLength, out)
    },
    close() {
      closed = true
      for (const w of workers) w.terminate()
      for (const calls of waiting) {
        for (const c of calls.values())
          c.fail(new TenetError('parallel/error', 'the pool was closed while a call was running'))
        calls.clear()
      }
    },
  }
}
