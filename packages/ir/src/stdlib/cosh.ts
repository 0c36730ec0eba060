import type { PurePrimitiveSpec } from '../plugin.js'

/** `cosh`: hyperbolic cosine */
export const cosh: PurePrimitiveSpec = {
  specificationVersion: 'v1',
  name: 'cosh',
  kind: 'pure',
  arity: 1,
  description: 'hyperbolic cosine',
  evaluate: (x) => Math.cosh(x),
  partials: (x) => [Math.sinh(x)],
  emit: { cpu: (x) => `Math.cosh(${x})`, wgsl: (x) => `tenet_cosh(${x})` },
}
