import type { BijectionSpec } from '../plugin.js'

/** `HADAMARD`: the Hadamard transform of (a, b) */
export const HADAMARD: BijectionSpec = {
  specificationVersion: 'v1',
  name: 'HADAMARD',
  kind: 'bijection',
  description: 'the Hadamard transform of (a, b)',
  roles: ['inout', 'inout'],
  types: ['float', 'float'],
  apply: (a, b) => [(a + b) * Math.SQRT1_2, (a - b) * Math.SQRT1_2],
  inverse: 'self',
  // adjoint: the Hadamard matrix is symmetric and orthogonal: its own transpose
  adjoint: { params: ['a', 'b'], source: 'HADAMARD(g_a, g_b)' },
  emit: { cpu: (a, b) => [`((${a}) + (${b})) * Math.SQRT1_2`, `((${a}) - (${b})) * Math.SQRT1_2`], wgsl: (a, b) => [`((${a}) + (${b})) * 0.70710678118654752440`, `((${a}) - (${b})) * 0.70710678118654752440`] },
}
