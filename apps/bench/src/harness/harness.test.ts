import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { formatTextTable } from '../report/table.js'
import { writeReports } from '../report/write.js'
import { assembleWorkloads, defineRowFamily } from './registry.js'
import { runSuite } from './runner.js'
import type { Workload } from './types.js'
import { median, medianAbsoluteDeviation } from './stats.js'
import { gmmCase } from '../workloads/gmm.js'
import { generateGmm } from '../data/gmm-data.js'
import { gmmWorkload } from '../workloads/gmm.js'

const tiny = { timeMs: 5, minSamples: 2, warmupMs: 1, targetSampleMs: 0.2 }
const out = mkdtempSync(join(tmpdir(), 'tenet-bench-report-'))
afterAll(() => rmSync(out, { recursive: true, force: true }))

describe('stats', () => {
  it('median and MAD', () => {
    expect(median([3, 1, 2])).toBe(2)
    expect(median([4, 1, 2, 3])).toBe(2.5)
    expect(medianAbsoluteDeviation([1, 2, 3, 4, 100])).toBe(1)
  })
})

describe('harness', () => {
  it('times ok rows, reports wrong rows untimed, n/a rows with their reason, and writes every report', async () => {
    let wrongRan = 0
    const toy: Workload<{ v: number }> = {
      id: 'toy',
      title: 'Toy',
      cases: () => [{ label: 'one', params: { v: 3 }, make: () => ({ v: 3 }) }],
      baseline: { name: 'plain TS objective', setup: (c) => ({ run: () => void Math.sqrt(c.v) }) },
      rows: [
        {
          name: 'right',
          kind: 'gradient',
          setup: (c) => ({ run: () => void (0.5 / Math.sqrt(c.v)), check: () => ({ ok: true, error: 0 }) }),
        },
        {
          name: 'broken',
          kind: 'gradient',
          setup: () => ({ run: () => void wrongRan++, check: () => ({ ok: false, error: 1, reason: 'off by one' }) }),
        },
        { name: 'absent', kind: 'hessian', setup: () => ({ na: 'cannot express it' }) },
        {
          name: 'throws',
          kind: 'objective',
          setup: () => {
            throw new Error('boom')
          },
        },
      ],
      study: () => ({
        title: 'a study',
        xLabel: 'x',
        yLabel: 'y',
        logX: true,
        logY: true,
        series: [
          {
            name: 's',
            points: [
              [1, 1e-3],
              [10, 1e-2],
            ],
          },
        ],
      }),
    }
    const result = await runSuite([toy], { full: false, measure: tiny, paired: false })
    const rows = result.workloads[0].rows
    expect(rows.map((r) => r.status)).toEqual(['ok', 'wrong', 'n/a', 'error'])
    expect(rows[0].medianMs).toBeGreaterThan(0)
    expect(rows[0].ratio).toBeGreaterThan(0)
    // (timed alone: the pairs are opt-in, TENET_BENCH_PAIRED=1)
    expect(rows[0].pairs).toBeUndefined()
    expect(rows[1].medianMs).toBeUndefined()
    expect(wrongRan).toBe(0)
    expect(rows[2].reason).toBe('cannot express it')
    expect(rows[3].reason).toContain('boom')
    expect(result.machine.cpus).toBeGreaterThan(0)
    expect(result.machine.node).toBe(process.version)
    expect(result.workloads[0].memory.peakHeapUsedBytes).toBeGreaterThan(0)

    const table = formatTextTable(result)
    expect(table).toContain('wrong')
    expect(table).toContain('n/a')
    const files = writeReports(result, out)
    expect(files.map((f) => f.split(/[\\/]/).pop()).sort()).toEqual([
      'ratio-toy.svg',
      'report.md',
      'results.json',
      'toy-study.svg',
    ])
    expect(JSON.parse(readFileSync(join(out, 'results.json'), 'utf8')).workloads[0].id).toBe('toy')
    expect(readFileSync(join(out, 'ratio-toy.svg'), 'utf8')).toMatch(/^<svg[\s\S]*<\/svg>\n$/)
    expect(readFileSync(join(out, 'report.md'), 'utf8')).toContain('| case |')
  })

  it('with the pairs on, times a row in pairs with the baseline', async () => {
    const toy: Workload<{ v: number }> = {
      id: 'toy',
      title: 'Toy',
      cases: () => [{ label: 'one', params: {}, make: () => ({ v: 3 }) }],
      baseline: { name: 'plain TS objective', setup: (c) => ({ run: () => void Math.sqrt(c.v) }) },
      rows: [
        {
          name: 'right',
          kind: 'objective',
          setup: (c) => ({ run: () => void Math.sqrt(c.v), check: () => ({ ok: true, error: 0 }) }),
        },
      ],
    }
    // (the option, not the environment: test files share process.env in vitest's threads)
    const result = await runSuite([toy], { full: false, measure: tiny, paired: true })
    const [row] = result.workloads[0].rows
    // the ratio is the pairs' median (measurePaired), not the row's median over the baseline's
    expect(row.pairs).toBeGreaterThanOrEqual(tiny.minSamples)
    expect(row.pairedBaselineMs).toBeGreaterThan(0)
    expect(row.ratio).toBeGreaterThan(0)
  })

  it('a spent time budget reports the rows not started n/a (the run still completes)', async () => {
    let ran = 0
    const slow: Workload<{ v: number }> = {
      id: 'slow',
      title: 'Slow',
      cases: () => [
        { label: 'one', params: {}, make: () => ({ v: 1 }) },
        { label: 'two', params: {}, make: () => ({ v: 2 }) },
      ],
      baseline: { name: 'plain TS objective', setup: (c) => ({ run: () => void Math.sqrt(c.v) }) },
      rows: [
        {
          name: 'waits',
          kind: 'gradient',
          setup: () => ({
            run: () => void ran++,
            check: async () => {
              await new Promise((r) => setTimeout(r, 1500))
              return { ok: true, error: 0 }
            },
          }),
        },
      ],
    }
    const result = await runSuite([slow], { full: false, measure: tiny, budgetMs: 1000 })
    const rows = result.workloads[0].rows
    expect(rows.map((r) => r.status)).toEqual(['ok', 'n/a'])
    expect(rows[1].reason).toMatch(/time budget/)
    expect(ran).toBeGreaterThan(0)
  })

  it('runs a real workload on a tiny case, checking the plain-TS gradient first', async () => {
    const w = {
      ...gmmWorkload,
      cases: () => [{ label: 'tiny', params: {}, make: () => gmmCase(generateGmm({ d: 3, k: 2, n: 10, seed: 1 })) }],
    }
    const result = await runSuite([w], { full: false, measure: tiny })
    expect(result.workloads[0].rows[0]).toMatchObject({ status: 'ok', kind: 'gradient' })
  })

  it('assembles row families onto workloads and rejects unknown ids', () => {
    const family = defineRowFamily({
      family: 'Extra',
      rows: { bessel: [{ name: 'extra', kind: 'gradient', setup: () => ({ na: 'later' }) }] },
    })
    const [bessel] = assembleWorkloads([family], ['bessel'])
    expect(bessel.rows.at(-1)).toMatchObject({ name: 'extra', family: 'Extra' })
    expect(() => assembleWorkloads([family], ['nope'])).toThrow(/unknown workload "nope"; available: bessel/)
  })
})
