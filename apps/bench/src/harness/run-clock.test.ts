import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { runClock, runDelayReader, sampleClocks } from './run-clock.js'

const dir = mkdtempSync(join(tmpdir(), 'run-clock-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

describe('runDelayReader', () => {
  it("reads schedstat's second field (ns) as ms, afresh at every call", () => {
    const path = join(dir, 'schedstat')
    writeFileSync(path, '123456789 4500000 17\n')
    const read = runDelayReader(path)!
    expect(read()).toBe(4.5)
    writeFileSync(path, '123456789 7250000 18\n')
    expect(read()).toBe(7.25)
  })

  it('is undefined where scheduler accounting is off (the line Linux writes then: "0 0 0")', () => {
    // fs/proc/base.c, proc_pid_schedstat: `if (unlikely(!sched_info_on())) seq_puts(m, "0 0 0\n")`:
    // the delay would stay 0 and the "run clock" be the wall clock under the run clock's name
    const path = join(dir, 'schedstat-off')
    writeFileSync(path, '0 0 0\n')
    expect(runDelayReader(path)).toBeUndefined()
    // (a thread that has run once has a time slice: that line is read)
    writeFileSync(path, '0 0 1\n')
    expect(runDelayReader(path)?.()).toBe(0)
  })

  it('is undefined where the file is missing or not a schedstat line', () => {
    expect(runDelayReader(join(dir, 'none'))).toBeUndefined()
    const path = join(dir, 'other')
    writeFileSync(path, 'not numbers\n')
    expect(runDelayReader(path)).toBeUndefined()
  })
})

describe('runClock', () => {
  it('is the wall clock less the delay', () => {
    let wall = 10,
      delay = 0
    const run = runClock(
      () => wall,
      () => delay,
    )
    const t0 = run()
    // 5 ms pass, 3 of them waiting for a core
    wall += 5
    delay += 3
    expect(run() - t0).toBe(2)
  })
})

/**
 * A fake thread: `t` its wall time, `d` its run-queue delay. `preempt` makes the n-th reading of
 * the delay be preceded by a wait of `ms` for a core, as when the scheduler takes the core between
 * `performance.now()` and the `pread` of schedstat (review17c: about once in 2500 samples on the
 * loaded development machine; `scripts/run-clock-window.mjs`).
 */
function fakeThread() {
  const s = {
    t: 0,
    d: 0,
    reads: 0,
    preempt: new Map<number, number>(),
    wall: () => s.t,
    delay: () => {
      const ms = s.preempt.get(++s.reads)
      if (ms !== undefined) {
        s.t += ms
        s.d += ms
      }
      return s.d
    },
  }
  return s
}

describe('runClock: a wait for a core between its readings', () => {
  it('is not subtracted from an interval when it lands in the closing reading (no negative interval)', () => {
    const s = fakeThread()
    const run = runClock(s.wall, s.delay)
    const t0 = run()
    // 1 ms of work, then a 10 ms wait for a core at the next delay reading
    s.t += 1
    s.preempt.set(s.reads + 1, 10)
    expect(run() - t0).toBe(1)
    // (with one delay reading after the wall reading: 1 − 10 = −9 ms)
  })

  it('is not counted in an interval when it lands in the opening reading', () => {
    const s = fakeThread()
    const run = runClock(s.wall, s.delay)
    s.preempt.set(1, 10)
    const t0 = run()
    s.t += 1
    expect(run() - t0).toBe(1)
    // (with one delay reading after the wall reading: 11 ms)
  })

  it('nor when it lands in either delay reading, and tries again until two agree', () => {
    for (const at of [1, 2, 3, 4]) {
      const s = fakeThread()
      const run = runClock(s.wall, s.delay)
      s.t = 100
      s.d = 7
      // reading `at` of the opening reading waits 4 ms; so does the next one (two in a row)
      s.preempt.set(at, 4)
      s.preempt.set(at + 1, 4)
      const t0 = run()
      s.t += 2
      expect(run() - t0).toBe(2)
    }
  })
})

describe('sampleClocks', () => {
  it('counts a wait of the thread’s own (a sleep), and never runs ahead of the wall clock', () => {
    const { wall, run } = sampleClocks()
    const w0 = wall(),
      r0 = run()
    // a sleep is not a wait for a core: the run clock counts it (on any system)
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 20)
    const dr = run() - r0
    const dw = wall() - w0
    expect(dr).toBeGreaterThanOrEqual(19.9)
    expect(dr).toBeLessThanOrEqual(dw + 0.01)
  })
})
