import { unary } from '../primitive.js'

/** `identity`: the identity, y += identity(x) adds x */
export const identity = unary({
  name: 'identity',
  description: 'the identity, y += identity(x) adds x',
  evaluate: (x) => x,
  partials: ['1.0'],
  emit: { cpu: (x) => `(${x})`, wasm: 'identity', wgsl: (x) => `(${x})` },
})
