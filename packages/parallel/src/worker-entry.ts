/**
 * The code every pool thread runs: load the worker module, call its `setup(init)`, say ready,
 * then, for each call it is sent, claim tasks from the shared counter (writing each task's output
 * into its row of the shared block) or, for a warm-up, run every task into a scratch row; then
 * count itself done (`Atomics.notify` wakes the waiting caller). A failure is posted back and
 * flagged in the shared control words.
 */
import { parentPort, workerData, type MessagePort } from 'node:worker_threads'
import { CTRL_DONE, CTRL_FAILED, claimTasks, type TaskFunction, warmLocal } from './claim.js'
import type { WorkerModule } from './pool.js'

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

port.on(
  'message',
  (m: { tasks: unknown[]; outLength: number; stride: number; block: Float64Array; rounds: number }) => {
    const failure =
      m.rounds > 0
        ? warmLocal(task, m.tasks, m.outLength, m.rounds, true)
        : claimTasks(task, m.tasks, m.outLength, m.stride, m.block, ctrl, true)
    if (failure) {
      port.postMessage(failure)
      Atomics.store(ctrl, CTRL_FAILED, 1)
    }
    Atomics.add(ctrl, CTRL_DONE, 1)
    Atomics.notify(ctrl, CTRL_DONE)
  },
)
