import type { BijectionSpec } from '../plugin.js'

/** `sincos_inverse(s, c, x)`: s -= sin(x) and c -= cos(x), the inverse of `sincos`. */
export const sincos_inverse: BijectionSpec = {
  specificationVersion: 'v1',
  name: 'sincos_inverse',
  kind: 'bijection',
  description: 's -= sin(x), c -= cos(x) (the inverse of sincos)',
  roles: ['inout', 'inout', 'in'],
  types: ['float', 'float', 'float'],
  apply: (s, c, x) => [s - Math.sin(x), c - Math.cos(x)],
  inverse: 'sincos',
  adjoint: { params: ['s', 'c', 'x'], source: 'g_x -= g_s * cos(x) - g_c * sin(x)' },
  emit: { cpu: (s, c, x) => [`${s} - Math.sin(${x})`, `${c} - Math.cos(${x})`], wgsl: (s, c, x) => [`${s} - tenet_sin(${x})`, `${c} - tenet_cos(${x})`] },
}
