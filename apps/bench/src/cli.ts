#!/usr/bin/env node
import { resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { repoRoot } from './data/adbench-path.js'
import { assembleWorkloads } from './harness/registry.js'
import { runIsolated, serveChild } from './harness/isolate.js'
import { parseRepeat, runRepeated } from './harness/repeat.js'
import { runSuite } from './harness/runner.js'
import { createProgress } from './harness/progress.js'
import { writeReports } from './report/write.js'
import { formatTextTable } from './report/table.js'
import { ROW_FAMILIES } from './rows/index.js'
import { QUICK_SET, WORKLOADS } from './workloads/index.js'

const HELP = `tenet-bench — the Tenet benchmark suite

usage: node apps/bench/dist/cli.js [workload ...] [options]

workloads: ${Object.keys(WORKLOADS).join(', ')}
           (none given: all of them on their quick sizes)

options:
  --full             every size (ADBench's ranges); minutes to tens of minutes
  --adbench <dir>    read GMM/BA instances from ADBench's data folder (<dir>/gmm/1k/…, <dir>/ba/…)
                     instead of generating them
  --rows <names>     only rows whose name or family contains one of these (comma-separated)
  --out <dir>        where to write results.json, report.md and the SVG charts
                     (default: <repo>/bench/results)
  --budget <s>       time budget in seconds: rows not started by then are reported n/a
                     (the report is still written)
  --no-study         skip the workloads' studies (leapfrog error vs steps, graph-embedding
                     training, checkpoint time vs memory)
  --isolate <how>    detach (default): each case in fresh processes, and a fresh one after any row
                     that invalidates a V8 protector (detaching an ArrayBuffer — wasm memory growth,
                     a WebGPU map — slows typed-array code for the rest of a process); row: every
                     row in a process of its own; off: everything in this process
  --repeat <n>       run the whole selection n times (default 1) and report each row's median
                     ratio with its range over the repeats, every ratio over the baseline of its
                     own repeat; with --isolate detach or row each repeat runs in new processes,
                     with off all repeats share this process (their spread then leaves out what
                     varies from process to process); studies run in the first repeat only, and
                     --budget covers all repeats (each gets an equal share of what is left)
  --quiet            no progress output
  --help             this text
`

/** What the command line selects: workload ids and a row filter (names or families, comma-separated). */
interface Selection {
  ids: string[]
  rows?: string | undefined
}

/** The workloads of a selection, with only the rows the filter names. */
function selectWorkloads({ ids, rows }: Selection) {
  const workloads = assembleWorkloads(ROW_FAMILIES, ids)
  if (!rows) return workloads
  const wanted = rows.split(',').map((s) => s.trim().toLowerCase())
  return workloads.map((w) => ({
    ...w,
    rows: w.rows.filter((r) =>
      wanted.some((x) => r.name.toLowerCase().includes(x) || (r.family ?? '').toLowerCase().includes(x)),
    ),
  }))
}

/** Set in the environment of the processes `runIsolated` starts. */
const CHILD_ENV = 'TENET_BENCH_CHILD'

async function main(): Promise<void> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      full: { type: 'boolean', default: false },
      adbench: { type: 'string' },
      rows: { type: 'string' },
      out: { type: 'string' },
      'no-study': { type: 'boolean', default: false },
      budget: { type: 'string' },
      quiet: { type: 'boolean', default: false },
      isolate: { type: 'string', default: 'detach' },
      repeat: { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
  })
  if (values.help) {
    process.stdout.write(HELP)
    return
  }
  const isolation = values.isolate
  if (isolation !== 'detach' && isolation !== 'row' && isolation !== 'off')
    throw new Error(`--isolate must be detach, row or off, not "${isolation}"`)
  const repeat = parseRepeat(values.repeat)
  const selection: Selection = { ids: positionals.length > 0 ? positionals : QUICK_SET, rows: values.rows }
  const workloads = selectWorkloads(selection)
  const progress = createProgress(process.stderr, !values.quiet)
  const options = {
    full: values.full,
    ...(values.adbench ? { adbenchDir: resolve(values.adbench) } : {}),
    progress,
    studies: !values['no-study'],
    ...(values.budget ? { budgetMs: Number(values.budget) * 1000 } : {}),
  }
  // each repeat a whole run: in new child processes unless --isolate off (harness/repeat.ts)
  const result = await runRepeated(
    repeat,
    (r) => {
      const { budgetMs: _, ...rest } = options
      const once = {
        ...rest,
        progress: r.progress,
        studies: r.studies,
        ...(r.budgetMs !== undefined ? { budgetMs: r.budgetMs } : {}),
      }
      return isolation === 'off'
        ? runSuite(workloads, once)
        : runIsolated(workloads, {
            ...once,
            isolation,
            selection,
            // this script again (a bundle of it too), in child mode
            child: { script: process.argv[1]!, env: { [CHILD_ENV]: '1' } },
          })
    },
    { ...(options.budgetMs !== undefined ? { budgetMs: options.budgetMs } : {}), studies: options.studies, progress },
  )
  process.stdout.write(formatTextTable(result))
  const outDir = resolve(values.out ?? resolve(repoRoot, 'bench', 'results'))
  const written = writeReports(result, outDir)
  process.stdout.write(`\nwrote ${written.length} files to ${outDir}\n`)
}

if (process.env[CHILD_ENV] === '1') serveChild((selection) => selectWorkloads(selection as Selection))
else
  main().catch((e: unknown) => {
    process.stderr.write(`tenet-bench: ${e instanceof Error ? e.message : String(e)}\n`)
    process.exitCode = 1
  })
