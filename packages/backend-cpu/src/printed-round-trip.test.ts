import { describe, expect, it } from 'vitest'
import { cpuBackend } from '@tenet/backend-cpu'
import { backendUnderTest, randomProgram, roundTripProblems } from '@tenet/testing'

/** Random programs in this file (the conformance file runs as many others in parallel). */
const PROGRAMS = 2000
const BATCH = 250
const cpu = backendUnderTest(cpuBackend)

describe(`${PROGRAMS} random programs: printed source and printed inverses parse back and behave the same`, () => {
  for (let first = 0; first < PROGRAMS; first += BATCH) {
    it(`seeds ${first}..${first + BATCH - 1}`, () => {
      const failures: string[] = []
      for (let seed = first; seed < first + BATCH; seed++) {
        const p = randomProgram(seed)
        const problems = roundTripProblems(p, cpu)
        if (problems.length) failures.push(`seed ${seed}:\n${p.source}\n${problems.join('\n')}`)
      }
      expect(failures.slice(0, 3).join('\n\n')).toBe('')
    })
  }
})
