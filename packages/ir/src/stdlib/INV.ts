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
  emit: { cpu: (a) => [`1 / (${a})`] },
}
