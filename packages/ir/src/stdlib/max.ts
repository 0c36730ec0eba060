import type { PurePrimitiveSpec } from '../plugin.js'
import { floatOrI32 } from './signatures.js'

/** `max`: the larger of two values */
export const max: PurePrimitiveSpec = {
  specificationVersion: 'v1',
  name: 'max',
  kind: 'pure',
  arity: 2,
  description: 'the larger of two values',
  evaluate: (a, b) => Math.max(a, b),
  partials: (a, b) => (a >= b ? [1, 0] : [0, 1]),
  // on i32 too (the result wraps like every i32 operation: abs(-2³¹) is -2³¹)
  signature: floatOrI32('max'),
  emit: { cpu: (a, b) => `Math.max(${a}, ${b})`, wasm: 'max', wgsl: (a, b) => `max(${a}, ${b})` },
}
