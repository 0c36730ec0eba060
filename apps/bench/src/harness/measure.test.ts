import { describe, expect, it } from 'vitest'
import { calibrate, measure, measurePaired, PAIR_BLOCK, wallClocks, warmUp } from './measure.js'
import { runClock } from './run-clock.js'

/** A clock that only the functions under test move: each call costs what the test says. */
function fakeClock() {
  const clock = { t: 0, now: () => clock.t }
  return clock
}

describe('calibrate', () => {
  it('takes the time of a warm call, not of a slow first call', async () => {
    const clock = fakeClock()
    // the first call compiled (1 ms); every later call takes 20 ns
    const fn = () => {
      clock.t += 20e-6
    }
    const single = await calibrate(fn, false, 1, 2, clock.now)
    expect(single).toBeCloseTo(20e-6, 12)
  })

  it('ignores a batch that was preempted (the fastest long batch counts)', async () => {
    const clock = fakeClock()
    let calls = 0
    const fn = () => {
      calls++
      // the process loses the core for 5 ms once, during the long batches
      clock.t += calls === 40_000 ? 5 : 20e-6
    }
    const single = await calibrate(fn, false, 0.05, 2, clock.now)
    expect(calls).toBeGreaterThan(40_000)
    expect(single).toBeCloseTo(20e-6, 12)
  })

  it('does not call again a function whose first call lasted the whole sample', async () => {
    let calls = 0
    expect(await calibrate(() => void calls++, false, 3, 2)).toBe(3)
    expect(calls).toBe(0)
  })
})

describe('measurePaired', () => {
  it('alternates samples of the row and the baseline, and takes the ratio within each pair', async () => {
    const clock = fakeClock()
    const order: string[] = []
    // the machine is 1.5× slower for a while (another process on the sibling core), for both
    const load = () => (clock.t > 3 && clock.t < 6 ? 1.5 : 1)
    const row = () => {
      order.push('r')
      clock.t += 3e-5 * load()
    }
    const base = () => {
      order.push('b')
      clock.t += 1e-5 * load()
    }
    const m = await measurePaired(
      row,
      { run: base },
      { timeMs: 10, minSamples: 5, warmupMs: 1, targetSampleMs: 0.1 },
      clock.now,
      clock.now,
    )
    expect(m.pairs).toBeGreaterThanOrEqual(5)
    expect(m.row.samples).toBe(m.pairs * PAIR_BLOCK)
    expect(m.baseline.samples).toBe(m.pairs * PAIR_BLOCK)
    // every pair ran in one state of the machine but for the pairs that straddle a change
    expect(m.ratio).toBeCloseTo(3, 6)
    // the samples themselves saw both states
    expect(m.row.medianMs).toBeGreaterThanOrEqual(3e-5 * (1 - 1e-9))
    // interleaved (a block of the row's samples, one of the baseline's, then baseline, row, …): the
    // calls come in runs of one kind, at least one run per pair (two blocks of one kind meet
    // between pairs), none longer than two blocks
    const runs = order.join('').match(/r+|b+/g)!
    expect(runs.length).toBeGreaterThanOrEqual(m.pairs)
    const last = runs.slice(-m.pairs)
    for (const r of last)
      expect(r.length).toBeLessThanOrEqual(2 * PAIR_BLOCK * (r[0] === 'r' ? m.row.inner : m.baseline.inner))
  })

  it('leaves out the pairs during which the process lost its core', async () => {
    const clock = fakeClock()
    let cpuMs = 0
    // the row's samples lose the core now and then (wall time passes, CPU time does not)
    let rowCalls = 0
    const row = () => {
      rowCalls++
      clock.t += 3e-5
      cpuMs += 3e-5
      if (rowCalls % 100_000 === 0) clock.t += 1
    }
    const base = () => {
      clock.t += 1e-5
      cpuMs += 1e-5
    }
    const options = { timeMs: 20, minSamples: 5, warmupMs: 1, targetSampleMs: 0.1 }
    const m = await measurePaired(row, { run: base }, options, clock.now, () => cpuMs)
    const blocks = m.row.samples / PAIR_BLOCK
    expect(m.pairs).toBeLessThan(blocks)
    expect(m.pairs * 2).toBeGreaterThanOrEqual(blocks)
    expect(m.ratio).toBeCloseTo(3, 6)
  })

  it('times slow rows in three pairs without a warm-up', async () => {
    const clock = fakeClock()
    let rowCalls = 0
    const row = () => {
      rowCalls++
      clock.t += 50
    }
    const base = () => {
      clock.t += 1e-3
    }
    const m = await measurePaired(
      row,
      { run: base },
      { timeMs: 10, minSamples: 5, warmupMs: 1, targetSampleMs: 0.1 },
      clock.now,
      clock.now,
    )
    expect(m.pairs).toBe(3)
    expect(m.row.inner).toBe(1)
    // the first call (calibration) and three samples
    expect(rowCalls).toBe(4)
    expect(m.ratio).toBeCloseTo(50 / 1e-3, 6)
  })
})

