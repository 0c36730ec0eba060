import type { PurePrimitiveSpec } from '../plugin.js'

/** `acos`: inverse cosine */
export const acos: PurePrimitiveSpec = {
  specificationVersion: 'v1',
  name: 'acos',
  kind: 'pure',
  arity: 1,
  description: 'inverse cosine',
  evaluate: (x) => Math.acos(x),
  partials: (x) => [-1 / Math.sqrt(1 - x * x)],
  emit: { cpu: (x) => `Math.acos(${x})`, wgsl: (x) => `tenet_acos(${x})` },
}
