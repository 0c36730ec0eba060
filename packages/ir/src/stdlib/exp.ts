import type { PurePrimitiveSpec } from '../plugin.js'

/** `exp`: natural exponential */
export const exp: PurePrimitiveSpec = {
  specificationVersion: 'v1',
  name: 'exp',
  kind: 'pure',
  arity: 1,
  description: 'natural exponential',
  evaluate: (x) => Math.exp(x),
  partials: (x) => [Math.exp(x)],
  emit: { cpu: (x) => `Math.exp(${x})`, wgsl: (x) => `tenet_exp(${x})` },
}
