import type { PurePrimitiveSpec } from '../plugin.js'

/** `min`: the smaller of two values */
export const min: PurePrimitiveSpec = {
  specificationVersion: 'v1',
  name: 'min',
  kind: 'pure',
  arity: 2,
  description: 'the smaller of two values',
  evaluate: (a, b) => Math.min(a, b),
  partials: (a, b) => (a <= b ? [1, 0] : [0, 1]),
  emit: { cpu: (a, b) => `Math.min(${a}, ${b})`, wasm: 'min', wgsl: (a, b) => `min(${a}, ${b})` },
}
