/**
 * The code every pool thread runs: load the worker module, call its `setup(init)`, say ready,
 * then run the task ranges it is sent, writing each task's output into its row of the shared
 * block, and count itself done (`Atomics.notify` wakes the waiting caller).
 */
import { parentPort, workerData, type MessagePort } from 'node:worker_threads'
import type { TaskFunction, WorkerModule } from './pool.js'

interface Data {
  module: string
  init: unknown
  ctrl: Int32Array
  port: MessagePort
}
const { module, init, ctrl, port } = workerData as Data

let task: TaskFunction
try {
  task = await ((await import(module)) as WorkerModule).setup(init)
  parentPort!.postMessage({ ready: true })
} catch (e) {
  parentPort!.postMessage({ error: e instanceof Error ? e.message : String(e) })
  throw e
}

port.on('message', (m: { lo: number; hi: number; tasks: unknown[]; outLength: number; block: Float64Array }) => {
  try {
    for (let i = m.lo; i < m.hi; i++) task(m.tasks[i - m.lo], m.block.subarray(i * m.outLength, (i + 1) * m.outLength))
  } catch (e) {
    port.postMessage({ error: e instanceof Error ? e.message : String(e), code: (e as { code?: string }).code })
    Atomics.store(ctrl, 1, 1)
  }
  Atomics.add(ctrl, 0, 1)
  Atomics.notify(ctrl, 0)
})
