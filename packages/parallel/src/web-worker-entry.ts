/**
 * The code every Web Worker of a browser pool runs: on `setup`, load the worker module and call
 * its `setup(init)`; on `run`, evaluate a range of tasks into fresh rows and send them back
 * (transferred, not copied), or the first task's error.
 */
import type { TaskFunction, WorkerModule } from './pool.js'

type Message =
  | { kind: 'setup'; module: string; init: unknown }
  | { kind: 'run'; id: number; tasks: unknown[]; outLength: number }

const scope = globalThis as unknown as {
  onmessage: ((e: { data: Message }) => void) | null
  postMessage(message: unknown, transfer?: ArrayBuffer[]): void
}
const message = (e: unknown) => (e instanceof Error ? e.message : String(e))
let task: Promise<TaskFunction> | undefined

scope.onmessage = ({ data }) => {
  if (data.kind === 'setup') {
    task = import(data.module).then((m: WorkerModule) => m.setup(data.init))
    task.then(
      () => scope.postMessage({ kind: 'ready' }),
      (e) => scope.postMessage({ kind: 'setup-error', error: message(e) }),
    )
    return
  }
  const { id, tasks, outLength } = data
  void task!.then((f) => {
    const rows = new Float64Array(tasks.length * outLength)
    try {
      for (let i = 0; i < tasks.length; i++) f(tasks[i], rows.subarray(i * outLength, (i + 1) * outLength))
    } catch (e) {
      scope.postMessage({ kind: 'failed', id, error: message(e), code: (e as { code?: string }).code })
      return
    }
    scope.postMessage({ kind: 'rows', id, rows }, [rows.buffer])
  })
}
