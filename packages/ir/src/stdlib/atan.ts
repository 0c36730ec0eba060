import { unary } from '../primitive.js'

/** `atan`: inverse tangent */
export const atan = unary({
  name: 'atan',
  description: 'inverse tangent',
  evaluate: (x) => Math.atan(x),
  partials: ['1.0 / (1.0 + x * x)'],
  emit: { cpu: (x) => `Math.atan(${x})`, wasm: { math: 'atan' }, wgsl: (x) => `tenet_atan(${x})` },
})
