#!/usr/bin/env node
/**
 * Replays recorded GradBench sessions (`<eval>.jsonl`: `{message, expected}` per line) through
 * the tool process and checks every response by GradBench's rule (see `check.ts`).
 *
 * usage: node apps/gradbench/dist/replay.js [eval …] [--data <dir>]
 * (default data: ../shared/data/gradbench relative to the repository root)
 */
import { readFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { checkResponse } from './check.js'
import { startTool } from './session.js'

const here = dirname(fileURLToPath(import.meta.url))
/** The repository root (apps/gradbench/{src,dist}/ → ../../..). */
export const repoRoot = resolve(here, '../../..')
/** Where the recorded sessions live: `../shared/data/gradbench` next to the repository. */
export const dataDir = resolve(repoRoot, '../shared/data/gradbench')
/** The tool's entry point. */
export const mainJs = resolve(here, '../dist/main.js')

/** The recorded lines of one eval. */
export function recorded(
  evalName: string,
  dir = dataDir,
): Array<{ message: Record<string, unknown>; expected: Record<string, unknown> }> {
  return readFileSync(join(dir, `${evalName}.jsonl`), 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l))
}

/** Replays one eval; returns the failures (empty when every response passes) and the wall time. */
export async function replay(evalName: string, dir = dataDir): Promise<{ failures: string[]; ms: number }> {
  const t0 = performance.now()
  const tool = startTool(process.execPath, [mainJs])
  const failures: string[] = []
  try {
    for (const { message, expected } of recorded(evalName, dir)) {
      const response = await tool.send(message)
      const problem = checkResponse(evalName, message, expected, response)
      if (problem)
        failures.push(
          `${evalName} #${String(message.id)} ${String(message.kind)} ${String(message.function ?? '')} ${String(message.description ?? '')}: ${problem}`,
        )
    }
  } finally {
    await tool.close()
  }
  return { failures, ms: performance.now() - t0 }
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2)
  const at = args.indexOf('--data')
  const dir = at >= 0 ? resolve(args[at + 1]!) : dataDir
  const names = args.filter((a, i) => !a.startsWith('--') && (at < 0 || i !== at + 1))
  const evals = names.length
    ? names
    : ['hello', 'llsq', 'lse', 'det', 'ode', 'gmm', 'lstm', 'kmeans', 'ba', 'ht', 'particle', 'saddle']
  let bad = 0
  for (const e of evals) {
    const { failures, ms } = await replay(e, dir)
    bad += failures.length
    process.stdout.write(
      `${e}: ${failures.length ? `${failures.length} FAILED` : 'ok'} (${(ms / 1000).toFixed(1)} s)\n`,
    )
    for (const f of failures.slice(0, 10)) process.stdout.write(`  ${f}\n`)
  }
  process.exitCode = bad ? 1 : 0
}
