import { describe, expect, it } from 'vitest'
import { gradient, rev, TenetError } from 'tenet'
import { AUTO_SPIN_CAP_MS, callerSpinMs, workerSpinMs } from './claim.js'
import { createPool, sharedArray, tenetGradientPool } from './index.js'

const fixture = new URL('../test/fixtures/scaled-sum.mjs', import.meta.url)
const tasks = Array.from({ length: 13 }, (_, t) => [t * 1000, 1000 + t])

const whoRan = new URL('../test/fixtures/who-ran.mjs', import.meta.url)
const slowCaller = new URL('../test/fixtures/slow-caller-sum.mjs', import.meta.url)

describe('createPool', () => {
  it('sums task outputs in task order: the same bits for 1, 2 and 3 workers, and as a loop', async () => {
    const sums: Float64Array[] = []
    for (const workers of [1, 2, 3]) {
      const pool = await createPool({ module: fixture, init: { scale: 0.1 }, workers })
      sums.push(pool.sum(tasks, 2))
      sums.push(pool.sum(tasks, 2)) // again, reusing the output block
      expect(pool.map(tasks, 2).length).toBe(26)
      await pool.close()
    }
    // the reference: each task's output, added in task order
    const ref = new Float64Array(2)
    for (const [start, count] of tasks) {
      let s = 0
      for (let k = start!; k < start! + count!; k++) s += 1 / (k + 1)
      ref[0] += s * 0.1
      ref[1] += count!
    }
    for (const s of sums) expect(Array.from(s)).toEqual(Array.from(ref))
  })

  it('map gives each task its row', async () => {
    const pool = await createPool({ module: fixture, init: { scale: 1 }, workers: 2 })
    const rows = pool.map(
      [
        [0, 1],
        [1, 1],
        [2, 1],
      ],
      2,
    )
    expect(Array.from(rows)).toEqual([1, 1, 0.5, 1, 1 / 3, 1])
    // into a caller's array: the same rows, no new array
    const out = new Float64Array(6)
    expect(
      pool.map(
        [
          [0, 1],
          [1, 1],
          [2, 1],
        ],
        2,
        out,
      ),
    ).toBe(out)
    expect(Array.from(out)).toEqual(Array.from(rows))
    expect(() => pool.map([[0, 1]], 2, out)).toThrow(/`out` has 6 elements, the tasks give 2/)
    await pool.close()
  })

  it('a task that throws in a worker, or on the caller, is a Tenet error; setup errors reject', async () => {
    const pool = await createPool({ module: fixture, init: { scale: 1 }, workers: 2 })
    // whichever thread claims task 5 (-1) fails: the error names the task and says where it ran
    const bad = [...tasks.slice(0, 5), -1]
    expect(() => pool.sum(bad, 2)).toThrow(/task 5 failed (in a worker|on the calling thread): task -1 refused/)
    try {
      pool.sum(bad, 2)
    } catch (e) {
      expect(TenetError.isInstance(e)).toBe(true)
      expect((e as TenetError).code).toBe('fixture/refused')
    }
    expect(() => pool.sum([-1, ...tasks], 2)).toThrow(/task 0 failed .*task -1 refused/)
    // two failing tasks: the lower-numbered one is reported, whoever ran it
    for (let r = 0; r < 5; r++) expect(() => pool.sum([...tasks, -1, -1], 2)).toThrow(/task 13 failed/)
    expect(() => pool.warmUp(bad, 2)).toThrow(/task 5 failed/)
    // and the pool still works afterwards
    expect(pool.sum([[0, 1]], 2)[0]).toBe(1)
    await pool.close()
    expect(() => pool.sum(tasks, 2)).toThrow(/closed/)
    await expect(createPool({ module: fixture, init: { failSetup: true }, workers: 1 })).rejects.toThrow(
      /setup refused/,
    )
    await expect(createPool({ module: fixture, workers: 0 })).rejects.toThrow(/positive integer/)
  })
})

