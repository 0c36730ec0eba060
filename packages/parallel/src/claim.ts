/**
 * How the threads of a pool share out one call's tasks: each claims the next task from a shared
 * counter (`Atomics.add`) and writes its output into that task's row, so faster threads run more
 * tasks and the rows do not depend on who ran what. Also the warm-up (every task, into a scratch
 * row) and the failure record a thread hands back.
 */

import { zeroShared } from './zero.js'

/** A task function: reads one task, writes its output row (`out`, zeros on entry). */
export type TaskFunction = (task: unknown, out: Float64Array) => void

/**
 * The shared control words (Int32): workers done with the call, a failure seen; then the call itself (see `worker-entry.ts`): its generation (bumped to start a call),
 * whether the pool is stopping, how many messages the caller has posted to each worker, and the
 * call's task list, output block, output length, row stride and warm-up rounds (0: a real call).
 */
export const CTRL_DONE = 0,
  CTRL_FAILED = 1,
  CTRL_GEN = 2,
  CTRL_STOP = 3,
  CTRL_POSTED = 4,
  CTRL_LIST = 5,
  CTRL_BLOCK = 6,
  CTRL_OUTLEN = 7,
  CTRL_STRIDE = 8,
  CTRL_ROUNDS = 9

/**
 * The claiming counters of the threads' home segments (see \`claimTasks\`) follow the control
 * words: segment s's two counters (tasks claimed in it, tasks taken from its back) at
 * \`segmentAt(s)\`, each segment's on a 128-byte line of its own (an owner's claims do not
 * contend with another segment's).
 */
const SEGMENT_WORDS = 32
/** Where segment s's counters start in the control words. */
export const segmentAt = (s: number): number => SEGMENT_WORDS * (s + 1)
/** The control words of a pool whose calls are claimed by \`threads\` threads. */
export const ctrlWords = (threads: number): number => segmentAt(threads)
/** (The control words above fit before the first segment's line.) */

/** Task s·n/threads (rounded down): where segment s of n tasks starts. */
export const segmentStart = (s: number, n: number, threads: number): number => Math.floor((s * n) / threads)

/** Resets the segment counters of \`threads\` threads before a call. */
export function resetSegments(ctrl: Int32Array, threads: number): void {
  for (let s = 0; s < threads; s++) {
    Atomics.store(ctrl, segmentAt(s), 0)
    Atomics.store(ctrl, segmentAt(s) + 1, 0)
  }
}

/** A task that threw: its index, where it ran, the message and the error's `code`. */
export interface TaskFailure {
  index: number
  worker: boolean
  error: string
  code?: string
}

/** What a thrown value says, as a `TaskFailure` of task `index`. */
export function taskFailure(index: number, worker: boolean, e: unknown): TaskFailure {
  const code = (e as { code?: unknown } | null)?.code
  return {
    index,
    worker,
    error: e instanceof Error ? e.message : String(e),
    ...(typeof code === 'string' ? { code } : {}),
  }
}

/**
 * Rows of the shared output block start `rowStride(outLength)` numbers apart: a whole number of
 * 128-byte lines, so two threads writing neighbouring rows never write the same cache line (the
 * tasks' accumulators sit at the ends of their rows; false sharing there cost measurably).
 */
export const rowStride = (outLength: number): number => Math.ceil(outLength / 16) * 16

/**
 * Claims tasks until none is left, running each into its row of `block` (row i: `outLength`
 * numbers from i × `stride`), which it zeroes first (by `zeroShared`, faster than `fill` in shared
 * memory; and by the thread that runs the task, so the calling thread does not clear the whole
 * block before a call: the clearing is shared out too), and marks each finished row with the
 * call's generation in `done` (so the caller can add or copy the rows that are finished while
 * other threads still run theirs).
 *
 * **Home segments.** The task list is cut into `threads` contiguous segments, one per thread
 * (`slot`: the calling thread is slot 0); a thread claims its own segment's tasks from the front,
 * then takes what is left of the others' from their backs (each segment's two counters: tasks
 * claimed in it, and tasks taken from its back; an owner's front is its own count, so an owner and
 * the threads taking from its back never get the same task). With threads of equal speed each
 * runs about the same tasks call after call, so a task's data — its output rows, and whatever a
 * worker keeps per task, such as its own copy of the task's inputs — stays in that thread's core's
 * caches between calls, where one shared counter hands a thread different tasks on every call
 * (measured on the BA Jacobian: two threads used 1.04–1.16× the CPU of one with one counter,
 * 1.01–1.06× with segments); a slower thread still runs fewer tasks.
 *
 * A thread whose task fails raises the failed flag, claims no more and returns the failure; the
 * others go on (taking from every segment, the failed thread's too), so the lowest-numbered
 * failing task is always found, whoever ran it: a task left unrun lies above the failure of its
 * segment's owner (owners claim front to back, the others back to front), so every task below the
 * lowest failure reported ran.
 * `ran.tasks`, when given, counts the tasks this thread claimed; `between`, when given, runs after
 * each task this thread finished (the calling thread takes the rows finished so far there, so that
 * the reduction is shared out with the tasks instead of left for the end).
 */
