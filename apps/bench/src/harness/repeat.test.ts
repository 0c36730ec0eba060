/**
 * `--repeat N` (`repeat.ts`): the parsing of the option, each row's summary over its repeats (the
 * median of the repeats' own ratios with their range, the repeats that failed), the merge of the
 * repeats' results, the budget's shares, and the whole path on toy workloads, in this process and
 * in fresh processes per repeat.
 */
import { spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, describe, expect, it } from 'vitest'
// @ts-expect-error: a plain ES module of the test fixtures (no types)
import { toyWorkloads } from '../../test/fixtures/toy-workloads.mjs'
import { formatRatioSpread } from '../report/format.js'
import { formatTextTable } from '../report/table.js'
import { writeReports } from '../report/write.js'
import { runIsolated } from './isolate.js'
import { mergeRepeats, parseRepeat, runRepeated, summariseRepeats } from './repeat.js'
import { type RepeatResult, type RowResult, runSuite, type SuiteResult } from './runner.js'
import type { Workload } from './types.js'

const dir = mkdtempSync(join(tmpdir(), 'bench-repeat-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))
const tiny = { timeMs: 2, minSamples: 2, warmupMs: 1, targetSampleMs: 0.2 }
const cli = fileURLToPath(new URL('../../dist/cli.js', import.meta.url))
const child = { script: fileURLToPath(new URL('../../test/fixtures/isolate-child.mjs', import.meta.url)), execArgv: [] }
if (!existsSync(cli))
  throw new Error('repeat.test.ts needs the built package: run `npx turbo run build --filter=@tenet/bench` first')

const id = { row: 'Tenet (cpu)', family: 'Tenet (cpu)', kind: 'gradient', case: 'n=10' } as const
const ok = (ratio: number, extra: Partial<RepeatResult> = {}): RepeatResult => ({
  status: 'ok',
  error: 1e-16,
  medianMs: ratio * 2,
  madMs: 0.01,
  samples: 10,
  clock: 'run',
  wallMedianMs: ratio * 2.5,
  ratio,
  setupHeapBytes: 100,
  ...extra,
})

describe('parseRepeat', () => {
  it('takes a whole number of runs, 1 when absent', () => {
    expect(parseRepeat(undefined)).toBe(1)
    expect(parseRepeat('1')).toBe(1)
    expect(parseRepeat('3')).toBe(3)
  })

  it.each(['0', 'x', '', '-1', '1.5', '2x', 'Infinity'])('rejects "%s" with a message naming the option', (v) => {
    expect(() => parseRepeat(v)).toThrow(`--repeat must be a whole number of runs, 1 or more, not "${v}"`)
  })

  it('the CLI says so on stderr and exits 1, before running anything', () => {
    for (const v of ['0', 'x']) {
      const r = spawnSync(process.execPath, [cli, 'sparse-dot', '--repeat', v, '--out', join(dir, 'never')], {
        encoding: 'utf8',
      })
      expect(r.status).toBe(1)
      expect(r.stderr).toBe(`tenet-bench: --repeat must be a whole number of runs, 1 or more, not "${v}"\n`)
      expect(existsSync(join(dir, 'never'))).toBe(false)
    }
  }, 30_000)
})

describe('summariseRepeats', () => {
  it('an odd number of repeats: the middle ratio, the range, every repeat kept', () => {
    const repeats = [ok(1.38), ok(1.31), ok(1.34, { error: 3e-16 })]
    const r = summariseRepeats(id, repeats)
    expect(r).toMatchObject({ ...id, status: 'ok', ratio: 1.34, ratioRange: [1.31, 1.38], okRepeats: 3 })
    expect(r.reason).toBeUndefined()
    // the repeats' medians and MADs, their samples summed, the largest error
    expect(r.medianMs).toBe(1.34 * 2)
    expect(r.wallMedianMs).toBe(1.34 * 2.5)
    expect(r.samples).toBe(30)
    expect(r.error).toBe(3e-16)
    expect(r.clock).toBe('run')
    expect(r.repeats).toEqual(repeats)
    expect(formatRatioSpread(r.ratio, r.ratioRange, r.okRepeats, 3)).toBe('1.34× (1.31–1.38)')
  })

  it('an even number: the mean of the middle two', () => {
    const r = summariseRepeats(id, [ok(2), ok(1), ok(4), ok(3)])
    expect(r.ratio).toBe(2.5)
    expect(r.ratioRange).toEqual([1, 4])
    expect(r.okRepeats).toBe(4)
  })

  it('a failed repeat: the ratio of the others, and how many repeats were ok', () => {
    const died: RepeatResult = { status: 'error', reason: 'its process ended (signal SIGKILL) while this row ran' }
    const r = summariseRepeats(id, [ok(1.5), died, ok(1.2)])
    expect(r).toMatchObject({ status: 'ok', ratio: 1.35, ratioRange: [1.2, 1.5], okRepeats: 2 })
    expect(r.reason).toBe('2 of 3 repeats ok; 1 error: its process ended (signal SIGKILL) while this row ran')
    expect(formatRatioSpread(r.ratio, r.ratioRange, r.okRepeats, 3)).toBe('1.35× (1.20–1.50; 2 of 3 repeats)')
    const one = summariseRepeats(id, [died, ok(1.25), died])
    expect(one).toMatchObject({ status: 'ok', ratio: 1.25, ratioRange: [1.25, 1.25], okRepeats: 1 })
    expect(one.reason).toBe('1 of 3 repeats ok; 2 error: its process ended (signal SIGKILL) while this row ran')
    expect(formatRatioSpread(one.ratio, one.ratioRange, one.okRepeats, 3)).toBe('1.25× (1 of 3 repeats)')
  })

  it('a row wrong in any repeat is wrong; one n/a in every repeat reads as in one run', () => {
    const wrong = summariseRepeats(id, [ok(1), { status: 'wrong', error: 0.5, reason: 'off' }, ok(1)])
    expect(wrong).toMatchObject({ status: 'wrong', error: 0.5, okRepeats: 2 })
    expect(wrong.reason).toBe('2 of 3 repeats ok; 1 wrong: off')
    const na = summariseRepeats(id, [
      { status: 'n/a', reason: 'cannot' },
      { status: 'n/a', reason: 'cannot' },
    ])
    expect(na).toMatchObject({ status: 'n/a', reason: 'cannot', okRepeats: 0 })
    expect(na.ratio).toBeUndefined()
    expect(na.ratioRange).toBeUndefined()
    const err = summariseRepeats(id, [
      { status: 'n/a', reason: 'budget' },
      { status: 'error', reason: 'boom' },
    ])
    expect(err).toMatchObject({ status: 'error', reason: '0 of 2 repeats ok; 1 n/a: budget; 1 error: boom' })
  })
})

/** A one-workload, one-case result of one repeat whose baseline took `baseMs` and the row `ratios`. */
const suite = (baseMs: number, rows: RowResult[]): SuiteResult => ({
  startedAt: '2026-11-28T00:00:00.000Z',
  durationMs: 10,
  machine: {} as SuiteResult['machine'],
  options: { full: false, measure: tiny, isolation: 'detach', clock: 'run' },
  workloads: [
    {
      id: 'w',
      title: 'W',
      cases: [
        {
          label: 'n=10',
          params: {},
          baseline: { name: 'plain', medianMs: baseMs, madMs: 0, samples: 5 },
          makeMs: 1,
        },
      ],
      rows,
      memory: { peakHeapUsedBytes: baseMs, heapDeltaBytes: 1, peakRssBytes: 1 },
      durationMs: 10,
    },
  ],
})

describe('mergeRepeats', () => {
  it("keeps each repeat's baseline and rows, the row's ratio from each repeat's own", () => {
    const m = mergeRepeats([
      suite(2, [{ ...id, ...ok(1.5) }]),
      suite(4, [{ ...id, ...ok(1.1) }]),
      suite(3, [{ ...id, ...ok(1.2) }]),
    ])
    expect(m.options.repeat).toBe(3)
    expect(m.durationMs).toBe(30)
    const w = m.workloads[0]!
    expect(w.cases[0]!.baseline.medianMs).toBe(3)
    expect(w.cases[0]!.baseline.samples).toBe(15)
    expect(w.cases[0]!.repeats!.map((c) => c!.baseline.medianMs)).toEqual([2, 4, 3])
    expect(w.memory.peakHeapUsedBytes).toBe(4)
    expect(w.durationMs).toBe(30)
    expect(w.rows).toHaveLength(1)
    expect(w.rows[0]).toMatchObject({ ...id, ratio: 1.2, ratioRange: [1.1, 1.5] })
    expect(w.rows[0]!.repeats!.map((r) => r.ratio)).toEqual([1.5, 1.1, 1.2])
    // the repeats do not repeat the row's name
    expect(w.rows[0]!.repeats![0]).not.toHaveProperty('row')
  })

  it('a repeat the budget stopped: its case null, its rows n/a', () => {
    const m = mergeRepeats([suite(2, [{ ...id, ...ok(1.5) }]), undefined], 60_000)
    const w = m.workloads[0]!
    expect(w.cases[0]!.repeats).toEqual([{ baseline: expect.objectContaining({ medianMs: 2 }), makeMs: 1 }, null])
    expect(w.rows[0]!.repeats![1]).toEqual({
      status: 'n/a',
      reason: 'not run: the time budget (--budget 60 s) was spent before this repeat',
    })
    expect(w.rows[0]).toMatchObject({ status: 'ok', ratio: 1.5, okRepeats: 1 })
  })
})

describe('runRepeated', () => {
  it('with one repeat, returns the run as it is (no repeat fields)', async () => {
    const one = suite(2, [{ ...id, ...ok(1.5) }])
    const seen: unknown[] = []
    const r = await runRepeated(1, async (x) => (seen.push(x), one), { budgetMs: 5000 })
    expect(r).toBe(one)
    expect(seen).toEqual([expect.objectContaining({ repeat: 0, budgetMs: 5000, studies: true })])
  })

  it('shares the budget among the repeats left, studies in the first only, none started once it is spent', {
    timeout: 20_000,
  }, async () => {
    const runs: Array<{ repeat: number; budgetMs?: number; studies: boolean }> = []
    const r = await runRepeated(
      3,
      async ({ repeat, budgetMs, studies }) => {
        runs.push({ repeat, ...(budgetMs !== undefined ? { budgetMs } : {}), studies })
        await new Promise((res) => setTimeout(res, 1500))
        return suite(2, [{ ...id, ...ok(1.5) }])
      },
      { budgetMs: 3000 },
    )
    expect(runs.map((x) => [x.repeat, x.studies])).toEqual([
      [0, true],
      [1, false],
    ])
    expect(runs[0]!.budgetMs).toBeCloseTo(1000, -2)
    // what was left after the first (at most 1500 ms), shared by the two repeats left
    expect(runs[1]!.budgetMs).toBeGreaterThan(200)
    expect(runs[1]!.budgetMs).toBeLessThanOrEqual(750)
    expect(r.workloads[0]!.rows[0]!.repeats!.map((x) => x.status)).toEqual(['ok', 'ok', 'n/a'])
    expect(r.workloads[0]!.cases[0]!.repeats![2]).toBeNull()
  })
})

describe('--repeat end to end', () => {
  it('in one process (--isolate off): each repeat its own baseline, the report gives median and range', async () => {
    const toy: Workload<{ v: number }> = {
      id: 'toy',
      title: 'Toy',
      cases: () => [
        { label: 'one', params: {}, make: () => ({ v: 3 }) },
        { label: 'two', params: {}, make: () => ({ v: 5 }) },
      ],
      baseline: { name: 'plain TS objective', setup: (c) => ({ run: () => void Math.sqrt(c.v) }) },
      rows: [
        {
          name: 'right',
          kind: 'gradient',
          setup: (c) => ({ run: () => void (0.5 / Math.sqrt(c.v)), check: () => ({ ok: true, error: 0 }) }),
        },
        { name: 'absent', kind: 'hessian', setup: () => ({ na: 'cannot express it' }) },
      ],
    }
    const order: string[] = []
    const result = await runRepeated(
      2,
      (r) => {
        order.push(`repeat ${r.repeat}`)
        return runSuite([toy], { full: false, measure: tiny, paired: false, studies: r.studies, progress: r.progress })
      },
      { progress: { start() {}, step: (label) => order.push(label), note() {}, done() {} } },
    )
    // the repeats interleave: every case once, then every case again
    expect(order.filter((s) => s.startsWith('repeat') || s.endsWith('baseline'))).toEqual([
      'repeat 0',
      'toy one · baseline',
      'toy two · baseline',
      'repeat 1',
      'toy one · baseline',
      'toy two · baseline',
    ])
    expect(result.options.repeat).toBe(2)
    const w = result.workloads[0]!
    for (const c of w.cases) {
      const right = w.rows.find((r) => r.case === c.label && r.row === 'right')!
      expect(right.status).toBe('ok')
      expect(right.repeats).toHaveLength(2)
      // each repeat's ratio is over that repeat's own baseline
      right.repeats!.forEach((x, i) => {
        expect(x.ratio).toBe(x.medianMs! / c.repeats![i]!.baseline.medianMs)
      })
      const ratios = right.repeats!.map((x) => x.ratio!)
      expect(right.ratio).toBe((ratios[0]! + ratios[1]!) / 2)
      expect(right.ratioRange).toEqual([Math.min(...ratios), Math.max(...ratios)])
      expect(w.rows.find((r) => r.case === c.label && r.row === 'absent')).toMatchObject({
        status: 'n/a',
        reason: 'cannot express it',
      })
    }
    const out = join(dir, 'off')
    writeReports(result, out)
    const md = readFileSync(join(out, 'report.md'), 'utf8')
    expect(md).toContain('Every case ran 2 times (`--repeat 2`)')
    expect(md).toContain('All repeats ran in this one process')
    expect(md).toMatch(
      /\| one \| right \| gradient \| [^|]+ \| [^|]+ \| \d+\.\d\d× \(\d+\.\d\d–\d+\.\d\d\) \| 0 \| ok \|/,
    )
    expect(formatTextTable(result)).toMatch(/\d\.\d\d× \(\d+\.\d\d–\d+\.\d\d\)/)
    const json = JSON.parse(readFileSync(join(out, 'results.json'), 'utf8')) as SuiteResult
    expect(json.workloads[0]!.rows[0]!.repeats).toHaveLength(2)
    expect(json.workloads[0]!.cases[0]!.repeats).toHaveLength(2)
    // the chart: a bar at the median, a line over the range
    expect(readFileSync(join(out, 'ratio-toy.svg'), 'utf8')).toContain('stroke="#333"/>')
  })

  it('isolated: every repeat in a new set of processes', async () => {
    const workloads = toyWorkloads({ cases: 1 }) as Workload[]
    const result = await runRepeated(2, (r) =>
      runIsolated(workloads, {
        full: false,
        measure: tiny,
        child,
        selection: { cases: 1 },
        studies: r.studies,
        progress: r.progress,
      }),
    )
    const w = result.workloads[0]!
    expect(w.rows.map((r) => `${r.row} ${r.status} ${r.okRepeats}`)).toEqual([
      'clean-1 ok 2',
      'detacher ok 2',
      'clean-2 ok 2',
    ])
    const pid = (x: RepeatResult) => (JSON.parse(x.reason!) as { pid: number }).pid
    const pids = w.rows.map((r) => r.repeats!.map(pid))
    // no process served two repeats
    const first = new Set(pids.map((p) => p[0]))
    for (const p of pids) expect(first.has(p[1]!)).toBe(false)
    expect(w.cases[0]!.repeats).toHaveLength(2)
    expect(w.study).toBeDefined()
  }, 120_000)
})
