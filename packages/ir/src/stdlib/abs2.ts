import type { PurePrimitiveSpec } from '../plugin.js'

/** `abs2`: squared absolute value */
export const abs2: PurePrimitiveSpec = {
  specificationVersion: 'v1',
  name: 'abs2',
  kind: 'pure',
  arity: 1,
  description: 'squared absolute value',
  evaluate: (x) => x * x,
  partials: (x) => [2 * x],
  emit: { cpu: (x) => `((${x}) * (${x}))`, wgsl: (x) => `((${x}) * (${x}))` },
}
