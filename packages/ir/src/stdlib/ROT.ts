import { bijection } from '../primitive.js'

/** `ROT`: rotates (a, b) by the angle θ */
export const ROT = bijection({
  name: 'ROT',
  description: 'rotates (a, b) by the angle θ',
  params: ['a', 'b', 't'],
  roles: ['inout', 'inout', 'in'],
  types: ['float', 'float', 'float'],
  apply: (a, b, t) => [Math.cos(t) * a - Math.sin(t) * b, Math.sin(t) * a + Math.cos(t) * b],
  inverse: 'IROT',
  // Taylor mode: the new values over the old ones (linear in a, b: by a constant angle each coefficient is rotated)
  taylor: { map: ['cos(t) * a - sin(t) * b', 'sin(t) * a + cos(t) * b'], linear: true },
  // adjoint, on the rotated (new) values: ∂a′/∂θ = −b′ and ∂b′/∂θ = a′, then the transposed
  // (inverse) rotation of the gradients; by the new values the rule needs no second rotation
  adjoint: 'g_t += g_b * a - g_a * b\nIROT(g_a, g_b, t)',
  adjointReads: 'new',
  // tangent: the rotation of the tangents, plus ∂a'/∂θ = −b', ∂b'/∂θ = a' (a, b the new values)
  tangent: 'ROT(t_a, t_b, t)\nt_a -= b * t_t\nt_b += a * t_t',
  emit: {
    cpu: (a, b, t) => [
      `Math.cos(${t}) * (${a}) - Math.sin(${t}) * (${b})`,
      `Math.sin(${t}) * (${a}) + Math.cos(${t}) * (${b})`,
    ],
    wgsl: (a, b, t) => [
      `tenet_cos(${t}) * (${a}) - tenet_sin(${t}) * (${b})`,
      `tenet_sin(${t}) * (${a}) + tenet_cos(${t}) * (${b})`,
    ],
  },
})
