import { unary } from '../primitive.js'

/** `cosh`: hyperbolic cosine */
export const cosh = unary({
  name: 'cosh',
  description: 'hyperbolic cosine',
  evaluate: (x) => Math.cosh(x),
  partials: ['sinh(x)'],
  emit: { cpu: (x) => `Math.cosh(${x})`, wasm: { math: 'cosh' }, wgsl: (x) => `tenet_cosh(${x})` },
})
