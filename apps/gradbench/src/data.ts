/** Where the tests find the recorded sessions, and whether they must be there. */
import { existsSync } from 'node:fs'
import { dataDir } from './replay.js'

/** The recorded sessions are present (`../shared/data/gradbench` next to the repository). */
export const haveData = existsSync(dataDir)
if (!haveData && process.env.CI === 'true')
  throw new Error(`the recorded GradBench sessions are missing: ${dataDir} (CI must provide them)`)
if (!haveData) console.warn(`skipping the GradBench replay tests: no data at ${dataDir}`)
