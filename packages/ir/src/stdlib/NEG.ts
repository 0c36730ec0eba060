import type { BijectionSpec } from '../plugin.js'

/** `NEG`: negates a value */
export const NEG: BijectionSpec = {
  specificationVersion: 'v1',
  name: 'NEG',
  kind: 'bijection',
  description: 'negates a value',
  roles: ['inout'],
  apply: (a) => [-a],
  inverse: 'self',
  emit: { cpu: (a) => [`-(${a})`], wgsl: (a) => [`-(${a})`] },
}
