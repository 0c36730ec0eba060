import { describe, expect, it } from 'vitest'
import { claimTasks, ctrlWords, resetSegments, segmentAt, segmentStart, type TaskFailure } from './claim.js'

/** A fresh call's shared state for `threads` claiming threads and `n` tasks of one output number each. */
function call(n: number, threads: number) {
  const ctrl = new Int32Array(new SharedArrayBuffer(4 * ctrlWords(threads)))
  resetSegments(ctrl, threads)
  const block = new Float64Array(new SharedArrayBuffer(8 * n))
  const done = new Int32Array(new SharedArrayBuffer(4 * n))
  const tasks = Array.from({ length: n }, (_, t) => t)
  return { ctrl, block, done, tasks }
}

describe('claimTasks: home segments', () => {
  it('segments cut the list into contiguous, nearly equal parts, one per thread, on lines of their own', () => {
    for (const n of [0, 1, 5, 10, 13, 128])
      for (const threads of [1, 2, 3, 16]) {
        const starts = Array.from({ length: threads + 1 }, (_, s) => segmentStart(s, n, threads))
        expect(starts[0]).toBe(0)
        expect(starts[threads]).toBe(n)
        for (let s = 0; s < threads; s++) {
          const len = starts[s + 1]! - starts[s]!
          expect(len).toBeGreaterThanOrEqual(Math.floor(n / threads))
          expect(len).toBeLessThanOrEqual(Math.ceil(n / threads))
        }
      }
    // each segment's counters on a 128-byte line of their own, after the control words
    expect(segmentAt(0) * 4).toBe(128)
    expect((segmentAt(1) - segmentAt(0)) * 4).toBe(128)
    expect(ctrlWords(3)).toBe(segmentAt(3))
  })

  it('a thread alone runs its own segment front to back, then the others from their backs, each task once', () => {
    for (const [slot, threads, want] of [
      [0, 2, [0, 1, 2, 3, 4, 9, 8, 7, 6, 5]],
      [1, 2, [5, 6, 7, 8, 9, 4, 3, 2, 1, 0]],
      [2, 3, [6, 7, 8, 9, 2, 1, 0, 5, 4, 3]],
      [0, 1, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]],
    ] as const) {
      const { ctrl, block, done, tasks } = call(10, threads)
      const order: number[] = []
      const ran = { tasks: 0 }
      const failure = claimTasks(
        (t, out) => {
          order.push(t as number)
          out[0] = 1 + (t as number)
        },
        tasks,
        1,
        1,
        block,
        ctrl,
        done,
        7,
        slot,
        threads,
        false,
        ran,
      )
      expect(failure).toBeUndefined()
      expect(order).toEqual(want)
      expect(ran.tasks).toBe(10)
      expect(Array.from(block)).toEqual(tasks.map((t) => t + 1))
      expect(Array.from(done)).toEqual(tasks.map(() => 7))
    }
  })

  it('an owner and a thread taking from its back never get the same task (interleaved in one thread)', () => {
    // thread B (slot 1) runs to the end inside A's (slot 0) third task: B takes its own segment,
    // then A's from the back; A then finds its segment taken
    for (const n of [2, 3, 10, 11, 40]) {
      const { ctrl, block, done, tasks } = call(n, 2)
      const runs = new Array<string>(n).fill('')
      let aTasks = 0
      const b = () =>
        claimTasks(
          (t, out) => {
            runs[t as number] += 'B'
            out[0] = t as number
          },
          tasks,
          1,
          1,
          block,
          ctrl,
          done,
          1,
          1,
          2,
          true,
        )
      claimTasks(
        (t, out) => {
          runs[t as number] += 'A'
          out[0] = t as number
          if (++aTasks === Math.min(3, segmentStart(1, n, 2))) b()
        },
        tasks,
        1,
        1,
        block,
        ctrl,
        done,
        1,
        0,
        2,
      )
      const where = `n ${n}`
      // every task exactly once; A's are a prefix of its segment, B has the rest
      expect(
        runs.every((r) => r === 'A' || r === 'B'),
        where,
      ).toBe(true)
      const a = runs.flatMap((r, t) => (r === 'A' ? [t] : []))
      expect(a, where).toEqual(Array.from({ length: a.length }, (_, t) => t))
      expect(Array.from(block), where).toEqual(tasks)
    }
  })

  it('a failure stops only its thread; the others take its segment, and the lowest failing task is the one reported', () => {
    // B (slot 1) fails on task 7 of its segment [5, 10) while A (slot 0) is in its first task; A
    // then runs the rest of its own segment and what B left of its own (from the back: 9, 8)
    const { ctrl, block, done, tasks } = call(10, 2)
    const ranBy = new Array<string>(10).fill('')
    let bFailure: TaskFailure | undefined
    const task = (who: string) => (t: unknown) => {
      if (t === 7 || t === 8) throw new Error(`task ${t} refused`)
      ranBy[t as number] += who
    }
    const aFailure = claimTasks(
      (t, out) => {
        if (t === 0) bFailure = claimTasks(task('B'), tasks, 1, 1, block, ctrl, done, 1, 1, 2, true)
        task('A')(t)
        out[0] = 1
      },
      tasks,
      1,
      1,
      block,
      ctrl,
      done,
      1,
      0,
      2,
    )
    expect(bFailure).toMatchObject({ index: 7, worker: true })
    // A reaches task 8 from the back after 9, and fails there: the lower failure (7) is B's
    expect(aFailure).toMatchObject({ index: 8, worker: false })
    expect(ranBy).toEqual(['A', 'A', 'A', 'A', 'A', 'B', 'B', '', '', 'A'])
    expect(Atomics.load(ctrl, 1)).toBe(1)
  })
})
