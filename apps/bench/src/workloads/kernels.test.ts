import { grad } from 'tenet'
import { describe, expect, it } from 'vitest'
import { compile, withBackend, withChecks, type BenchBackend } from '../tenet/compile.js'
import {
  finiteDifferenceKernelGradient,
  flattenGradient,
  KERNEL_FD_TOLERANCE,
  kernelCases,
  kernelGradientError,
  kernelsModule,
  kernelsSource,
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

  it('rk4 written the natural way (the stages passed as expressions, no ancillas) computes the same loss and a gradient that matches finite differences', () => {
    // the workload keeps the form with an ancilla per stage argument (its figures stay comparable);
    // this one passes `x + h/2·a` straight to the right-hand side, which reverse mode accepts
    const natural = kernelsSource
      .replace(/\n\s*u1, v1, u2, v2, u3, v3 <- [^\n]*/, '')
      .replace(/\n\s*u1 \+= xs\[2 \* t\] \+ h \/ 2\.0 \* a0\n\s*v1 \+= xs\[2 \* t \+ 1\] \+ h \/ 2\.0 \* a1/, '')
      .replace(/\n\s*u2 \+= xs\[2 \* t\] \+ h \/ 2\.0 \* b0\n\s*v2 \+= xs\[2 \* t \+ 1\] \+ h \/ 2\.0 \* b1/, '')
      .replace(/\n\s*u3 \+= xs\[2 \* t\] \+ h \* c0\n\s*v3 \+= xs\[2 \* t \+ 1\] \+ h \* c1/, '')
      .replace('lv(b0, b1, u1, v1, p)', 'lv(b0, b1, xs[2 * t] + h / 2.0 * a0, xs[2 * t + 1] + h / 2.0 * a1, p)')
      .replace('lv(c0, c1, u2, v2, p)', 'lv(c0, c1, xs[2 * t] + h / 2.0 * b0, xs[2 * t + 1] + h / 2.0 * b1, p)')
      .replace('lv(e0, e1, u3, v3, p)', 'lv(e0, e1, xs[2 * t] + h * c0, xs[2 * t + 1] + h * c1, p)')
    expect(natural).not.toMatch(/u1|v3/)
    const c = kernelCases()
      .find((k) => k.label.startsWith('rk4'))!
      .make()
    for (const [backend, checks] of targets) {
      const where = `${backend}${checks ? ' + checks' : ''}`
      withBackend(backend, () =>
        withChecks(checks, () => {
          const f = compile(natural)[c.fn]!
          const out = f(...c.args) as unknown[]
          expect(out[0] as number, where).toBe(kernelsModule()[c.fn]!(...c.args)[0])
          const g = grad(f, { loss: 0 })
          g.run(...c.args)
          const flat = flattenGradient(c.wrt, g.scalars, g.buffers)
          expect(kernelGradientError(flat, c), `${where}: gradient vs finite differences`).toBeLessThan(
            KERNEL_FD_TOLERANCE,
          )
        }),
      )
    }
  })

  it('the finite-difference reference sees a wrong gradient (the check can fail)', () => {
    const c = kernelCases()[1]!.make()
    const fd = finiteDifferenceKernelGradient(c.args, c.wrt, c.plain)
    const wrong = fd.slice()
    wrong[0]! *= 1.01
    expect(kernelGradientError(fd, c)).toBeLessThan(KERNEL_FD_TOLERANCE)
    expect(kernelGradientError(wrong, c)).toBeGreaterThan(KERNEL_FD_TOLERANCE)
  })
})
