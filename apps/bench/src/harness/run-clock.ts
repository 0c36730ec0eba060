import { closeSync, openSync, readSync } from 'node:fs'

/**
 * The clocks the samples are timed with.
 *
 * `wall` is `performance.now()`. `run` is the wall time less the time this thread spent waiting
 * for a core while it was ready to run (Linux's run-queue delay, `/proc/thread-self/schedstat`'s
 * second field): it stands still while the scheduler runs other processes, and runs on while this
 * thread computes or waits of its own accord (on a GPU, on worker threads, on a file). Where the
 * delay cannot be read (not Linux, no schedstat), `run` is `wall`.
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
 */
export function runDelayReader(path = SCHEDSTAT): (() => number) | undefined {
  let fd: number
  try {
    fd = openSync(path, 'r')
  } catch {
    return undefined
  }
  const buf = Buffer.alloc(128)
  const read = (): number => {
    const n = readSync(fd, buf, 0, buf.length, 0)
    // "<ns on the cpu> <ns waiting on a run queue> <time slices>\n"
    const text = buf.toString('latin1', 0, n)
    const a = text.indexOf(' ')
    const b = text.indexOf(' ', a + 1)
    return Number(text.slice(a + 1, b)) / 1e6
  }
  try {
    if (!Number.isFinite(read())) throw new Error('not a schedstat line')
  } catch {
    closeSync(fd)
    return undefined
  }
  return read
}

/**
 * The run clock from a wall clock and a run-queue delay (both ms): `wall() − delay()`, the two
 * read one after the other (a wait for a core between the two readings, a window of about a
 * microsecond, is the only one an interval may count or leave out wrongly).
 */
export function runClock(wall: () => number, delay: () => number): () => number {
  return () => {
    const t = wall()
    return t - delay()
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