describe('createPool: claiming and warm-up', () => {
  it('with failures in several home segments, the lowest-numbered failing task is reported, for 1–3 workers', async () => {
    // 30 tasks: failures in the first, middle and last segments (of 2, 3 or 4 claiming threads)
    const list = Array.from({ length: 30 }, (_, t) => ([4, 17, 25, 29].includes(t) ? -1 : [t * 100, 100 + t]))
    for (const workers of [1, 2, 3]) {
      const pool = await createPool({ module: fixture, init: { scale: 1 }, workers })
      for (let r = 0; r < 5; r++) expect(() => pool.sum(list, 2), `${workers} workers`).toThrow(/task 4 failed/)
      // and a failure only at the very end, in the last thread's segment
      const late = [...tasks, ...tasks, -1]
      for (let r = 0; r < 5; r++) expect(() => pool.map(late, 2)).toThrow(/task 26 failed/)
      expect(pool.sum(tasks, 2)).toEqual(pool.sum(tasks, 2))
      await pool.close()
    }
  })

  it('threads claim tasks: a slow calling thread runs fewer, the rows are the same', async () => {
    const pool = await createPool({ module: whoRan, init: { callerSleepMs: 20 }, workers: 1 })
    const ts = Array.from({ length: 24 }, (_, t) => t)
    const rows = pool.map(ts, 2)
    // every task ran once, into its own row
    expect(Array.from({ length: 24 }, (_, t) => rows[2 * t])).toEqual(ts)
    const byWorker = ts.filter((t) => rows[2 * t + 1] !== 0).length
    // the worker (no sleep) runs its home half (12) and takes the caller's from its back while the
    // caller sleeps: a static half would be 12
    expect(byWorker).toBeGreaterThan(12)
    expect(pool.sum(ts, 2)[0]).toBe((23 * 24) / 2)
    await pool.close()
  })

  it('warmUp runs every task on every thread, rounds times, and leaves results alone', async () => {
    const calls = new Int32Array(new SharedArrayBuffer(4))
    const pool = await createPool({ module: whoRan, init: { calls }, workers: 2 })
    const ts = [0, 1, 2, 3, 4]
    const before = pool.map(ts, 2)
    Atomics.store(calls, 0, 0)
    pool.warmUp(ts, 2, 2)
    expect(Atomics.load(calls, 0)).toBe(3 * ts.length * 2) // 2 workers + the caller
    Atomics.store(calls, 0, 0)
    pool.warmUp(ts, 2)
    expect(Atomics.load(calls, 0)).toBe(3 * ts.length * 3) // three rounds by default
    expect(Array.from(pool.map(ts, 2)).filter((_, i) => i % 2 === 0)).toEqual(
      Array.from(before).filter((_, i) => i % 2 === 0),
    )
    expect(() => pool.warmUp(ts, 2, 0)).toThrow(/positive integer/)
    await pool.close()
  })
})

