import type { PurePrimitiveSpec } from '../plugin.js'

/** `sin`: sine */
export const sin: PurePrimitiveSpec = {
  specificationVersion: 'v1',
  name: 'sin',
  kind: 'pure',
  arity: 1,
  description: 'sine',
  evaluate: (x) => Math.sin(x),
  partials: (x) => [Math.cos(x)],
  emit: { cpu: (x) => `Math.sin(${x})`, wgsl: (x) => `tenet_sin(${x})` },
}
