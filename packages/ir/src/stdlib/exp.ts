import { unary } from '../primitive.js'

/** `exp`: natural exponential */
export const exp = unary({
  name: 'exp',
  description: 'natural exponential',
  evaluate: (x) => Math.exp(x),
  partials: ['exp(x)'],
  // y′ = y·x′: the result's own series (z_j = (1/j) Σ m·x_m·z_{j−m})
  taylor: { ode: ['y'] },
  emit: { cpu: (x) => `Math.exp(${x})`, wasm: { math: 'exp' }, wgsl: (x) => `tenet_exp(${x})` },
})
