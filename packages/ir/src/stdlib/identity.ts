import type { PurePrimitiveSpec } from '../plugin.js'

/** `identity`: the identity, y += identity(x) adds x */
export const identity: PurePrimitiveSpec = {
  specificationVersion: 'v1',
  name: 'identity',
  kind: 'pure',
  arity: 1,
  description: 'the identity, y += identity(x) adds x',
  evaluate: (x) => x,
  partials: () => [1],
  emit: { cpu: (x) => `(${x})`, wasm: 'identity', wgsl: (x) => `(${x})` },
}
