import type { BijectionSpec } from '../plugin.js'

/** `FLIP`: logical not of a bool */
export const FLIP: BijectionSpec = {
  specificationVersion: 'v1',
  name: 'FLIP',
  kind: 'bijection',
  description: 'logical not of a bool',
  types: ['bool'],
  roles: ['inout'],
  apply: (a) => [a ? 0 : 1],
  inverse: 'self',
  emit: { cpu: (a) => [`!(${a})`], wgsl: (a) => [`!(${a})`] },
}
