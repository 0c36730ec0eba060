import type { PurePrimitiveSpec } from '../plugin.js'

/** `cos`: cosine */
export const cos: PurePrimitiveSpec = {
  specificationVersion: 'v1',
  name: 'cos',
  kind: 'pure',
  arity: 1,
  description: 'cosine',
  evaluate: (x) => Math.cos(x),
  partials: (x) => [-Math.sin(x)],
  emit: { cpu: (x) => `Math.cos(${x})`, wgsl: (x) => `tenet_cos(${x})` },
}
