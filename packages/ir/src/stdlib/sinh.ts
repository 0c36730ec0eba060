import type { PurePrimitiveSpec } from '../plugin.js'

/** `sinh`: hyperbolic sine */
export const sinh: PurePrimitiveSpec = {
  specificationVersion: 'v1',
  name: 'sinh',
  kind: 'pure',
  arity: 1,
  description: 'hyperbolic sine',
  evaluate: (x) => Math.sinh(x),
  partials: (x) => [Math.cosh(x)],
  emit: { cpu: (x) => `Math.sinh(${x})`, wgsl: (x) => `tenet_sinh(${x})` },
}
