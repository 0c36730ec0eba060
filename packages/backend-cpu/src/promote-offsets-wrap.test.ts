/**
 * Review 14c: `promotableElements` (`@tenet/ir` cse.ts) takes two elements of a written array with
 * one base and different constant offsets for two elements (`offsetOf`), but the offsets of
 * `k - -2147483648` (+2³¹) and `k + -2147483648` (−2³¹) differ by 2³², and i32 index arithmetic
 * wraps: both are `k ^ 0x80000000`, one element. The loop keeps them in two locals and the store
 * of the second after the loop overwrites the first's sum. With checks on (pass `promote-checked`)
 * this is new; with checks off the same promotion was there before (pre-existing).
 */
import { afterEach, describe, expect, it } from 'vitest'
import { createRegistry, parse } from '@tenet/ir'
import { disabledPasses } from '@tenet/ir/backend'
import { compileModule, interpreterBackend } from '@tenet/reversible'
import { cpuBackend } from './index.js'

const registry = () => createRegistry().registerBackend(cpuBackend).registerBackend(interpreterBackend)
afterEach(() => disabledPasses.delete('promote-checked'))

const sure = `fn f(a: f64[], k: i32, n: i32) {
  for i in 0..n {
    a[k - -2147483648] += 1.0
    a[k + -2147483648] += 2.0
  }
}`
const branch = `fn f(a: f64[], k: i32, n: i32) {
  for i in 0..n {
    if (i != 1, ~) { a[k - -2147483648] += 1.0 }
    a[k + -2147483648] += 2.0
  }
}`

const run = (source: string, backend: string, checks: boolean): number[] => {
  const m = compileModule(parse({ text: source, name: 'p' }), { registry: registry(), backend, checks })
  const a = new Float64Array(3)
  // k = −2³¹ + 1: k + 2³¹ = 1 and k − 2³¹ wraps to 1
  m.f!(a, -2147483647, 3)
  return Array.from(a)
}

describe('promoted elements whose constant offsets differ by 2³²', () => {
  for (const [label, source, want] of [
    ['every iteration', sure, [0, 9, 0]],
    ['one in a branch', branch, [0, 8, 0]],
  ] as const) {
    it(`${label}, checks on: the interpreter's sum`, () => {
      expect(run(source, 'interpreter', true)).toEqual(want)
      disabledPasses.add('promote-checked')
      expect(run(source, 'cpu', true)).toEqual(want)
      disabledPasses.delete('promote-checked')
      expect(run(source, 'cpu', true)).toEqual(want)
    })
    it(`checks off: ${label}`, () => {
      expect(run(source, 'interpreter', false)).toEqual(want)
      expect(run(source, 'cpu', false)).toEqual(want)
    })
  }
})
