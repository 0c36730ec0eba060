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
  emit: { cpu: (a) => [`(${a}) + 1`], wgsl: (a) => [`(${a}) + 1`] },
}
