import { binary } from '../primitive.js'
import { floatOrI32 } from './signatures.js'

/** `max`: the larger of two values */
export const max = binary({
  name: 'max',
  description: 'the larger of two values',
  params: ['a', 'b'],
  evaluate: (a, b) => Math.max(a, b),
  partials: [
    {
      piecewise: (a, b) => (a >= b ? 1 : 0),
      emit: { cpu: (a, b) => `((${a}) >= (${b}) ? 1 : 0)`, wasm: 'ge' },
      partials: ['0.0', '0.0'],
    },
    {
      piecewise: (a, b) => (a >= b ? 0 : 1),
      emit: {
        cpu: (a, b) => `((${a}) >= (${b}) ? 0 : 1)`,
        // 1 − (ge) on wasm
        wasm: (w) => {
          w.const(1)
          w.arg(0)
          w.arg(1)
          w.op('ge')
          w.op('sub')
        },
      },
      partials: ['0.0', '0.0'],
    },
  ],
  // on i32 too (the result wraps like every i32 operation: abs(-2³¹) is -2³¹)
  signature: floatOrI32('max'),
  emit: { cpu: (a, b) => `Math.max(${a}, ${b})`, wasm: 'max', wgsl: (a, b) => `max(${a}, ${b})` },
})
