import { binary } from '../primitive.js'
import { floatOrI32 } from './signatures.js'

/** `min`: the smaller of two values */
export const min = binary({
  name: 'min',
  description: 'the smaller of two values',
  params: ['a', 'b'],
  evaluate: (a, b) => Math.min(a, b),
  partials: [
    {
      piecewise: (a, b) => (a <= b ? 1 : 0),
      emit: { cpu: (a, b) => `((${a}) <= (${b}) ? 1 : 0)`, wasm: 'le' },
      partials: ['0.0', '0.0'],
    },
    {
      piecewise: (a, b) => (a <= b ? 0 : 1),
      emit: {
        cpu: (a, b) => `((${a}) <= (${b}) ? 0 : 1)`,
        // 1 − (le) on wasm
        wasm: (w) => {
          w.const(1)
          w.arg(0)
          w.arg(1)
          w.op('le')
          w.op('sub')
        },
      },
      partials: ['0.0', '0.0'],
    },
  ],
  // on i32 too (the result wraps like every i32 operation: abs(-2³¹) is -2³¹)
  signature: floatOrI32('min'),
  emit: { cpu: (a, b) => `Math.min(${a}, ${b})`, wasm: 'min', wgsl: (a, b) => `min(${a}, ${b})` },
})
