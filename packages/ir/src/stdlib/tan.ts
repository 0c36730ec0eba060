import { unary } from '../primitive.js'

/** `tan`: tangent */
export const tan = unary({
  name: 'tan',
  description: 'tangent',
  evaluate: (x) => Math.tan(x),
  partials: ['1.0 + tan(x) * tan(x)'],
  // y′ = (1 + y²)·x′
  taylor: { ode: ['1.0 + y * y'] },
  emit: { cpu: (x) => `Math.tan(${x})`, wasm: { math: 'tan' }, wgsl: (x) => `tenet_tan(${x})` },
})
