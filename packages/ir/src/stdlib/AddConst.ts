import type { BijectionSpec } from '../plugin.js'

/** `AddConst`: adds a read-only value */
export const AddConst: BijectionSpec = {
  specificationVersion: 'v1',
  name: 'AddConst',
  kind: 'bijection',
  description: 'adds a read-only value',
  roles: ['inout', 'in'],
  apply: (a, c) => [a + c],
  inverse: 'SubConst',
  // adjoint: ∂(a + c)/∂c = 1; g_a passes through
  adjoint: { params: ['a', 'c'], source: 'g_c += g_a' },
  emit: { cpu: (a, c) => [`(${a}) + (${c})`], wgsl: (a, c) => [`(${a}) + (${c})`] },
}
