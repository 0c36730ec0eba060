import type { BijectionSpec } from '../plugin.js'

/** `DEC`: subtracts one */
export const DEC: BijectionSpec = {
  specificationVersion: 'v1',
  name: 'DEC',
  kind: 'bijection',
  description: 'subtracts one',
  roles: ['inout'],
  apply: (a) => [a - 1],
  inverse: 'INC',
  // adjoint: the derivative is 1, so the gradient passes through unchanged (an empty snippet)
  adjoint: { params: ['a'], source: '' },
  emit: { cpu: (a) => [`(${a}) - 1`], wgsl: (a) => [`(${a}) - 1`] },
}
