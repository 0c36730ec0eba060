import type { PurePrimitiveSpec } from '../plugin.js'

/** `sqrt`: square root */
export const sqrt: PurePrimitiveSpec = {
  specificationVersion: 'v1',
  name: 'sqrt',
  kind: 'pure',
  arity: 1,
  description: 'square root',
  evaluate: (x) => Math.sqrt(x),
  partials: (x) => [0.5 / Math.sqrt(x)],
  emit: { cpu: (x) => `Math.sqrt(${x})`, wasm: 'sqrt', wgsl: (x) => `tenet_sqrt(${x})` },
}
