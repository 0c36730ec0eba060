import { unary } from '../primitive.js'

/** `sinh`: hyperbolic sine */
export const sinh = unary({
  name: 'sinh',
  description: 'hyperbolic sine',
  evaluate: (x) => Math.sinh(x),
  partials: ['cosh(x)'],
  emit: { cpu: (x) => `Math.sinh(${x})`, wasm: { math: 'sinh' }, wgsl: (x) => `tenet_sinh(${x})` },
})
