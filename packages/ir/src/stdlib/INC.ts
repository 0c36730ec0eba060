import type { BijectionSpec } from '../plugin.js'

/** `INC`: adds one */
export const INC: BijectionSpec = {
  specificationVersion: 'v1',
  name: 'INC',
  kind: 'bijection',
  description: 'adds one',
  roles: ['inout'],
  apply: (a) => [a + 1],
  inverse: 'DEC',
  // adjoint: the derivative is 1, so the gradient passes through unchanged (an empty snippet)
  adjoint: { params: ['a'], source: '' },
  emit: { cpu: (a) => [`(${a}) + 1`], wgsl: (a) => [`(${a}) + 1`] },
}
