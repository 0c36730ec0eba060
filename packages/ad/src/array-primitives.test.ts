import { describe, expect, it } from 'vitest'
import { hostFunction, type Real } from '@tenet/dual'
import { det, dot } from '@tenet/ir'
import { gradient, jacobian } from './index.js'
import { tag, testRegistry } from './test-util.js'

describe.each(['cpu', 'interpreter'] as const)('array arguments in vector-mode adjoints (%s)', (backend) => {
  const registry = testRegistry().clone().registerPrimitive(det).registerPrimitive(dot)
  const rev = tag({ backend, registry })
  // y = det(A) + A₀·A₁² (a dual host function), z = A·A
  const h = hostFunction((d, x: Real[]) => d.mul(x[0]!, d.square(x[1]!)), 'h')
  const m = rev`fn f(y: f64, z: f64, A: f64[]) { y += det(A) + ${h}(A); z += dot(A, A) }`
  const A = Float64Array.of(1, 2, 3, 4)
  // ∂det/∂A = cofactors (4, −3, −2, 1); ∂(A₀A₁²)/∂A = (A₁², 2A₀A₁, 0, 0); ∂(A·A)/∂A = 2A
  const want = [4 + 4, -3 + 4, -2, 1, 2, 4, 6, 8]

  it('a reverse Jacobian of two outputs in one sweep (width 2) adds each direction into its own slots', () => {
    expect(Array.from(jacobian(m.f!, [0, 0, A], { outputs: [0, 1], inputs: [2], mode: 'reverse', width: 2 }))).toEqual(
      want,
    )
    expect(Array.from(jacobian(m.f!, [0, 0, A], { outputs: [0, 1], inputs: [2], mode: 'reverse', width: 1 }))).toEqual(
      want,
    )
  })

  it('agrees with the gradients of each output', () => {
    expect(Array.from(gradient(m.f!, [0, 0, A], { loss: 0 })[2] as Float64Array)).toEqual(want.slice(0, 4))
    expect(Array.from(gradient(m.f!, [0, 0, A], { loss: 1 })[2] as Float64Array)).toEqual(want.slice(4))
  })
})
