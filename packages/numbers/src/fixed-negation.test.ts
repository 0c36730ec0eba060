/**
 * The cpu generator leaves the negation, \`abs\`, \`min\`, \`max\`, \`sign\` and \`identity\` of f32
 * values unrounded (\`exactOf\` of backend-cpu's codegen.ts), f32 only: the rounding of another
 * number system may change such a value, as \`fixed\`'s maps -0 to +0 (\`fixedRounder\`), so \`-x\`
 * of a fixed zero is +0 and \`atan2(-x, -1)\` is +π as on the interpreter (review 18a: with every
 * rounded float system taken for f32, the cpu backend gave -π).
 */
import { cpuBackend } from '@tenet/backend-cpu'
import { createRegistry, parse } from '@tenet/ir'
import { compileModule, interpreterBackend } from '@tenet/reversible'
import { describe, expect, it } from 'vitest'
import { registerNumbers } from './index.js'

const registry = registerNumbers(createRegistry()).registerBackend(cpuBackend).registerBackend(interpreterBackend)
const show = (xs: ArrayLike<number>) => Array.from(xs, (v) => (Object.is(v, -0) ? '-0' : String(v)))

const run = (text: string, backend: string, checks: boolean, x: number[]): string[] => {
  const m = compileModule(parse({ text, name: 'fixed-negation' }), { registry, backend, checks })
  const y = new Float64Array(4)
  m.f!(y, Float64Array.from(x))
  return show(y)
}

describe('fixed: the negation of zero is +0 (rounded), as the interpreter has it', () => {
  const negation = `fn f(y: fixed[], x: fixed[]) {
  y[0] += atan2(-x[0], -1.0)
  y[1] += atan2(-(x[0] * x[1]), -1.0)
  y[2] += atan2(min(x[1], -x[0]), -1.0)
  y[3] += atan2(identity(-x[0]), -1.0)
}`
  for (const checks of [false, true])
    it(`atan2(-x, -1) of x = 0 is +π on cpu, checks ${checks ? 'on' : 'off'}`, () => {
      const want = run(negation, 'interpreter', checks, [0, 0.5])
      expect(want.every((v) => Number(v) > 3)).toBe(true)
      expect(run(negation, 'cpu', checks, [0, 0.5])).toEqual(want)
    })

  const held = `fn f(y: fixed[], x: fixed[]) {
  y[0] += atan2(abs(x[0]), -1.0)
  y[1] += atan2(max(x[0], x[1]), -1.0)
  y[2] += atan2(sign(x[0]), -1.0)
  y[3] += -x[0] - x[1]
}`
  for (const checks of [false, true])
    it(`abs, max and sign of a fixed zero as the interpreter, checks ${checks ? 'on' : 'off'}`, () => {
      for (const x of [
        [0, 0],
        [0, -0.25],
        [-0.5, 0],
      ])
        expect(run(held, 'cpu', checks, x)).toEqual(run(held, 'interpreter', checks, x))
    })
})
