import type { PurePrimitiveSpec } from '../plugin.js'
import { floatOrI32 } from './signatures.js'

/** `min`: the smaller of two values */
export const min: PurePrimitiveSpec = {
  specificationVersion: 'v1',
  name: 'min',
  kind: 'pure',
  arity: 2,
  description: 'the smaller of two values',
  evaluate: (a, b) => Math.min(a, b),
  partials: (a, b) => (a <= b ? [1, 0] : [0, 1]),
  // on i32 too (the result wraps like every i32 operation: abs(-2³¹) is -2³¹)
  signature: floatOrI32('min'),
  emit: { cpu: (a, b) => `Math.min(${a}, ${b})`, wasm: 'min', wgsl: (a, b) => `min(${a}, ${b})` },
}
