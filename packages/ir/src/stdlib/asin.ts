import { unary } from '../primitive.js'

/** `asin`: inverse sine */
export const asin = unary({
  name: 'asin',
  description: 'inverse sine',
  evaluate: (x) => Math.asin(x),
  partials: ['1.0 / sqrt(1.0 - x * x)'],
  emit: { cpu: (x) => `Math.asin(${x})`, wasm: { math: 'asin' }, wgsl: (x) => `tenet_asin(${x})` },
})
