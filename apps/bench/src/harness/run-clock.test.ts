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
