import type { PurePrimitiveSpec } from '../plugin.js'

/** `log`: natural logarithm */
export const log: PurePrimitiveSpec = {
  specificationVersion: 'v1',
  name: 'log',
  kind: 'pure',
  arity: 1,
  description: 'natural logarithm',
  evaluate: (x) => Math.log(x),
  partials: (x) => [1 / x],
  emit: { cpu: (x) => `Math.log(${x})`, wgsl: (x) => `tenet_log(${x})` },
}
