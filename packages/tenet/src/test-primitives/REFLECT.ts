import { selfInverse } from '../index.js'

/**
 * `REFLECT(a, b, t)`: reflects (a, b) in the line at angle t, (a, b) ← M(t)·(a, b) with
 * M = [[cos 2t, sin 2t], [sin 2t, −cos 2t]], a user bijection in one file. M is its own inverse
 * and its own transpose, and ∂M/∂t·M = 2·[[0, −1], [1, 0]], so in the new values
 * ∂a'/∂t = −2b' and ∂b'/∂t = 2a'. Its Taylor rule is the same map as Tenet text. No backend
 * lowering: every backend calls `apply`.
 */
export const REFLECT = selfInverse({
  name: 'REFLECT',
  description: 'reflects (a, b) in the line at angle t',
  params: ['a', 'b', 't'],
  roles: ['inout', 'inout', 'in'],
  types: ['float', 'float', 'float'],
  apply: (a, b, t) => [Math.cos(2 * t) * a + Math.sin(2 * t) * b, Math.sin(2 * t) * a - Math.cos(2 * t) * b],
  // with the old values restored: ∂a'/∂t = 2(b cos 2t − a sin 2t), ∂b'/∂t = 2(a cos 2t + b sin 2t); then Mᵀ = M on the gradients
  adjoint:
    'g_t += 2.0 * (g_a * (cos(2.0 * t) * b - sin(2.0 * t) * a) + g_b * (cos(2.0 * t) * a + sin(2.0 * t) * b))\nREFLECT(g_a, g_b, t)',
  // after the reflection, in the new values
  tangent: 'REFLECT(t_a, t_b, t)\nt_a -= 2.0 * b * t_t\nt_b += 2.0 * a * t_t',
  // Taylor mode: the new values over the old ones (linear in a, b: by a constant angle each coefficient is reflected)
  taylor: { map: ['cos(2.0 * t) * a + sin(2.0 * t) * b', 'sin(2.0 * t) * a - cos(2.0 * t) * b'], linear: true },
})
