import type { PurePrimitiveSpec } from '../plugin.js'
import { floatOrI32 } from './signatures.js'

/** `abs`: absolute value */
export const abs: PurePrimitiveSpec = {
  specificationVersion: 'v1',
  name: 'abs',
  kind: 'pure',
  arity: 1,
  description: 'absolute value',
  evaluate: (x) => Math.abs(x),
  partials: (x) => [x > 0 ? 1 : x < 0 ? -1 : 0],
  // on i32 too (the result wraps like every i32 operation: abs(-2³¹) is -2³¹)
  signature: floatOrI32('abs'),
  emit: { cpu: (x) => `Math.abs(${x})`, wasm: 'abs', wgsl: (x) => `abs(${x})` },
}
