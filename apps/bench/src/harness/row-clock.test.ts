/**
 * The clock of each row's samples: rows whose work runs on other threads (`Row.clock: 'wall'`)
 * and rows timed in pairs are on the wall clock, the rest on the run clock where the system
 * reports it; results and report say which, and a thread row's speed-up compares wall with wall.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { clockNote, speedUps, writeReports } from '../report/write.js'
import { sampleClocks } from './run-clock.js'
import { type RowResult, runRow, runSuite, type SuiteResult, type WorkloadResult } from './runner.js'
import type { Row, Workload } from './types.js'

const dir = mkdtempSync(join(tmpdir(), 'row-clock-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const tiny = { timeMs: 5, minSamples: 2, warmupMs: 1, targetSampleMs: 0.2 }
const delayKnown = sampleClocks().delayKnown

type Case = { v: number }
const row = (name: string, extra: Partial<Row<Case>> = {}): Row<Case> => ({
  name,
  kind: 'gradient',
  setup: (c) => ({ run: () => void (0.5 / Math.sqrt(c.v)), check: () => ({ ok: true, error: 0 }) }),
  ...extra,
})
const toy = (rows: Row<Case>[]): Workload<Case> => ({
  id: 'toy',
  title: 'Toy',
  cases: () => [{ label: 'one', params: { v: 3 }, make: () => ({ v: 3 }) }],
  baseline: { name: 'plain TS objective', setup: (c) => ({ run: () => void Math.sqrt(c.v) }) },
  rows,
})

describe('runRow: the clock of a row', () => {
  it("times a row that says `clock: 'wall'` on the wall clock, its ratio over the baseline's wall median", async () => {
    const baseline = { medianMs: 1, madMs: 0, samples: 5, wallMedianMs: 4 }
    const r = await runRow(row('threads', { clock: 'wall', speedUpOver: 'one' }), 'one', { v: 3 }, baseline, tiny)
    expect(r.status).toBe('ok')
    expect(r.clock).toBe('wall')
    expect(r.wallMedianMs).toBe(r.medianMs)
    expect(r.ratio).toBe(r.medianMs! / 4)
    expect(r.speedUpOver).toBe('one')
  })

  it('times other rows on the run clock where the system reports it, their ratio over the baseline on it', async () => {
    const baseline = { medianMs: 1, madMs: 0, samples: 5, wallMedianMs: 4 }
    const r = await runRow(row('one'), 'one', { v: 3 }, baseline, tiny)
    expect(r.clock).toBe(delayKnown ? 'run' : 'wall')
    expect(r.wallMedianMs).toBeGreaterThan(0)
    expect(r.ratio).toBe(r.medianMs! / 1)
    expect(r.speedUpOver).toBeUndefined()
  })
})

describe('the report: which clock timed which rows', () => {
  it("records the suite's clock in the results and says it in the report", async () => {
    const result = await runSuite([toy([])], { full: false, measure: tiny, studies: false })
    expect(result.options.clock).toBe(delayKnown ? 'run' : 'wall')
    const out = join(dir, 'clock')
    writeReports(result, out)
    const md = readFileSync(join(out, 'report.md'), 'utf8')
    expect(md).toContain(delayKnown ? 'timed on the run clock' : 'timed in wall time')
  })

  it.skipIf(!delayKnown)('with the pairs on, says the paired rows were timed on the wall clock', async () => {
    const result = await runSuite([toy([row('row')])], { measure: tiny, full: false, studies: false, paired: true })
    const r = result.workloads[0]!.rows[0]!
    expect(r.pairs).toBeGreaterThan(0)
    expect(r.clock).toBe('wall')
    const out = join(dir, 'paired')
    writeReports(result, out)
    const md = readFileSync(join(out, 'report.md'), 'utf8')
    expect(md).toMatch(/timed in pairs with the baseline[^.]*on the wall clock[^.]*: Toy: row gradient\./)
    expect(JSON.parse(readFileSync(join(out, 'results.json'), 'utf8')).workloads[0].rows[0].clock).toBe('wall')
  })

  it('names the rows timed on the wall clock where the rest were on the run clock', () => {
    const rows: RowResult[] = [
      { row: 'one', family: 'f', kind: 'gradient', case: 'a', status: 'ok', clock: 'run', medianMs: 2 },
      { row: 'threads', family: 'f', kind: 'gradient', case: 'a', status: 'ok', clock: 'wall', medianMs: 1 },
      { row: 'threads', family: 'f', kind: 'gradient', case: 'b', status: 'ok', clock: 'wall', medianMs: 1 },
    ]
    const w = { title: 'W', rows } as WorkloadResult
    const run = { options: { clock: 'run' }, workloads: [w] } as SuiteResult
    expect(clockNote(run)).toMatch(/other threads[^:]*wall clock[^:]*: W: threads gradient\.$/)
    expect(clockNote(run)).not.toMatch(/one gradient/)
    // every row on the wall clock: the note says so once, naming none
    const wall = { options: { clock: 'wall' }, workloads: [w] } as SuiteResult
    expect(clockNote(wall)).toMatch(/^Samples were timed in wall time[\s\S]*long\.$/)
  })
})

describe('speedUps', () => {
  it("is the named row's wall-clock median over this row's, per case, both on the wall clock", () => {
    const r = (row: string, c: string, medianMs: number, wallMedianMs: number, extra: Partial<RowResult> = {}) =>
      ({ row, family: 'f', kind: 'jacobian', case: c, status: 'ok', medianMs, wallMedianMs, ...extra }) as RowResult
    const w = {
      rows: [
        // the one-thread row on the run clock: 3 ms (wall 5 ms, it lost its core); two threads 2.5 ms
        r('one', 'a', 3, 5, { clock: 'run' }),
        r('two', 'a', 2.5, 2.5, { clock: 'wall', speedUpOver: 'one' }),
        r('one', 'b', 4, 4, { clock: 'run' }),
        r('two', 'b', 2, 2, { clock: 'wall', speedUpOver: 'one' }),
        // no one-thread row of that kind on case c: no speed-up
        r('two', 'c', 2, 2, { clock: 'wall', speedUpOver: 'one' }),
      ],
    } as WorkloadResult
    expect(speedUps(w)).toEqual([
      { row: 'two', kind: 'jacobian', over: 'one', case: 'a', speedUp: 2 },
      { row: 'two', kind: 'jacobian', over: 'one', case: 'b', speedUp: 2 },
    ])
  })

  it('is in the report of a suite with a thread row', async () => {
    const result = await runSuite([toy([row('one'), row('two', { clock: 'wall', speedUpOver: 'one' })])], {
      measure: tiny,
      full: false,
      studies: false,
    })
    const rows = result.workloads[0]!.rows
    expect(rows[1]!.clock).toBe('wall')
    const out = join(dir, 'speed-up')
    writeReports(result, out)
    const md = readFileSync(join(out, 'report.md'), 'utf8')
    const s = rows[0]!.wallMedianMs! / rows[1]!.wallMedianMs!
    expect(md).toContain(
      `Speed-up of two gradient over one (its median over this row’s, both rows’ samples on the wall clock): one ${s.toFixed(2)}×.`,
    )
  })
})
