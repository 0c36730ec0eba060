import { unary } from '../primitive.js'

/** `tanh`: hyperbolic tangent */
export const tanh = unary({
  name: 'tanh',
  description: 'hyperbolic tangent',
  evaluate: (x) => Math.tanh(x),
  partials: ['1.0 - tanh(x) * tanh(x)'],
  // y′ = (1 − y²)·x′
  taylor: { ode: ['1.0 - y * y'] },
  emit: { cpu: (x) => `Math.tanh(${x})`, wasm: { math: 'tanh' }, wgsl: (x) => `tenet_tanh(${x})` },
})
