/**
 * Random swap loops (`swapLoopProgram` of `@tenet/testing`: a `while` loop that updates and
 * exchanges scalars, its condition reading one of them; on parameters in `f`, on ancillas in
 * `g`) for pass `unroll-swaps` (checks off):
 * the cpu backend, checks on and off, must compute the same bits as the reference interpreter
 * (checks on), forwards and backwards, the round trip to 1e-9 (`columnProblems`). The test also
 * counts the functions the pass changed, so that it cannot pass by never applying.
 */
import { describe, expect, it } from 'vitest'
import { createRegistry } from '@tenet/ir'
import {
  backendUnderTest,
  columnProblems,
  optimiseSource,
  referenceBackend,
  runConformance,
  swapLoopProgram,
} from '@tenet/testing'
import { cpuBackend } from './index.js'

const registry = createRegistry()
const backends = [
  referenceBackend(),
  backendUnderTest(cpuBackend, { registry }),
  { ...backendUnderTest(cpuBackend, { registry, checks: false }), name: 'cpu (checks off)' },
]

/** How many functions (forward or inverse) pass `unroll-swaps` changed, over the programs compiled. */
let unrolled = 0
/** … and how many it must (`f` and `g`, forwards and backwards, of each program whose swaps undo themselves). */
let expected = 0
/** How many functions (forward or inverse) of `source` pass `unroll-swaps` changes. */
function changedBy(source: string): number {
  const { inlined, optimised } = optimiseSource(cpuBackend, source, { name: 'swap loops', passes: ['unroll-swaps'] })
  const differ = (before: Map<string, string>, after: Map<string, string>) =>
    [...after].filter(([n, text]) => before.get(n) !== text).length
  return differ(inlined.functions, optimised.functions) + differ(inlined.inverses, optimised.inverses)
}

describe('random swap loops: the cpu backend, checks on and off, agrees with the interpreter', () => {
  for (let first = 0; first < 100; first += 50) {
    it(`seeds ${first}..${first + 49}`, () => {
      const failures: string[] = []
      for (let seed = first; seed < first + 50; seed++) {
        const p = swapLoopProgram(seed)
        if (p.unrollable) expected += 4
        unrolled += changedBy(p.source)
        const found = [
          ...columnProblems(runConformance({ source: p.source, entry: 'f' }, p.args, backends)),
          ...columnProblems(runConformance({ source: p.source, entry: 'g' }, p.ancillaArgs, backends)),
        ]
        if (found.length) failures.push(`seed ${seed}:\n${p.source}\n${found.join('\n')}`)
      }
      expect(failures.slice(0, 2).join('\n\n')).toBe('')
    })
  }
  it('the pass unrolled the loops it must, forwards and backwards, and only those (above)', () => {
    expect(unrolled).toBe(expected)
    expect(expected).toBeGreaterThan(200)
  })
})
