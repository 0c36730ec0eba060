import type { BijectionSpec } from '../plugin.js'

/** `INV`: replaces x by 1/x */
export const INV: BijectionSpec = {
  specificationVersion: 'v1',
  name: 'INV',
  kind: 'bijection',
  description: 'replaces x by 1/x',
  roles: ['inout'],
  types: ['float'],
  apply: (a) => [1 / a],
  inverse: 'self',
  // adjoint: g_a ← −g_a / a² (with a restored), through an ancilla that is uncomputed exactly
  adjoint: { params: ['a'], source: 's <- 0.0\nSWAP(s, g_a)\ng_a -= s / (a * a)\ns += g_a * (a * a)\ns -> 0.0' },
  emit: { cpu: (a) => [`1 / (${a})`], wgsl: (a) => [`tenet_div(1.0, ${a})`] },
}
