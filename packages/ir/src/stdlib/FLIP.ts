import { selfInverse } from '../primitive.js'

/** `FLIP`: logical not of a bool */
export const FLIP = selfInverse({
  name: 'FLIP',
  description: 'logical not of a bool',
  params: ['a'],
  roles: ['inout'],
  types: ['bool'],
  apply: (a) => [a ? 0 : 1],
  emit: { cpu: (a) => [`!(${a})`], wgsl: (a) => [`!(${a})`] },
})
