import type { PurePrimitiveSpec } from '../plugin.js'

/** `tanh`: hyperbolic tangent */
export const tanh: PurePrimitiveSpec = {
  specificationVersion: 'v1',
  name: 'tanh',
  kind: 'pure',
  arity: 1,
  description: 'hyperbolic tangent',
  evaluate: (x) => Math.tanh(x),
  partials: (x) => [1 - Math.tanh(x) ** 2],
  emit: { cpu: (x) => `Math.tanh(${x})`, wgsl: (x) => `tenet_tanh(${x})` },
}
