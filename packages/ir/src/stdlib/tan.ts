import type { PurePrimitiveSpec } from '../plugin.js'

/** `tan`: tangent */
export const tan: PurePrimitiveSpec = {
  specificationVersion: 'v1',
  name: 'tan',
  kind: 'pure',
  arity: 1,
  description: 'tangent',
  evaluate: (x) => Math.tan(x),
  partials: (x) => [1 + Math.tan(x) ** 2],
  emit: { cpu: (x) => `Math.tan(${x})`, wgsl: (x) => `tenet_tan(${x})` },
}
