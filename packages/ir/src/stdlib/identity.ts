import { unary } from '../primitive.js'

/** `identity`: the identity, y += identity(x) adds x */
export const identity = unary({
  name: 'identity',
  description: 'the identity, y += identity(x) adds x',
  evaluate: (x) => x,
  partials: ['1.0'],
  // the series of x itself
  taylor: { expression: 'x' },
  emit: { cpu: (x) => `(${x})`, wasm: 'identity', wgsl: (x) => `(${x})` },
})