describe('createPool: fixed task lists, wake-ups, closing', () => {
  it('a task list fixed with taskList gives the bits of the array, is a snapshot, and can be released', async () => {
    const pool = await createPool({ module: fixture, init: { scale: 0.1 }, workers: 2 })
    const arr = tasks.map((t) => [...t])
    const ref = pool.sum(arr, 2)
    const list = pool.taskList(arr)
    expect(list.length).toBe(tasks.length)
    // changing the array afterwards changes nothing: the list is the array as it was
    arr[3]![1] = 1
    arr.push([0, 5])
    for (let r = 0; r < 3; r++) expect(Array.from(pool.sum(list, 2))).toEqual(Array.from(ref))
    expect(Array.from(pool.map(list, 2))).toEqual(Array.from(pool.map(tasks, 2)))
    pool.warmUp(list, 2, 1)
    // lists of different lengths share the pool; an array between them is sent with its call
    const short = pool.taskList(tasks.slice(0, 4))
    expect(pool.map(short, 2).length).toBe(8)
    expect(Array.from(pool.sum(arr, 2))).not.toEqual(Array.from(ref))
    expect(Array.from(pool.sum(list, 2))).toEqual(Array.from(ref))
    list.release()
    expect(() => pool.sum(list, 2)).toThrow(/released or belongs to another pool/)
    expect(pool.map(short, 2).length).toBe(8)
    const other = await createPool({ module: fixture, init: { scale: 0.1 }, workers: 1 })
    expect(() => other.sum(short, 2)).toThrow(/released or belongs to another pool/)
    await other.close()
    await pool.close()
    expect(() => pool.taskList(tasks)).toThrow(/closed/)
  })

  it('a slow calling thread takes the finished rows between its tasks: the sum is still added in task order', async () => {
    // 40 tasks whose sum depends on the order of the additions (sums of 1/(k+1))
    const many = Array.from({ length: 40 }, (_, t) => [t * 997, 500 + 13 * t])
    const inOrder = new Float64Array(2)
    for (const [start, count] of many) {
      let s = 0
      for (let k = start; k < start + count!; k++) s += 1 / (k + 1)
      inOrder[0] += s * 0.3
      inOrder[1] += count!
    }
    const slow = await createPool({ module: slowCaller, init: { scale: 0.3, callerSleepMs: 2 }, workers: 1 })
    const list = slow.taskList(many)
    const a = slow.sum(list, 2)
    const b = slow.sum(many, 2)
    // the failing task last: rows taken between the caller's tasks never reach `out`
    const out = new Float64Array([1, 2])
    expect(() => slow.sum([...many, -1], 2, out)).toThrow(/task 40 failed/)
    expect(Array.from(out)).toEqual([1, 2])
    await slow.close()
    expect(Array.from(a)).toEqual(Array.from(inOrder))
    expect(Array.from(b)).toEqual(Array.from(inOrder))
  })

  it('sum leaves `out` alone when a task fails, and the pool goes on', async () => {
    const pool = await createPool({ module: fixture, init: { scale: 1 }, workers: 1 })
    const out = new Float64Array([7, 8])
    // (the failing task last: the rows before it are finished, and added early, before the failure is seen)
    expect(() => pool.sum([...tasks, -1], 2, out)).toThrow(/task 13 failed/)
    expect(Array.from(out)).toEqual([7, 8])
    const list = pool.taskList([...tasks, -1])
    expect(() => pool.sum(list, 2, out)).toThrow(/task 13 failed/)
    expect(Array.from(out)).toEqual([7, 8])
    expect(pool.sum(tasks, 2, out)).toBe(out)
    expect(out[1]).toBe(tasks.reduce((s, t) => s + t[1]!, 0))
    await pool.close()
  })

  it('spinning threads give the same bits; a bad spin is refused', async () => {
    const sums: number[][] = []
    for (const spinMicroseconds of [0, 50, 'auto'] as const) {
      const pool = await createPool({ module: fixture, init: { scale: 0.1 }, workers: 2, spinMicroseconds })
      const list = pool.taskList(tasks)
      for (let r = 0; r < 20; r++) sums.push(Array.from(pool.sum(list, 2)))
      await pool.close()
    }
    for (const s of sums) expect(s).toEqual(sums[0])
    await expect(createPool({ module: fixture, workers: 1, spinMicroseconds: -1 })).rejects.toThrow(
      /non-negative number or 'auto'/,
    )
    await expect(
      createPool({ module: fixture, workers: 1, spinMicroseconds: 'always' as unknown as number }),
    ).rejects.toThrow(/non-negative number or 'auto'/)
  })

  it("the adaptive spin ('auto') is bounded by the work: twice the caller's mean task, a sixteenth of a worker's call, 0.2 ms at most", () => {
    expect(callerSpinMs(0.5, 10)).toBeCloseTo(0.1, 12)
    expect(callerSpinMs(40, 10)).toBe(AUTO_SPIN_CAP_MS)
    expect(callerSpinMs(3, 0)).toBe(0)
    expect(workerSpinMs(1.6)).toBeCloseTo(0.1, 12)
    expect(workerSpinMs(35)).toBe(AUTO_SPIN_CAP_MS)
    expect(workerSpinMs(0)).toBe(0)
    expect(AUTO_SPIN_CAP_MS).toBe(0.2)
  })

  it("with 'auto' or the default, idle workers go to sleep: an idle pool uses (almost) no CPU", async () => {
    for (const spin of ['auto', undefined] as const) {
      const pool = await createPool({
        module: fixture,
        init: { scale: 1 },
        workers: 2,
        ...(spin ? { spinMicroseconds: spin } : {}),
      })
      const list = pool.taskList(Array.from({ length: 16 }, (_, t) => [t * 200_000, 200_000]))
      for (let r = 0; r < 5; r++) pool.sum(list, 2)
      // (the calling thread sleeps in its event loop; a worker spinning on would use about 300 ms of
      // CPU in each 300 ms window. V8's own threads may still compile or collect for tens of ms
      // after the calls, more on a loaded machine (54 ms once in CI): the CPU of a second window
      // too, and the smaller one counted. A spinning worker spins in both: a 2 s spin read 598 ms.)
      const idle = async (): Promise<number> => {
        const before = process.cpuUsage()
        await new Promise((ok) => setTimeout(ok, 300))
        const used = process.cpuUsage(before)
        return (used.user + used.system) / 1000
      }
      const first = await idle()
      const ms = first < 20 ? first : Math.min(first, await idle())
      await pool.close()
      expect(ms, String(spin)).toBeLessThan(20)
    }
  })

  it('close ends every worker (twice is harmless); an unclosed pool does not keep a process alive', async () => {
    const pool = await createPool({ module: fixture, init: { scale: 1 }, workers: 2 })
    pool.sum(pool.taskList(tasks), 2)
    await pool.close()
    await pool.close()
    // a process that leaves its pool open still exits (the workers wait in Atomics.wait, unref'd)
    const { spawnSync } = await import('node:child_process')
    const dist = new URL('../dist/index.js', import.meta.url).href
    const script = `const { createPool } = await import(${JSON.stringify(dist)});
      const pool = await createPool({ module: ${JSON.stringify(fixture.href)}, init: { scale: 1 }, workers: 2 });
      console.log(pool.sum(pool.taskList([[0, 3]]), 2)[1])`
    const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
      encoding: 'utf8',
      timeout: 20_000,
    })
    expect(child.stderr).toBe('')
    expect(child.stdout.trim()).toBe('3')
    expect(child.status).toBe(0)
  })
})

