import { unary } from '../primitive.js'

/** `log`: natural logarithm */
export const log = unary({
  name: 'log',
  description: 'natural logarithm',
  evaluate: (x) => Math.log(x),
  partials: ['1.0 / x'],
  emit: { cpu: (x) => `Math.log(${x})`, wasm: { math: 'log' }, wgsl: (x) => `tenet_log(${x})` },
})
