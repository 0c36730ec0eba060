import type { BijectionSpec } from '../plugin.js'

/** `ROT`: rotates (a, b) by the angle θ */
export const ROT: BijectionSpec = {
  specificationVersion: 'v1',
  name: 'ROT',
  kind: 'bijection',
  description: 'rotates (a, b) by the angle θ',
  roles: ['inout', 'inout', 'in'],
  types: ['float', 'float', 'float'],
  apply: (a, b, t) => [Math.cos(t) * a - Math.sin(t) * b, Math.sin(t) * a + Math.cos(t) * b],
  inverse: 'IROT',
  // adjoint: ∂/∂θ of the rotated pair, then the transposed (inverse) rotation of the gradients
  adjoint: { params: ['a', 'b', 't'], source: 'g_t += g_b * (cos(t) * a - sin(t) * b) - g_a * (sin(t) * a + cos(t) * b)\nIROT(g_a, g_b, t)' },
  emit: { cpu: (a, b, t) => [`Math.cos(${t}) * (${a}) - Math.sin(${t}) * (${b})`, `Math.sin(${t}) * (${a}) + Math.cos(${t}) * (${b})`], wgsl: (a, b, t) => [`tenet_cos(${t}) * (${a}) - tenet_sin(${t}) * (${b})`, `tenet_sin(${t}) * (${a}) + tenet_cos(${t}) * (${b})`] },
}
