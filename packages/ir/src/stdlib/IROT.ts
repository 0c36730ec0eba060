import { bijection } from '../primitive.js'

/** `IROT`: rotates (a, b) by −θ (the inverse of ROT) */
export const IROT = bijection({
  name: 'IROT',
  description: 'rotates (a, b) by −θ (the inverse of ROT)',
  params: ['a', 'b', 't'],
  roles: ['inout', 'inout', 'in'],
  types: ['float', 'float', 'float'],
  apply: (a, b, t) => [Math.cos(t) * a + Math.sin(t) * b, -Math.sin(t) * a + Math.cos(t) * b],
  inverse: 'ROT',
  // Taylor mode: the new values over the old ones (linear in a, b)
  taylor: { map: ['cos(t) * a + sin(t) * b', 'cos(t) * b - sin(t) * a'], linear: true },
  // adjoint, on the rotated (new) values: ∂a′/∂θ = b′ and ∂b′/∂θ = −a′, then the transposed
  // rotation (ROT) of the gradients
  adjoint: 'g_t += g_a * b - g_b * a\nROT(g_a, g_b, t)',
  adjointReads: 'new',
  // tangent: the rotation of the tangents, plus ∂a'/∂θ = b', ∂b'/∂θ = −a'
  tangent: 'IROT(t_a, t_b, t)\nt_a += b * t_t\nt_b -= a * t_t',
  emit: {
    cpu: (a, b, t) => [
      `Math.cos(${t}) * (${a}) + Math.sin(${t}) * (${b})`,
      `Math.cos(${t}) * (${b}) - Math.sin(${t}) * (${a})`,
    ],
    wgsl: (a, b, t) => [
      `tenet_cos(${t}) * (${a}) + tenet_sin(${t}) * (${b})`,
      `tenet_cos(${t}) * (${b}) - tenet_sin(${t}) * (${a})`,
    ],
  },
})
