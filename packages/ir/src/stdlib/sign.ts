import { unary } from '../primitive.js'
import { floatOrI32 } from './signatures.js'

/** `sign`: −1, 0 or 1 as x is negative, zero or positive (f64, f32 or i32; NaN stays NaN); its derivative is zero */
export const sign = unary({
  name: 'sign',
  description: '−1, 0 or 1 as the argument is negative, zero or positive',
  evaluate: (x) => Math.sign(x) + 0, // + 0: sign(−0) is 0, not −0
  partials: ['0.0'],
  signature: floatOrI32('sign'),
  emit: { cpu: (x) => `(Math.sign(${x}) + 0)`, wgsl: (x) => `sign(${x})` },
})
