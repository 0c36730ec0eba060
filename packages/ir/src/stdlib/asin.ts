import type { PurePrimitiveSpec } from '../plugin.js'

/** `asin`: inverse sine */
export const asin: PurePrimitiveSpec = {
  specificationVersion: 'v1',
  name: 'asin',
  kind: 'pure',
  arity: 1,
  description: 'inverse sine',
  evaluate: (x) => Math.asin(x),
  partials: (x) => [1 / Math.sqrt(1 - x * x)],
  emit: { cpu: (x) => `Math.asin(${x})`, wgsl: (x) => `tenet_asin(${x})` },
}
