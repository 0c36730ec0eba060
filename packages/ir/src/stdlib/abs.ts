import { unary } from '../primitive.js'
import { floatOrI32 } from './signatures.js'

/** `abs`: absolute value */
export const abs = unary({
  name: 'abs',
  description: 'absolute value',
  evaluate: (x) => Math.abs(x),
  partials: [
    // the sign: piecewise constant, so its own derivative is zero
    {
      piecewise: (x) => (x > 0 ? 1 : x < 0 ? -1 : 0),
      // (x > 0) − (x < 0): 1, −1, or 0 (at ±0 and NaN)
      emit: {
        cpu: (x) => `((${x}) > 0 ? 1 : (${x}) < 0 ? -1 : 0)`,
        wasm: (w) => {
          w.arg(0)
          w.const(0)
          w.op('gt')
          w.arg(0)
          w.const(0)
          w.op('lt')
          w.op('sub')
        },
      },
      partials: ['0.0'],
    },
  ],
  // on i32 too (the result wraps like every i32 operation: abs(-2³¹) is -2³¹)
  signature: floatOrI32('abs'),
  emit: { cpu: (x) => `Math.abs(${x})`, wasm: 'abs', wgsl: (x) => `abs(${x})` },
})
