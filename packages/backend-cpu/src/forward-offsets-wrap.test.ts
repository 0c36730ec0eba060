/**
 * Review 14c: store-to-load forwarding across a store whose index differs from the load's by the
 * constant 2³² (`k - -2147483648` and `k + -2147483648`): in i32 arithmetic one element (the
 * static checker knows: `a[k - -2147483648] += a[k + -2147483648]` is refused as a read of its
 * own right-hand side). The cpu backend reads the element's value from before the store
 * (`different` in cse.ts: a constant difference is taken as nonzero without reducing it mod 2³²).
 */
import { afterEach, describe, expect, it } from 'vitest'
import { createRegistry, parse } from '@tenet/ir'
import { disabledPasses } from '@tenet/ir/backend'
import { compileModule, interpreterBackend } from '@tenet/reversible'
import { cpuBackend } from './index.js'

const registry = () => createRegistry().registerBackend(cpuBackend).registerBackend(interpreterBackend)
afterEach(() => disabledPasses.delete('loop-facts'))

const src = `fn f(a: f64[], y: f64[], x: f64[], k: i32) {
  y[0] += a[k + -2147483648]
  a[k - -2147483648] += x[0]
  y[1] += a[k + -2147483648]
}`
const run = (backend: string, checks: boolean) => {
  const m = compileModule(parse({ text: src, name: 'p' }), { registry: registry(), backend, checks })
  const a = Float64Array.from([1, 2, 3, 4])
  const y = new Float64Array(2)
  // k = −2³¹ + 1: both indices are 1
  m.f!(a, y, Float64Array.from([10]), -2147483647)
  return [Array.from(a), Array.from(y)]
}

describe('forwarding across a store 2³² away', () => {
  for (const checks of [true, false])
    it(`checks ${checks ? 'on' : 'off'}: y[1] reads the stored element (12)`, () => {
      const want = [
        [1, 12, 3, 4],
        [2, 12],
      ]
      expect(run('interpreter', checks)).toEqual(want)
      disabledPasses.add('loop-facts')
      const off = run('cpu', checks)
      disabledPasses.delete('loop-facts')
      expect({ on: run('cpu', checks), loopFactsOff: off }).toEqual({ on: want, loopFactsOff: want })
    })
})
