/**
 * `@tenet/testing/vitest`: the conformance suite as vitest tests. A backend's test file calls
 * `describeConformance(myBackend)`; each check becomes a test, and each check that does not
 * apply to the backend a skipped test whose name says why ("not applicable: capability
 * `stacks` is false"), so nothing is left out silently.
 */
import { describe, expect, it } from 'vitest'
import type { BackendSpec } from '@tenet/ir'
import { CONFORMANCE_SECTIONS, conformanceChecks, type ConformanceOptions } from './conformance/suite.js'

/**
 * Registers the conformance suite of `backend` (see `conformanceChecks`) as vitest tests, one
 * `describe` per section. Returns the number of checks that run (the others are skipped with
 * their reason in the test name).
 */
export function describeConformance(backend: BackendSpec, options: ConformanceOptions = {}): number {
  const checks = conformanceChecks(backend, options)
  let running = 0
  describe(`conformance of the ${backend.name} backend (@tenet/testing)`, () => {
    for (const section of CONFORMANCE_SECTIONS) {
      const mine = checks.filter((c) => c.section === section)
      if (!mine.length) continue
      describe(section, () => {
        for (const c of mine) {
          if (c.notApplicable) {
            it.skip(`${c.name} — ${c.notApplicable}`, () => {})
            continue
          }
          running++
          if (c.knownFailure) {
            // expected to fail: once the defect is fixed this fails, and the entry must go
            it.fails(`${c.name} — known failure: ${c.knownFailure}`, () => {
              expect(c.run().join('\n\n')).toBe('')
            })
            continue
          }
          it(c.name, () => {
            expect(c.run().join('\n\n')).toBe('')
          })
        }
      })
    }
  })
  return running
}
export { describeCheckedPasses } from './checked-passes.js'
export { describeHoistPools, hoistPoolsSource, hoistPoolsHostSource, withoutHoistPools } from './hoist-pools.js'
