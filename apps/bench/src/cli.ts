#!/usr/bin/env node
import { resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { repoRoot } from './data/adbench-path.js'
import { assembleWorkloads } from './harness/registry.js'
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
  --quiet            no progress output
  --help             this text
`

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
      help: { type: 'boolean', short: 'h', default: false },
    },
  })
  if (values.help) {
    process.stdout.write(HELP)
    return
  }
  const ids = positionals.length > 0 ? positionals : QUICK_SET
  let workloads = assembleWorkloads(ROW_FAMILIES, ids)
  if (values.rows) {
    const wanted = values.rows.split(',').map((s) => s.trim().toLowerCase())
    workloads = workloads.map((w) => ({
      ...w,
      rows: w.rows.filter((r) =>
        wanted.some((x) => r.name.toLowerCase().includes(x) || (r.family ?? '').toLowerCase().includes(x)),
      ),
    }))
  }
  const progress = createProgress(process.stderr, !values.quiet)
  const result = await runSuite(workloads, {
    full: values.full,
    ...(values.adbench ? { adbenchDir: resolve(values.adbench) } : {}),
    progress,
    studies: !values['no-study'],
    ...(values.budget ? { budgetMs: Number(values.budget) * 1000 } : {}),
  })
  process.stdout.write(formatTextTable(result))
  const outDir = resolve(values.out ?? resolve(repoRoot, 'bench', 'results'))
  const written = writeReports(result, outDir)
  process.stdout.write(`\nwrote ${written.length} files to ${outDir}\n`)
}

main().catch((e: unknown) => {
  process.stderr.write(`tenet-bench: ${e instanceof Error ? e.message : String(e)}\n`)
  process.exitCode = 1
})
