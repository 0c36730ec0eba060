import type { PurePrimitiveSpec } from '../plugin.js'

/** `max`: the larger of two values */
export const max: PurePrimitiveSpec = {
  specificationVersion: 'v1',
  name: 'max',
  kind: 'pure',
  arity: 2,
  description: 'the larger of two values',
  evaluate: (a, b) => Math.max(a, b),
  partials: (a, b) => (a >= b ? [1, 0] : [0, 1]),
  emit: { cpu: (a, b) => `Math.max(${a}, ${b})`, wasm: 'max', wgsl: (a, b) => `max(${a}, ${b})` },
}
