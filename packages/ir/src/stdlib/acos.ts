import { unary } from '../primitive.js'

/** `acos`: inverse cosine */
export const acos = unary({
  name: 'acos',
  description: 'inverse cosine',
  evaluate: (x) => Math.acos(x),
  partials: ['-(1.0 / sqrt(1.0 - x * x))'],
  emit: { cpu: (x) => `Math.acos(${x})`, wasm: { math: 'acos' }, wgsl: (x) => `tenet_acos(${x})` },
})
