/**
 * The code every pool thread runs: load the worker module, call its `setup(init)`, say ready,
 * then serve calls until the pool stops. The thread does not go back to its event loop between
 * calls: it waits on the call generation word (`CTRL_GEN`, spinning briefly, then in
 * `Atomics.wait`; with `spinMicroseconds: 'auto'` it spins first for a sixteenth of the time from
 * the previous call's start to the last call's end, at most 0.2 ms), so a call wakes it with one
 * `Atomics.notify` instead of a message. What a call
 * needs that is not a number — a task list, an output block — reaches the thread as a message
 * once, when it is new (`CTRL_POSTED` counts them; the thread reads them with
 * `receiveMessageOnPort`), and is kept by id; a call names its list and block in control words.
 * For a call, the thread claims tasks from the shared counter (writing each task's output into its
 * row of the shared block) or, for a warm-up, runs every task into a scratch row; then it counts
 * itself done (`Atomics.notify` wakes the waiting caller). A failure is posted back and flagged in
 * the shared control words.
 */
import { parentPort, receiveMessageOnPort, workerData, type MessagePort } from 'node:worker_threads'
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
  claimTasks,
  type TaskFailure,
  type TaskFunction,
  taskFailure,
  warmLocal,
  waitWhile,
  workerSpinMs,
} from './claim.js'
import type { WorkerModule } from './pool.js'

/** A message of the caller: a task list or an output block to keep under an id, or one to drop. */
export type PoolMessage =
  | { list: number; tasks: readonly unknown[] }
  | { block: number; array: Float64Array; done: Int32Array }
  | { drop: number }

interface Data {
  module: string
  init: unknown
  ctrl: Int32Array
  port: MessagePort
  spinMs: number
  /** This thread's home segment of every call's tasks, and how many threads claim them (see \`claimTasks\`). */
  slot: number
  threads: number
}
const { module, init, ctrl, port, spinMs, slot, threads } = workerData as Data

let task: TaskFunction
try {
  task = await ((await import(module)) as WorkerModule).setup(init)
} catch (e) {
  parentPort!.postMessage({ error: e instanceof Error ? e.message : String(e) })
  throw e
}
// (read before saying ready: the caller's first call bumps it)
let seen = Atomics.load(ctrl, CTRL_GEN)
parentPort!.postMessage({ ready: true })

const lists = new Map<number, readonly unknown[]>()
const blocks = new Map<number, { array: Float64Array; done: Int32Array }>([
  [0, { array: new Float64Array(0), done: new Int32Array(0) }],
])
let received = 0
/** How long to spin before sleeping until the next call (`spinMs` < 0: adaptive, `workerSpinMs`). */
let spin = Math.max(0, spinMs)
/** When this thread woke for the previous call (−1: none yet). */
let lastWoke = -1
for (;;) {
  seen = waitWhile(ctrl, CTRL_GEN, seen, spin)
  const woke = performance.now()
  if (Atomics.load(ctrl, CTRL_STOP)) break
  for (const posted = Atomics.load(ctrl, CTRL_POSTED); received < posted; received++) {
    const m = receiveMessageOnPort(port)!.message as PoolMessage
    if ('list' in m) lists.set(m.list, m.tasks)
    else if ('block' in m) blocks.set(m.block, m)
    else lists.delete(m.drop)
  }
  let failure: TaskFailure | undefined
  try {
    const tasks = lists.get(Atomics.load(ctrl, CTRL_LIST))!
    const outLength = Atomics.load(ctrl, CTRL_OUTLEN)
    const rounds = Atomics.load(ctrl, CTRL_ROUNDS)
    const block = blocks.get(Atomics.load(ctrl, CTRL_BLOCK))!
    failure =
      rounds > 0
        ? warmLocal(task, tasks, outLength, rounds, true)
        : claimTasks(
            task,
            tasks,
            outLength,
            Atomics.load(ctrl, CTRL_STRIDE),
            block.array,
            ctrl,
            block.done,
            seen,
            slot,
            threads,
            true,
          )
  } catch (e) {
    // (not a task's error: the call itself went wrong here; the caller must not wait forever)
    failure = taskFailure(-1, true, e)
  }
  if (failure) {
    port.postMessage(failure)
    Atomics.store(ctrl, CTRL_FAILED, 1)
  }
  Atomics.add(ctrl, CTRL_DONE, 1)
  Atomics.notify(ctrl, CTRL_DONE)
  // (measured from the previous call's wake-up, not this call's: a worker woken so late that the
  // other threads had run every task did no work in the call, and sleeping at once it would be
  // as late for the next call made back to back, call after call)
  if (spinMs < 0) spin = workerSpinMs(performance.now() - (lastWoke >= 0 ? lastWoke : woke))
  lastWoke = woke
}
port.close()
