import { describe, expect, it } from 'vitest'
import { act, makeSchedule, type Action } from './action.js'
import { checkSchedule, ScheduleError } from './check.js'
import { costOf } from './cost.js'
import { invertSchedule } from './invert.js'
import { bennettSchedule } from './bennett.js'

const sched = (steps: number, actions: Action[], initial: number[] = [0]) =>
  makeSchedule('test', steps, () => actions[Symbol.iterator](), initial)

function rejects(steps: number, actions: Action[], pattern: RegExp, options = {}): void {
  let error: unknown
  try {
    checkSchedule(sched(steps, actions), options)
  } catch (e) {
    error = e
  }
  expect(error).toBeInstanceOf(ScheduleError)
  expect((error as Error).message).toMatch(pattern)
}

describe('checkSchedule', () => {
  it('accepts a hand-written checkpointing schedule and reports its cost', () => {
    const report = checkSchedule(
      sched(2, [
        act.store(0),
        act.forward(1),
        act.free(0),
        act.forward(2),
        act.free(2),
        act.adjoint(2),
        act.free(1),
        act.restore(0),
        act.adjoint(1),
        act.drop(0),
      ]),
      { gradient: true, final: [0] },
    )
    expect(report.cost).toEqual({ forward: 2, uncompute: 0, adjoint: 2, stores: 1, restores: 1, peakStates: 3 })
    expect(report.actions).toBe(10)
    expect(report.frees).toBe(4)
  })

  it('every forward reads a live state', () => {
    rejects(3, [act.forward(2)], /forward reads state 1, which is not live/)
    rejects(3, [act.forward(1), act.forward(1)], /already live/)
    rejects(3, [act.forward(4)], /out of range/)
  })

  it('every uncompute clears a live state from a live predecessor', () => {
    rejects(3, [act.uncompute(1)], /not live/)
    rejects(3, [act.forward(1), act.forward(2), act.uncompute(1), act.uncompute(2)], /reads state 1/)
  })

  it('every restore reads a stored state; stores and frees need their state', () => {
    rejects(3, [act.restore(0)], /restore reads state 0, which is not stored/)
    rejects(3, [act.store(0), act.restore(0)], /already live/)
    rejects(3, [act.store(1)], /store copies state 1/)
    rejects(3, [act.store(0), act.store(0)], /already stored/)
    rejects(3, [act.free(2)], /not live/)
    rejects(3, [act.drop(0)], /not stored/)
  })

  it('the adjoint sweep covers every step exactly once, in reverse order, after the output', () => {
    rejects(2, [act.forward(1), act.adjoint(1)], /before the output state 2/)
    rejects(2, [act.forward(1), act.forward(2), act.adjoint(1)], /expected step 2, got 1/)
    rejects(2, [act.forward(1), act.forward(2), act.adjoint(2), act.adjoint(2)], /expected step 1, got 2/)
    rejects(2, [act.forward(1), act.forward(2), act.adjoint(2)], /incomplete/)
    rejects(2, [act.forward(1), act.forward(2), act.free(1), act.adjoint(2)], /adjoint reads state 1/)
    rejects(2, [act.forward(1), act.forward(2), act.free(2), act.adjoint(2, true)], /clears state 2, which is not live/)
    rejects(2, [act.forward(1), act.forward(2)], /expected 2 adjoint steps, got 0/, { gradient: true })
  })

  it('reversible schedules may not discard information', () => {
    rejects(2, [act.forward(1), act.free(1)], /reversible/, { reversible: true })
    rejects(2, [act.store(0)], /reversible/, { reversible: true })
  })

  it('checks the end state when asked', () => {
    rejects(2, [act.forward(1), act.forward(2)], /expected live \{0, 2\}/, { final: [0, 2] })
    rejects(1, [act.store(0), act.forward(1)], /no snapshots/, { final: [0, 1] })
  })

  it('reports the failing position', () => {
    try {
      costOf(sched(3, [act.forward(1), act.forward(3)]))
      expect.unreachable()
    } catch (e) {
      expect(e).toBeInstanceOf(ScheduleError)
      expect((e as ScheduleError).index).toBe(1)
      expect((e as ScheduleError).action).toEqual(act.forward(3))
    }
  })

  it('an inverse schedule starts where the original ended and ends where it started', () => {
    const inv = invertSchedule(bennettSchedule({ steps: 9, k: 3 }))
    expect(inv.initial).toEqual([0, 9])
    checkSchedule(inv, { reversible: true, final: [0] })
    expect(() => invertSchedule(sched(2, [act.store(0)]))).toThrow(ScheduleError)
  })
})
