import { bijection } from '../primitive.js'

/** `DEC`: subtracts one */
export const DEC = bijection({
  name: 'DEC',
  description: 'subtracts one',
  params: ['a'],
  roles: ['inout'],
  apply: (a) => [a - 1],
  inverse: 'INC',
  emit: { cpu: (a) => [`(${a}) - 1`], wgsl: (a) => [`(${a}) - 1`] },
})
