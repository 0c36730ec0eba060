#!/usr/bin/env node
/** The `tenet` executable: runs `main` on the process's arguments and streams. */
import { readFileSync } from 'node:fs'
import { main } from './main.js'

process.exitCode = await main(process.argv.slice(2), {
  stdout: (t) => process.stdout.write(t),
  stderr: (t) => process.stderr.write(t),
  readStdin: () => readFileSync(0, 'utf8'),
})
