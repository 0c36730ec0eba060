/**
 * Review 14c: loop-facts (`nonzeroInLoops`, the runs' forwarding in cse.ts `different`): the
 * difference of two polynomial indices, `(k · 65536 · 65536 + k) − k` = 2³²·k, is nonzero for k in
 * 1..n as a mathematical integer, but i32 index arithmetic wraps it to 0: one element. The second
 * read of a[k] must see the store.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { createRegistry, parse } from '@tenet/ir'
import { disabledPasses } from '@tenet/ir/backend'
import { compileModule, interpreterBackend } from '@tenet/reversible'
import { cpuBackend } from './index.js'

const registry = () => createRegistry().registerBackend(cpuBackend).registerBackend(interpreterBackend)
afterEach(() => disabledPasses.delete('loop-facts'))

const src = `fn f(a: f64[], y: f64[], x: f64[], n: i32) {
  for k in 1..n {
    y[k] += a[k]
    a[k * 65536 * 65536 + k] += x[k]
    y[k] += a[k]
  }
}`
const run = (backend: string, checks: boolean) => {
  const m = compileModule(parse({ text: src, name: 'p' }), { registry: registry(), backend, checks })
  const a = Float64Array.from([1, 2, 3])
  const y = new Float64Array(3)
  m.f!(a, y, Float64Array.from([0, 10, 100]), 3)
  return [Array.from(a), Array.from(y)]
}

describe('loop-facts and i32 wrap', () => {
  for (const checks of [true, false])
    it(`checks ${checks ? 'on' : 'off'}: the second read of a[0] sees the store`, () => {
      const want = run('interpreter', checks)
      disabledPasses.add('loop-facts')
      const off = run('cpu', checks)
      disabledPasses.delete('loop-facts')
      expect({ on: run('cpu', checks), loopFactsOff: off }).toEqual({ on: want, loopFactsOff: want })
    })
})
