import { unary } from '../primitive.js'

/** `abs2`: squared absolute value */
export const abs2 = unary({
  name: 'abs2',
  description: 'squared absolute value',
  evaluate: (x) => x * x,
  partials: ['2.0 * x'],
  // the Cauchy square of x's series
  taylor: { expression: 'x * x' },
  emit: {
    cpu: (x) => `((${x}) * (${x}))`,
    wasm: (w) => {
      w.arg(0)
      w.arg(0)
      w.op('mul')
    },
    wgsl: (x) => `((${x}) * (${x}))`,
  },
})
