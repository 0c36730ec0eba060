import { grad } from 'tenet'
import { describe, expect, it } from 'vitest'
import { withBackend, withChecks, type BenchBackend } from '../tenet/compile.js'
import {
  finiteDifferenceKernelGradient,
  flattenGradient,
  KERNEL_FD_TOLERANCE,
  kernelCases,
  kernelGradientError,
  kernelsModule,
} from './kernels.js'

const targets: [BenchBackend, boolean][] = [
  ['cpu', false],
  ['cpu', true],
  ['wasm', false],
  ['wasm', true],
]

describe('the kernels workload (generality probe)', () => {
  const cases = kernelCases()
  it.each(cases.map((c) => [c.label, c] as const))(
    '%s: the Tenet loss equals the plain objective and its gradient matches finite differences, every backend, checks on and off',
    (_, spec) => {
      const c = spec.make()
      const value = c.plain()
      expect(Number.isFinite(value)).toBe(true)
      const before = c.args.map((a) => (ArrayBuffer.isView(a) ? (a as Float64Array).slice() : a))
      for (const [backend, checks] of targets) {
        const where = `${backend}${checks ? ' + checks' : ''}`
        withBackend(backend, () =>
          withChecks(checks, () => {
            const f = kernelsModule()[c.fn]!
            const out = f(...c.args) as unknown[]
            expect(out[0] as number, where).toBeCloseTo(value, 9)
            // the inputs are left as they were passed
            c.args.forEach((a, i) => {
              if (ArrayBuffer.isView(a)) expect(a, `${where}: argument ${i}`).toEqual(before[i])
            })
            const g = grad(f, { loss: 0 })
            g.run(...c.args)
            const flat = flattenGradient(c.wrt, g.scalars, g.buffers)
            expect(kernelGradientError(flat, c), `${where}: gradient vs finite differences`).toBeLessThan(
              KERNEL_FD_TOLERANCE,
            )
          }),
        )
      }
    },
  )

  it('the finite-difference reference sees a wrong gradient (the check can fail)', () => {
    const c = kernelCases()[1]!.make()
    const fd = finiteDifferenceKernelGradient(c.args, c.wrt, c.plain)
    const wrong = fd.slice()
    wrong[0]! *= 1.01
    expect(kernelGradientError(fd, c)).toBeLessThan(KERNEL_FD_TOLERANCE)
    expect(kernelGradientError(wrong, c)).toBeGreaterThan(KERNEL_FD_TOLERANCE)
  })
})
