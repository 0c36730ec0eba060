import type { BijectionSpec } from '../plugin.js'

/** `SubConst`: subtracts a read-only value */
export const SubConst: BijectionSpec = {
  specificationVersion: 'v1',
  name: 'SubConst',
  kind: 'bijection',
  description: 'subtracts a read-only value',
  roles: ['inout', 'in'],
  apply: (a, c) => [a - c],
  inverse: 'AddConst',
  // adjoint: ∂(a − c)/∂c = −1; g_a passes through
  adjoint: { params: ['a', 'c'], source: 'g_c -= g_a' },
  emit: { cpu: (a, c) => [`(${a}) - (${c})`], wgsl: (a, c) => [`(${a}) - (${c})`] },
}
