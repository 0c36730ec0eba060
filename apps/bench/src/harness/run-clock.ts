import { closeSync, openSync, readSync } from 'node:fs'

/**
 * The clocks the samples are timed with.
 *
 * `wall` is `performance.now()`. `run` is the wall time less the time this thread spent waiting
 * for a core while it was ready to run (Linux's run-queue delay, `/proc/thread-self/schedstat`'s
 * second field): it stands still while the scheduler runs other processes, and runs on while this
 * thread computes or waits of its own accord (on a GPU, on a file). Where the delay cannot be read
 * (not Linux, no schedstat, scheduler accounting off), `run` is `wall`.
 *
 * Only for work on the timing thread: a row whose work also runs on other threads (a worker pool)
 * is timed wrongly both ways by it: while the calling thread is ready to run and a worker of its
 * own holds the core, the worker's work is subtracted (on one core, a row that split its work over
 * two threads read half the one-thread time), and while the calling thread sleeps until a worker
 * that waits for a core (another process's) is done, that wait counts (review17c). Such rows say
 * so (`Row.clock: 'wall'`) and are timed on `wall`.
 *
 * Why: on the loaded development machine (load average 7–35 on 2 cores) a sample of a call of a
 * few milliseconds lost the core in most samples, so its median read the wall time of another
 * process's time slice: the BA Jacobian at ba1 read 2.9–22 ms a call (median over the samples)
 * where its CPU time was 3.0–3.7 ms, and its ratio to a 1.1 ms objective (whose shorter samples
 * lost the core less often) 2.6–19×, the plain hand-derived Jacobian's too. The
 * run-queue delay is the time preemption added; what it leaves is the time the call took while
 * it ran (still slower while another process runs on the sibling hyperthread: see the bench
 * README's *The two cores of the development machine*).
 */
export interface Clocks {
  /** wall time, ms */
  wall: () => number
  /** wall time less this thread's run-queue delay, ms (see {@link Clocks}) */
  run: () => number
  /** whether `run` subtracts the run-queue delay (false: it is the wall clock) */
  delayKnown: boolean
}

const SCHEDSTAT = '/proc/thread-self/schedstat'

/**
 * Reads this thread's run-queue delay, ms, through a file descriptor kept open (a `pread` costs
 * about 1 µs; opening the file every time, 25 µs): `undefined` where it cannot be read. The
 * descriptor names the thread that opened it, so a reader is made per thread (a module instance
 * is per thread already).
 *
 * Also `undefined` where the line counts no time slice: a thread that reads its schedstat has run
 * at least once, so a count of 0 is Linux's "0 0 0" of scheduler accounting switched off
 * (`sched_info_on()` false, `fs/proc/base.c`), where the delay would read 0 for good and the run
 * clock be the wall clock while the report said otherwise.
 */
export function runDelayReader(path = SCHEDSTAT): (() => number) | undefined {
  let fd: number
  try {
    fd = openSync(path, 'r')
  } catch {
    return undefined
  }
  const buf = Buffer.alloc(128)
  const line = (): string => buf.toString('latin1', 0, readSync(fd, buf, 0, buf.length, 0))
  const read = (): number => {
    // "<ns on the cpu> <ns waiting on a run queue> <time slices>\n"
    const text = line()
    const a = text.indexOf(' ')
    const b = text.indexOf(' ', a + 1)
    return Number(text.slice(a + 1, b)) / 1e6
  }
  try {
    const fields = line().trim().split(/\s+/).map(Number)
    if (fields.length < 3 || !fields.every(Number.isFinite)) throw new Error('not a schedstat line')
    if (fields[2] === 0) throw new Error('scheduler accounting is off')
  } catch {
    closeSync(fd)
    return undefined
  }
  return read
}

/**
 * The run clock from a wall clock and a run-queue delay (both ms): `wall() − delay()`, with the
 * delay read on both sides of the wall reading, again until the two delay readings agree. A wait
 * for a core between a wall reading and a single delay reading would be counted on one side of
 * an interval and not on the other: at the end of a sample it was subtracted though the wall
 * reading was taken before it (samples read negative: down to −18.6 ms, 4–13 in 20 000 samples of
 * 0.25 ms on the loaded development machine, review17c's `window.mjs`); at the start, it was
 * counted in the sample. With both delay readings equal, no wait for a core fell between them,
 * so the wall reading and the delay are of the same moment. (A few tries at most: a wait for a
 * core lasts a time slice, and the next readings run in the slice that follows it.)
 */
export function runClock(wall: () => number, delay: () => number): () => number {
  return () => {
    let d = delay()
    for (;;) {
      const t = wall()
      const d1 = delay()
      if (d1 === d) return t - d
      d = d1
    }
  }
}

let clocks: Clocks | undefined

/** This thread's clocks (made on the first call). */
export function sampleClocks(): Clocks {
  if (!clocks) {
    const wall = () => performance.now()
    const delay = runDelayReader()
    clocks = delay ? { wall, run: runClock(wall, delay), delayKnown: true } : { wall, run: wall, delayKnown: false }
  }
  return clocks
}