describe('warmUp', () => {
  it('makes its calls after its time has passed (a slow function still tiering up)', async () => {
    const clock = fakeClock()
    let calls = 0
    // 1 ms a call: 50 calls fill the 50 ms, the count asks for 200
    await warmUp(() => void ((clock.t += 1), calls++), false, 50, 200, 1500, clock.now)
    expect(calls).toBe(200)
    expect(clock.t).toBe(200)
  })

  it('lasts its time when the calls are made sooner (a fast kernel)', async () => {
    const clock = fakeClock()
    let calls = 0
    await warmUp(() => void ((clock.t += 0.001), calls++), false, 50, 200, 1500, clock.now)
    expect(clock.t).toBeGreaterThanOrEqual(50)
    expect(calls).toBeGreaterThan(200)
  })

  it('stops at its longest time however few calls were made', async () => {
    const clock = fakeClock()
    let calls = 0
    await warmUp(() => void ((clock.t += 10), calls++), false, 50, 500, 1500, clock.now)
    expect(calls).toBe(150)
  })

  it('without a count, calls for its time only (at least once)', async () => {
    const clock = fakeClock()
    let calls = 0
    await warmUp(() => void ((clock.t += 100), calls++), false, 50, undefined, undefined, clock.now)
    expect(calls).toBe(1)
  })
})

describe('measure', () => {
  /** Fake clocks: wall time, and a run-queue delay that only the calls under test move. */
  function fakeClocks() {
    const c = { t: 0, delay: 0, wall: () => c.t, run: () => c.t - c.delay }
    return c
  }
  const options = { timeMs: 200, minSamples: 5, warmupMs: 10, targetSampleMs: 0.25 }

  it('times samples on the run clock: a sample that lost its core reads what it ran', async () => {
    const c = fakeClocks()
    let calls = 0
    // 3 ms a call; two calls in three the process also waits 10 ms for a core
    const fn = () => {
      calls++
      c.t += 3
      if (calls % 3 !== 0) {
        c.t += 10
        c.delay += 10
      }
    }
    const m = await measure(fn, options, c)
    expect(m.inner).toBe(1)
    expect(m.medianMs).toBe(3)
    expect(m.madMs).toBe(0)
    // the budget is wall time: 200 ms of it hold about 200 / 9.7 samples, not 200 / 3
    expect(m.samples).toBeLessThan(30)
    // the same calls on the wall clock alone read the waits
    const w = fakeClocks()
    calls = 0
    const fw = () => {
      calls++
      w.t += 3
      if (calls % 3 !== 0) w.t += 10
    }
    const mw = await measure(fw, options, { wall: w.wall, run: w.wall })
    expect(mw.medianMs).toBe(13)
  })

  it("gives the same samples' median on the wall clock too, and times on the wall clock alone with `wallClocks`", async () => {
    const c = fakeClocks()
    // 3 ms a call, and every call also waits 1 ms for a core
    const fn = () => {
      c.t += 4
      c.delay += 1
    }
    const m = await measure(fn, options, c)
    expect(m.medianMs).toBe(3)
    expect(m.wallMedianMs).toBe(4)
    const mw = await measure(fn, options, wallClocks(c))
    expect(mw.medianMs).toBe(4)
    expect(mw.wallMedianMs).toBe(4)
  })

  it('calibrates the calls per sample on the run clock (a call that always waits for a core still gets a full sample)', async () => {
    const c = fakeClocks()
    // 2^-6 ms a call, and every call also waits 1 ms for a core: on the wall clock a call reads
    // over 1 ms and a sample would be one call; on the run clock 16 calls make a 0.25 ms sample
    const m = await measure(
      () => {
        c.t += 2 ** -6 + 1
        c.delay += 1
      },
      options,
      c,
    )
    expect(m.inner).toBe(16)
    expect(m.medianMs).toBeCloseTo(2 ** -6, 12)
  })

  it('never reads a negative time per call when samples of a slow row end in a wait for a core between the readings', async () => {
    // the fake thread of run-clock.test.ts: the n-th delay reading waits `ms` for a core first
    const s = { t: 0, d: 0, reads: 0, preempt: new Map<number, number>() }
    const wall = () => s.t
    const delay = () => {
      const ms = s.preempt.get(++s.reads)
      if (ms !== undefined) {
        s.t += ms
        s.d += ms
      }
      return s.d
    }
    const run = runClock(wall, delay)
    let calls = 0
    // 400 ms a call (longer than the budget: calibration's call, then three samples); the
    // closing readings of samples 1 and 2 lose the core for 500 ms
    const fn = () => {
      calls++
      s.t += 400
      if (calls === 2 || calls === 3) s.preempt.set(s.reads + 1, 500)
    }
    const m = await measure(fn, options, { wall, run })
    expect(m.samples).toBe(3)
    // (with one delay reading after the wall reading: −100 ms)
    expect(m.medianMs).toBe(400)
  })

  it("counts a call's waits of its own (a GPU, another thread) on the run clock", async () => {
    const c = fakeClocks()
    // 2 ms of wall time a call, waiting for a result (not for a core: no run-queue delay)
    const m = await measure(() => void (c.t += 2), options, c)
    expect(m.medianMs).toBe(2)
  })

  it('makes samples of several calls for a short call, and three samples of a call longer than the budget', async () => {
    const c = fakeClocks()
    // (a power of two: 0.25 / 2^-6 is 16 exactly)
    const m = await measure(() => void (c.t += 2 ** -6), options, c)
    expect(m.inner).toBe(16)
    expect(m.medianMs).toBeCloseTo(2 ** -6, 12)
    expect(m.samples).toBeGreaterThanOrEqual(options.minSamples)
    let calls = 0
    const slow = await measure(() => void ((c.t += 300), calls++), options, c)
    expect(slow.samples).toBe(3)
    expect(slow.medianMs).toBe(300)
    // the first call (calibration) and three samples
    expect(calls).toBe(4)
  })
})
