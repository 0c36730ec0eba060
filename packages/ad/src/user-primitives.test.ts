import { describe, expect, it } from 'vitest'
import type { PurePrimitiveSpec } from '@tenet/ir'
import { checkGrad, gradient } from './index.js'
import { tag, testRegistry } from './test-util.js'

/** Bessel functions of the first kind by their power series (|x| ≲ 10). */
function besselSeries(order: number, x: number): number {
  let term = (x / 2) ** order
  for (let k = 1; k <= order; k++) term /= k
  let sum = term
  for (let k = 1; k < 60; k++) {
    term *= -(x * x) / 4 / (k * (k + order))
    sum += term
  }
  return sum
}

const cube: PurePrimitiveSpec = {
  specificationVersion: 'v1',
  name: 'cube',
  kind: 'pure',
  arity: 1,
  evaluate: (x) => x * x * x,
  partials: (x) => [3 * x * x],
}
const besselj0: PurePrimitiveSpec = {
  specificationVersion: 'v1',
  name: 'besselj0',
  kind: 'pure',
  arity: 1,
  evaluate: (x) => besselSeries(0, x),
  partials: (x) => [-besselSeries(1, x)],
}
/** A primitive whose derivative is given as Tenet expressions (inlined, no helper call). */
const softplus: PurePrimitiveSpec = {
  specificationVersion: 'v1',
  name: 'softplus',
  kind: 'pure',
  arity: 1,
  evaluate: (x) => Math.log1p(Math.exp(x)),
  partialExprs: ([x]) => [
    {
      kind: 'binary',
      op: '/',
      left: { kind: 'num', value: 1, isFloat: true },
      right: {
        kind: 'binary',
        op: '+',
        left: { kind: 'num', value: 1, isFloat: true },
        right: { kind: 'call', callee: 'exp', args: [{ kind: 'unary', op: '-', arg: x! }] },
      },
    },
  ],
}

describe.each(['cpu', 'interpreter'] as const)('user primitives in a cloned registry (%s)', (backend) => {
  const registry = testRegistry()
    .clone()
    .registerPrimitive(cube)
    .registerPrimitive(besselj0)
    .registerPrimitive(softplus)
  const rev = tag({ backend, registry })

  it('cube with `partials`', () => {
    const m = rev`fn f(y: f64, x: f64) { y += cube(x) * 2.0 }`
    for (const mode of ['reverse', 'forward'] as const)
      expect(gradient(m.f!, [0, 1.5], { loss: 0, mode })[1]).toBe(6 * 1.5 * 1.5)
  })

  it('besselj0 with partial −J₁', () => {
    const m = rev`fn f(y: f64, x: f64) { y += besselj0(x * x) }`
    const x = 1.3
    for (const mode of ['reverse', 'forward'] as const)
      expect(gradient(m.f!, [0, x], { loss: 0, mode })[1]).toBeCloseTo(-besselSeries(1, x * x) * 2 * x, 13)
    expect(checkGrad(m.f!, [0, x], { loss: 0, atol: 1e-8 }).ok).toBe(true)
  })

  it('softplus with `partialExprs` is emitted inline', () => {
    const m = rev`fn f(y: f64, x: f64) { y += softplus(x) }`
    for (const mode of ['reverse', 'forward'] as const)
      expect(gradient(m.f!, [0, 0.4], { loss: 0, mode })[1]).toBeCloseTo(1 / (1 + Math.exp(-0.4)), 14)
  })

  it('a primitive without derivative information is a clear error', () => {
    const r = testRegistry()
      .clone()
      .registerPrimitive({ specificationVersion: 'v1', name: 'opaque', kind: 'pure', arity: 1, evaluate: (x) => x })
    const m = tag({ backend, registry: r })`fn f(y: f64, x: f64) { y += opaque(x) }`
    for (const mode of ['reverse', 'forward'] as const)
      expect(() => gradient(m.f!, [0, 1], { loss: 0, mode })).toThrow(/no derivative/)
  })

  it('the original registry is not changed by the helpers', () => {
    const m = rev`fn f(y: f64, x: f64) { y += cube(x) }`
    gradient(m.f!, [0, 1], { loss: 0, mode: 'reverse' })
    gradient(m.f!, [0, 1], { loss: 0, mode: 'forward' })
    expect(registry.names('pure').some((n) => n.startsWith('__tenet_d_'))).toBe(false)
  })
})
