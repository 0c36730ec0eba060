/**
 * `@tenet/unf` as the oracle of the expression-level adjoint (`expr.ts`), and as the source of
 * derived partials for primitives defined by a body expression (DESIGN §7).
 */
import { describe, expect, it } from 'vitest'
import { parse, type Expr } from '@tenet/ir'
import { compile, termFromTenetExpr, unfPrimitive } from '@tenet/unf'
import { checkGrad, gradient } from './index.js'
import { randomExpressions, tag, testRegistry } from './test-util.js'

const R = { kind: 'R' } as const

describe('UNF differentiates the same random expressions as the adjoint of `y += e`', () => {
  it.each(['cpu', 'interpreter'] as const)('%s: 40 random expressions agree to 1e-12', (backend) => {
    const registry = testRegistry()
    const rev = tag({ backend, registry })
    const { expr, rnd } = randomExpressions(77)
    for (let k = 0; k < 40; k++) {
      const text = `fn f(y: f64, a: f64, b: f64, c: f64) { y += ${expr(['a', 'b', 'c'], 4)} }`
      const module = parse({ text, name: 'random' })
      const fn = module.functions[0]!
      const stmt = fn.body[0] as { kind: 'update'; value: Expr }
      const unf = compile(
        [
          ['a', R],
          ['b', R],
          ['c', R],
        ],
        termFromTenetExpr(stmt.value),
        { registry },
      )
      const point = [rnd() - 0.5, rnd() - 0.5, rnd() - 0.5]
      const [value, unfGrad] = unf.gradient(...point)
      const adGrad = gradient(rev(text).f!, [0, ...point], { loss: 0 }) as number[]
      for (let i = 0; i < 3; i++) {
        expect(
          Math.abs((unfGrad[i] as number) - adGrad[i + 1]!) / (1 + Math.abs(adGrad[i + 1]!)),
          `${text} ∂${'abc'[i]}`,
        ).toBeLessThan(1e-12)
      }
      expect(Number.isFinite(value)).toBe(true)
    }
  })
})

describe('a primitive registered with a body expression gets its partials from UNF', () => {
  const softplusProduct = unfPrimitive({
    name: 'softmul',
    params: ['x', 'y'],
    body: 'log(1 + exp(x * y)) + x * x / (1 + y * y)',
  })
  const gated = unfPrimitive({ name: 'gated', params: ['x', 'y'], body: 'if x > y then x * sin(y) else y * cos(x)' })
  const registry = testRegistry().clone().registerPrimitive(softplusProduct).registerPrimitive(gated)

  it('no hand-written partials: derived expressions are inlined (partialExprs), conditionals use the compiled gradient', () => {
    expect(softplusProduct.partialExprs).toBeDefined()
    expect(gated.partialExprs).toBeUndefined()
    expect(gated.partials!(2, 1)).toEqual([Math.sin(1), 2 * Math.cos(1)])
  })

  it.each(['cpu', 'interpreter'] as const)(
    '%s: value and gradient inside a Tenet program match finite differences',
    (backend) => {
      const rev = tag({ backend, registry })
      const m = rev`fn f(out: f64, a: f64, b: f64, x: f64[]) {
      out += softmul(a, b) * 2.0
      for i in 0..len(x) { out += gated(x[i], a) }
    }`
      const args = [0, 0.7, -1.3, Float64Array.of(0.2, 1.5, -0.4)]
      const [out] = m.f!(...args) as [number]
      const expected =
        2 * (Math.log(1 + Math.exp(0.7 * -1.3)) + 0.49 / (1 + 1.69)) +
        [0.2, 1.5, -0.4].reduce((s, x) => s + (x > 0.7 ? x * Math.sin(0.7) : 0.7 * Math.cos(x)), 0)
      expect(out).toBeCloseTo(expected, 13)
      expect(checkGrad(m.f!, args, { loss: 0, atol: 1e-7 }).ok).toBe(true)
    },
  )
})
