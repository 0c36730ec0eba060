import type { BijectionSpec } from '../plugin.js'

/** `IROT`: rotates (a, b) by −θ (the inverse of ROT) */
export const IROT: BijectionSpec = {
  specificationVersion: 'v1',
  name: 'IROT',
  kind: 'bijection',
  description: 'rotates (a, b) by −θ (the inverse of ROT)',
  roles: ['inout', 'inout', 'in'],
  types: ['float', 'float', 'float'],
  apply: (a, b, t) => [Math.cos(t) * a + Math.sin(t) * b, -Math.sin(t) * a + Math.cos(t) * b],
  inverse: 'ROT',
  // adjoint: ∂/∂θ of the rotated pair, then the transposed rotation (ROT) of the gradients
  adjoint: { params: ['a', 'b', 't'], source: 'g_t += g_a * (cos(t) * b - sin(t) * a) - g_b * (cos(t) * a + sin(t) * b)\nROT(g_a, g_b, t)' },
  emit: { cpu: (a, b, t) => [`Math.cos(${t}) * (${a}) + Math.sin(${t}) * (${b})`, `Math.cos(${t}) * (${b}) - Math.sin(${t}) * (${a})`], wgsl: (a, b, t) => [`tenet_cos(${t}) * (${a}) + tenet_sin(${t}) * (${b})`, `tenet_cos(${t}) * (${b}) - tenet_sin(${t}) * (${a})`] },
}
