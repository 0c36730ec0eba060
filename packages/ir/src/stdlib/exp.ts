import { unary } from '../primitive.js'

/** `exp`: natural exponential */
export const exp = unary({
  name: 'exp',
  description: 'natural exponential',
  evaluate: (x) => Math.exp(x),
  partials: ['exp(x)'],
  emit: { cpu: (x) => `Math.exp(${x})`, wasm: { math: 'exp' }, wgsl: (x) => `tenet_exp(${x})` },
})
