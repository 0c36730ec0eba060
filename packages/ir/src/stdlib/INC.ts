import { bijection } from '../primitive.js'

/** `INC`: adds one */
export const INC = bijection({
  name: 'INC',
  description: 'adds one',
  params: ['a'],
  roles: ['inout'],
  apply: (a) => [a + 1],
  inverse: 'DEC',
  emit: { cpu: (a) => [`(${a}) + 1`], wgsl: (a) => [`(${a}) + 1`] },
})
