import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
// @ts-expect-error: a plain ES module of the test fixtures (no types)
import { toyWorkloads } from '../../test/fixtures/toy-workloads.mjs'
import { runIsolated } from './isolate.js'
import { invalidatedProtectors } from './protectors.js'
import type { RowResult } from './runner.js'
import type { Workload } from './types.js'

const tiny = { timeMs: 2, minSamples: 2, warmupMs: 1, targetSampleMs: 0.2 }
const child = { script: fileURLToPath(new URL('../../test/fixtures/isolate-child.mjs', import.meta.url)), execArgv: [] }
/** What a toy row saw when it was set up: its process, its place in it, whether a buffer had been detached there. */
const seen = (r: RowResult) => JSON.parse(r.reason!) as { pid: number; seq: number; detachedBefore: boolean; c: number }
// the child imports the built harness (turbo builds the package before its tests)
if (!existsSync(fileURLToPath(new URL('../../dist/harness/child.js', import.meta.url))))
  throw new Error('isolate.test.ts needs the built package: run `npx turbo run build --filter=@tenet/bench` first')
const byName = (rows: RowResult[], c: string) =>
  Object.fromEntries(rows.filter((r) => r.case === c).map((r) => [r.row, r]))

describe('protector logs', () => {
  it('names each invalidated protector once, in order', () => {
    const log =
      'x\nInvalidating protector cell ArrayBufferDetaching\nsome output\nInvalidating protector cell ArrayConstructor\nInvalidating protector cell ArrayBufferDetaching\n'
    expect(invalidatedProtectors(log)).toEqual(['ArrayBufferDetaching', 'ArrayConstructor'])
    expect(invalidatedProtectors('Invalidating protector cells are not lines of V8')).toEqual([])
  })
})

describe('runIsolated', () => {
  it('never times a row after another row detached a buffer in its process; learns which rows detach', async () => {
    const workloads = toyWorkloads({}) as Workload[]
    // (with the pairs on in the children: their own environment, not this process's)
    const r = await runIsolated(workloads, {
      full: false,
      measure: tiny,
      child: { ...child, env: { TENET_BENCH_PAIRED: '1' } },
      selection: {},
    })
    expect(r.options.isolation).toBe('detach')
    const w = r.workloads[0]!
    // rows in the workload's order, every one ok, both cases' baselines timed
    expect(w.rows.map((x) => `${x.case} ${x.row}`)).toEqual([
      'a clean-1',
      'a detacher',
      'a clean-2',
      'b clean-1',
      'b detacher',
      'b clean-2',
    ])
    expect(w.rows.every((x) => x.status === 'ok' && x.ratio! > 0)).toBe(true)
    expect(w.cases.map((c) => c.label)).toEqual(['a', 'b'])
    // no row saw a detached buffer in its process before it ran; the detaching row says so
    for (const x of w.rows) {
      expect(seen(x).detachedBefore).toBe(false)
      expect(x.ranAfter).toBeUndefined()
    }
    const a = byName(w.rows, 'a'),
      b = byName(w.rows, 'b')
    expect(a.detacher!.invalidated).toEqual(['ArrayBufferDetaching'])
    expect(a['clean-1']!.invalidated).toBeUndefined()
    // case a: the detaching row ended its process, so clean-2 ran in a new one
    expect(seen(a['clean-1']!).pid).toBe(seen(a.detacher!).pid)
    expect(seen(a['clean-2']!).pid).not.toBe(seen(a.detacher!).pid)
    // case b: a process of its own (cases never share one), the known detacher moved last, one process
    expect(seen(b['clean-1']!).pid).not.toBe(seen(a['clean-2']!).pid)
    expect(new Set([b['clean-1'], b.detacher, b['clean-2']].map((x) => seen(x!).pid)).size).toBe(1)
    expect([b['clean-1'], b['clean-2'], b.detacher].map((x) => seen(x!).seq)).toEqual([1, 2, 3])
    expect(seen(b['clean-2']!).c).toBe(2)
    // rows in a clean process are timed in pairs with the baseline; the detacher, which broke a
    // protector in its own setup, is not (the baseline beside it would be slowed): its ratio is
    // against the case's baseline median
    for (const x of [a['clean-1'], a['clean-2'], b['clean-1'], b['clean-2']]) expect(x!.pairs).toBeGreaterThan(0)
    for (const x of [a.detacher, b.detacher]) expect(x!.pairs).toBeUndefined()
    // the study ran in a process of its own too
    expect(w.study?.title).toMatch(/^study in \d+$/)
    expect(w.study?.title).not.toContain(String(seen(b.detacher!).pid))
  }, 120_000)

  it('gives every row a process with isolation "row", and fails only the row whose process died', async () => {
    const workloads = toyWorkloads({ crash: true, cases: 1 }) as Workload[]
    const r = await runIsolated(workloads, {
      full: false,
      measure: tiny,
      child,
      selection: { crash: true, cases: 1 },
      isolation: 'row',
      studies: false,
    })
    const rows = r.workloads[0]!.rows
    const crashed = rows.filter((x) => x.row === 'crash')
    expect(crashed.map((x) => x.status)).toEqual(['error'])
    expect(crashed[0]!.reason).toBe('its process ended (exit code 7) while this row ran')
    const ok = rows.filter((x) => x.row !== 'crash')
    expect(ok.every((x) => x.status === 'ok' && !seen(x).detachedBefore && seen(x).seq === 1)).toBe(true)
    expect(new Set(ok.map((x) => seen(x).pid)).size).toBe(ok.length)
    expect(r.workloads[0]!.study).toBeUndefined()
  }, 120_000)
})
