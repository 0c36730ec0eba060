/**
 * The code every Web Worker of a browser pool runs: on `setup`, load the worker module and call
 * its `setup(init)`; on `task`, run one task into a zeroed row and send the row back (copied: a
 * transferred buffer would be detached here, and V8 runs typed-array code more slowly in a
 * worker once any buffer has been detached in it), or the task's error; on `warm`, run every
 * task `rounds` times into a scratch row and say when done (or which task failed first).
 */
import type { TaskFunction, WorkerModule } from './pool.js'

type Message =
  | { kind: 'setup'; module: string; init: unknown }
  | { kind: 'task'; call: number; index: number; task: unknown; outLength: number }
  | { kind: 'warm'; call: number; tasks: unknown[]; outLength: number; rounds: number }

const scope = globalThis as unknown as {
  onmessage: ((e: { data: Message }) => void) | null
  postMessage(message: unknown): void
}
const message = (e: unknown) => (e instanceof Error ? e.message : String(e))
const code = (e: unknown) => {
  const c = (e as { code?: unknown } | null)?.code
  return typeof c === 'string' ? { code: c } : {}
}
let task: TaskFunction | undefined
/** One scratch row per output length, reused (the reply copies it). */
let row = new Float64Array(0)
const rowOf = (n: number): Float64Array => {
  if (row.length !== n) row = new Float64Array(n)
  else row.fill(0)
  return row
}

scope.onmessage = ({ data }) => {
  if (data.kind === 'setup') {
    import(data.module)
      .then((m: WorkerModule) => m.setup(data.init))
      .then(
        (f) => {
          task = f
          scope.postMessage({ kind: 'ready' })
        },
        (e) => scope.postMessage({ kind: 'setup-error', error: message(e) }),
      )
    return
  }
  // (the pool sends tasks only after `ready`)
  const f = task!
  if (data.kind === 'task') {
    const out = rowOf(data.outLength)
    try {
      f(data.task, out)
    } catch (e) {
      scope.postMessage({ kind: 'failed', call: data.call, index: data.index, error: message(e), ...code(e) })
      return
    }
    scope.postMessage({ kind: 'row', call: data.call, index: data.index, row: out })
    return
  }
  for (let r = 0; r < data.rounds; r++)
    for (let i = 0; i < data.tasks.length; i++) {
      try {
        f(data.tasks[i], rowOf(data.outLength))
      } catch (e) {
        scope.postMessage({ kind: 'failed', call: data.call, index: i, error: message(e), ...code(e) })
        return
      }
    }
  scope.postMessage({ kind: 'warmed', call: data.call })
}
