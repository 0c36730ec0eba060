/**
 * The aliasing rule at `blockJacobian(...).run`: the run reads the arguments in place while it
 * writes the Jacobian into `out`, so an `out` that shares memory with an argument is refused with
 * `call/overlap`, on every backend, as is an array `f` writes overlapping another argument (the rule
 * of every call: see `overlapGuard` of `@tenet/reversible`). Before, the cpu run zeroed `out` and
 * then read the zeroed inputs, returning a wrong Jacobian without an error (review12 D2).
 */
import { cpuBackend } from '@tenet/backend-cpu'
import { wasmBackend } from '@tenet/backend-wasm'
import { createRegistry, parse, TenetError } from '@tenet/ir'
import { compileModule, interpreterBackend } from '@tenet/reversible'
import { describe, expect, it } from 'vitest'
import { blockJacobian } from './index.js'

const registry = () =>
  createRegistry().registerBackend(cpuBackend).registerBackend(interpreterBackend).registerBackend(wasmBackend)
const src = 'fn one(r: f64[], x: f64[]) { r[0] += x[0] * x[1]\n r[1] += x[0] + x[1] }'
const thrown = (f: () => unknown): TenetError => {
  try {
    f()
  } catch (e) {
    if (TenetError.isInstance(e)) return e as TenetError
    throw e
  }
  throw new Error('no error')
}

describe('blockJacobian: the aliasing rule', () => {
  for (const backend of ['cpu', 'wasm'])
    for (const checks of [true, false]) {
      const m = compileModule(parse({ text: src, name: 'bj-overlap' }), { registry: registry(), backend, checks })
      const bj = blockJacobian(m.one!, { sizes: [2, 2], inputs: [1], outputs: [0] })
      const n = 2
      const xs = [1, 2, 3, 4]
      // d r / d x per block: [[x1, x0], [1, 1]]
      const want = [2, 1, 1, 1, 4, 3, 1, 1]

      it(`${backend}, checks ${checks ? 'on' : 'off'}: separate arrays give the Jacobian`, () => {
        expect([...bj.run(n, [new Float64Array(2 * n), Float64Array.from(xs)])]).toEqual(want)
        const out = new Float64Array(4 * n)
        bj.run(n, [new Float64Array(2 * n), Float64Array.from(xs)], out)
        expect([...out]).toEqual(want)
        // (two views of one buffer that do not overlap are apart)
        const block = new Float64Array(4 * n + 2 * n)
        const x = block.subarray(4 * n)
        x.set(xs)
        expect([...bj.run(n, [new Float64Array(2 * n), x], block.subarray(0, 4 * n))]).toEqual(want)
      })

      it(`${backend}, checks ${checks ? 'on' : 'off'}: an \`out\` that shares memory with an argument is refused`, () => {
        const block = new Float64Array(4 * n)
        const x = block.subarray(0, 2 * n)
        x.set(xs)
        const e = thrown(() => bj.run(n, [new Float64Array(2 * n), x], block))
        expect(e.code).toBe('call/overlap')
        expect(e.message).toContain('`out` and argument 2 (`x`) of the block Jacobian of `one` share memory')
        // nothing was written
        expect([...x]).toEqual(xs)
      })

      it(`${backend}, checks ${checks ? 'on' : 'off'}: an array \`f\` writes that overlaps another argument is refused`, () => {
        const x = Float64Array.from(xs)
        const e = thrown(() => bj.run(n, [x, x]))
        expect(e.code).toBe('call/overlap')
        expect(e.message).toContain('of `one` share memory, and `one` writes `r`')
      })
    }
})