const source = `
fn nll(loss: f64, mu: f64, s: f64, x: f64[]) {
  for i in 0..len(x) {
    loss += log(1.0 + (x[i] - mu) * (x[i] - mu) / (s * s))
  }
}`

describe('tenetGradientPool', () => {
  const n = 4000,
    shards = 8
  const x = Float64Array.from({ length: n }, (_, i) => Math.sin(i * 12.9898) * 3)
  const parts = Array.from({ length: shards }, (_, k) =>
    sharedArray(x.subarray((k * n) / shards, ((k + 1) * n) / shards)),
  )

  it('the summed shard gradients are the gradient over all the data, bit-identical for any worker count', async () => {
    const whole = rev.typed(source)
    const ref = gradient(whole.nll!, [0, 0.3, 1.5, x], { loss: 0 })
    const results = []
    for (const workers of [1, 2]) {
      const pool = await tenetGradientPool({ source, entry: 'nll', loss: 0, workers, checks: false })
      expect(pool.workers).toBe(workers)
      results.push(pool.gradient(parts.map((p) => [0, 0.3, 1.5, p])))
      const per = pool.shardGradients(parts.map((p) => [0, 0.3, 1.5, p]))
      expect(per).toHaveLength(shards)
      expect((per[2]!.gradient[3] as Float64Array).length).toBe(n / shards)
      // kept between calls with `reuse`: the same values, in one block the pool overwrites
      const again = pool.shardGradients(
        parts.map((p) => [0, 0.3, 1.5, p]),
        true,
      )
      const g2 = again[2]!.gradient[3] as Float64Array
      expect(Array.from(g2)).toEqual(Array.from(per[2]!.gradient[3] as Float64Array))
      expect(again[5]!.loss).toBe(per[5]!.loss)
      const third = pool.shardGradients(
        parts.map((p) => [0, 0.3, 1.5, p]),
        true,
      )
      expect((third[2]!.gradient[3] as Float64Array).buffer).toBe(g2.buffer)
      await pool.close()
    }
    const [a, b] = results
    expect(a!.gradient[1]).toBe(b!.gradient[1])
    expect(a!.gradient[2]).toBe(b!.gradient[2])
    expect(a!.loss).toBe(b!.loss)
    expect(a!.gradient[1] as number).toBeCloseTo(ref[1] as number, 9)
    expect(a!.gradient[2] as number).toBeCloseTo(ref[2] as number, 9)
    // the loss: the sum over all points
    let l = 0
    for (const v of x) l += Math.log(1 + ((v - 0.3) * (v - 0.3)) / 2.25)
    expect(a!.loss).toBeCloseTo(l, 8)
    expect(a!.gradient[0]).toBe(shards) // ∂loss/∂loss, once per shard
  })

  it('says what is wrong', async () => {
    await expect(tenetGradientPool({ source, entry: 'nope', loss: 0, workers: 1 })).rejects.toThrow(
      /no function `nope`/,
    )
    const pool = await tenetGradientPool({ source, entry: 'nll', loss: 0, workers: 1 })
    expect(() => pool.gradient([])).toThrow(/no shards/)
    expect(() =>
      pool.gradient([
        [0, 0, 1, parts[0]!],
        [0, 0, 1, sharedArray(3)],
      ]),
    ).toThrow(/same argument types and array lengths/)
    await pool.close()
  })
})

describe('createWebPool outside a browser', () => {
  it('says to use the Node pool where there are no Web Workers', async () => {
    const { createWebPool } = await import('./web.js')
    await expect(createWebPool({ module: 'file:///nowhere.mjs' })).rejects.toThrow(
      /Web Workers are not available here: in Node, use `createPool`/,
    )
  })
})
