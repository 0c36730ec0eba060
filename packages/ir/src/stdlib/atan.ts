import type { PurePrimitiveSpec } from '../plugin.js'

/** `atan`: inverse tangent */
export const atan: PurePrimitiveSpec = {
  specificationVersion: 'v1',
  name: 'atan',
  kind: 'pure',
  arity: 1,
  description: 'inverse tangent',
  evaluate: (x) => Math.atan(x),
  partials: (x) => [1 / (1 + x * x)],
  emit: { cpu: (x) => `Math.atan(${x})`, wgsl: (x) => `tenet_atan(${x})` },
}