export function claimTasks(
  task: TaskFunction,
  tasks: readonly unknown[],
  outLength: number,
  stride: number,
  block: Float64Array,
  ctrl: Int32Array,
  done: Int32Array,
  generation: number,
  slot: number,
  threads: number,
  worker = false,
  ran?: { tasks: number },
  between?: () => void,
): TaskFailure | undefined {
  const n = tasks.length
  for (let d = 0; d < threads; d++) {
    // own segment first (front to back), then the others' (back to front)
    const seg = (slot + d) % threads
    const lo = segmentStart(seg, n, threads),
      len = segmentStart(seg + 1, n, threads) - lo
    const at = segmentAt(seg)
    let front = lo
    for (let k = Atomics.add(ctrl, at, 1); k < len; k = Atomics.add(ctrl, at, 1)) {
      const i = d === 0 ? front++ : lo + len - 1 - Atomics.add(ctrl, at + 1, 1)
      if (ran) ran.tasks++
      try {
        const row = outLength === 0 ? empty : block.subarray(i * stride, i * stride + outLength)
        zeroShared(row)
        task(tasks[i], row)
        Atomics.store(done, i, generation)
      } catch (e) {
        Atomics.store(ctrl, CTRL_FAILED, 1)
        return taskFailure(i, worker, e)
      }
      between?.()
    }
  }
  return undefined
}

/** The row of a task without output. */
const empty = new Float64Array(0)

/** Runs every task `rounds` times into one scratch row (a warm-up: the outputs are dropped). */
export function warmLocal(
  task: TaskFunction,
  tasks: readonly unknown[],
  outLength: number,
  rounds: number,
  worker = false,
): TaskFailure | undefined {
  const row = new Float64Array(outLength)
  for (let r = 0; r < rounds; r++)
    for (let i = 0; i < tasks.length; i++) {
      try {
        row.fill(0)
        task(tasks[i], row)
      } catch (e) {
        return taskFailure(i, worker, e)
      }
    }
  return undefined
}

/**
 * Waits until `ctrl[index]` is no longer `value`: first spinning for up to `spinMs` milliseconds
 * (a thread that sleeps in the kernel takes tens of microseconds to wake, more on a VM whose idle
 * vCPU has halted; a pool's calls often follow each other that closely), then sleeping in
 * `Atomics.wait`. Returns the new value.
 */
export function waitWhile(ctrl: Int32Array, index: number, value: number, spinMs: number): number {
  let v = Atomics.load(ctrl, index)
  if (v !== value) return v
  if (spinMs > 0) {
    const end = performance.now() + spinMs
    for (let i = 1; ; i++) {
      v = Atomics.load(ctrl, index)
      if (v !== value) return v
      if ((i & 63) === 0 && performance.now() > end) break
    }
  }
  for (v = Atomics.load(ctrl, index); v === value; v = Atomics.load(ctrl, index)) Atomics.wait(ctrl, index, value)
  return v
}

/** The longest spin of the adaptive policy (`spinMicroseconds: 'auto'`), in milliseconds. */
export const AUTO_SPIN_CAP_MS = 0.2

/**
 * The adaptive spin of a calling thread that has no task left and waits for the workers (`'auto'`):
 * a running worker finishes within about one task, so spinning that long (twice this thread's mean
 * task time in the call, at most `AUTO_SPIN_CAP_MS`) usually sees it finish without the calling
 * thread going to sleep, and waking a sleeping thread takes tens of microseconds (more on a VM
 * whose idle vCPU halts). A worker that is not running (a loaded machine) costs at most that spin.
 */
export function callerSpinMs(busyMs: number, tasks: number): number {
  return tasks > 0 ? Math.min(AUTO_SPIN_CAP_MS, (2 * busyMs) / tasks) : 0
}

/**
 * The adaptive spin of a worker between calls (`'auto'`): a sixteenth of `periodMs`, the time from
 * its wake-up for the previous call to the end of the last one (about one call when calls come
 * back to back), at most `AUTO_SPIN_CAP_MS`, so that calls made back to back (an optimiser's loop)
 * find it awake, at a cost of at most about a sixteenth more CPU when they are not. (Its own time
 * in the last call would not do: a worker woken so late that the other threads had already run
 * every task worked for no time, slept at once, and was as late for the next call, call after
 * call: seen on a 2-core VM, a two-thread BA call as slow as one thread.)
 */
export function workerSpinMs(periodMs: number): number {
  return Math.min(AUTO_SPIN_CAP_MS, periodMs / 16)
}
