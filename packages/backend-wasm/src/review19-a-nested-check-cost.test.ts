/**
 * Review 19a: `checkNested` compares every array of a call with every array of every running call
 * (`sharesMemory`, ~60 ns each with its `buffer`/`byteOffset` getters), so a recursion through a
 * host function on disjoint arrays costs O(depth² · arrays²): depth 3000 with 4 arrays took 4.5 s
 * on cpu against 25 ms with the test removed (the same program; `node`, checks off). The test
 * compares depths 1600 and 400: linear cost is ~4×, quadratic ~16×.
 */
import { describe, expect, it } from 'vitest'
import { createRegistry, parse } from '@tenet/ir'
import { compileModule } from '@tenet/reversible'
import { cpuBackend } from '@tenet/backend-cpu'

const registry = createRegistry().registerBackend(cpuBackend)

describe('review19a: the cost of the nested-call test in a recursion through a host function', () => {
  it('FAILS: grows linearly with the depth (disjoint arrays)', () => {
    const D = 1600
    const arrs = Array.from({ length: D + 1 }, () => Array.from({ length: 4 }, () => new Float64Array(2)))
    let lvl = 0,
      limit = 0
    let m: Record<string, (...a: unknown[]) => unknown[]> = {}
    const host = (v: number) => {
      if (lvl < limit) {
        lvl++
        m.f!(...arrs[lvl]!, v)
        lvl--
      }
      return v
    }
    m = compileModule(
      parse('fn f(a: f64[], b: f64[], c: f64[], d: f64[], x: f64) {\n a[0] += ${0}(x)\n b[0] += 1.0\n c[0] += 1.0\n d[0] += 1.0\n}', [host]),
      { registry, backend: 'cpu', checks: false },
    ) as typeof m
    const time = (depth: number): number => {
      let best = Infinity
      for (let r = 0; r < 3; r++) {
        limit = depth
        const t = performance.now()
        m.f!(...arrs[0]!, 1)
        best = Math.min(best, performance.now() - t)
      }
      return best
    }
    time(100) // warm
    const small = time(D / 4),
      large = time(D)
    expect(large / small, `${small.toFixed(1)} ms at ${D / 4}, ${large.toFixed(1)} ms at ${D}`).toBeLessThan(8)
  }, 60_000)
})
