import { unary } from '../primitive.js'

/** `sin`: sine */
export const sin = unary({
  name: 'sin',
  description: 'sine',
  evaluate: (x) => Math.sin(x),
  partials: ['cos(x)'],
  emit: { cpu: (x) => `Math.sin(${x})`, wasm: { math: 'sin' }, wgsl: (x) => `tenet_sin(${x})` },
})
