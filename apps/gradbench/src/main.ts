#!/usr/bin/env node
/**
 * The Tenet GradBench tool: reads GradBench messages from stdin (one JSON object per line) and
 * writes one response line per message to stdout. Everything else goes to stderr, so that
 * nothing but protocol lines ever reaches stdout.
 */
import { createInterface } from 'node:readline'
import { MODULES } from './evals/index.js'
import { Tool } from './protocol.js'

const HELP = `tenet-gradbench — a GradBench tool backed by Tenet

usage: tenet-gradbench            (speaks GradBench's protocol on stdin/stdout)
       tenet-gradbench --help

modules: ${Object.keys(MODULES).join(', ')}

Under GradBench's harness:  gradbench run --eval "…" --tool "node apps/gradbench/dist/main.js"
`

// protocol lines only on stdout: route console output of any library to stderr
console.log = console.error
console.info = console.error
console.debug = console.error

async function main(): Promise<void> {
  if (process.argv.includes('--help') || process.argv.includes('-h')) {
    process.stderr.write(HELP)
    return
  }
  const tool = new Tool(MODULES)
  const lines = createInterface({ input: process.stdin, crlfDelay: Infinity })
  for await (const line of lines) {
    if (line.trim() === '') continue
    let msg: unknown
    try {
      msg = JSON.parse(line)
    } catch (e) {
      process.stderr.write(`tenet-gradbench: a line is not JSON: ${(e as Error).message}\n`)
      process.stdout.write(JSON.stringify({ success: false, error: `not JSON: ${(e as Error).message}` }) + '\n')
      continue
    }
    const response = tool.handle(msg)
    const text = JSON.stringify(response)
    if (!process.stdout.write(text + '\n')) await new Promise((r) => process.stdout.once('drain', r))
  }
}

main().catch((e: unknown) => {
  process.stderr.write(`tenet-gradbench: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`)
  process.exitCode = 1
})
