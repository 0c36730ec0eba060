import { unary } from '../primitive.js'

/** `sqrt`: square root */
export const sqrt = unary({
  name: 'sqrt',
  description: 'square root',
  evaluate: (x) => Math.sqrt(x),
  partials: ['0.5 / sqrt(x)'],
  // y′ = x′ / (2y)
  taylor: { ode: ['0.5 / y'] },
  emit: { cpu: (x) => `Math.sqrt(${x})`, wasm: 'sqrt', wgsl: (x) => `tenet_sqrt(${x})` },
})
