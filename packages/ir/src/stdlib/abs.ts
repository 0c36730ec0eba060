import type { PurePrimitiveSpec } from '../plugin.js'

/** `abs`: absolute value */
export const abs: PurePrimitiveSpec = {
  specificationVersion: 'v1',
  name: 'abs',
  kind: 'pure',
  arity: 1,
  description: 'absolute value',
  evaluate: (x) => Math.abs(x),
  partials: (x) => [x > 0 ? 1 : x < 0 ? -1 : 0],
  emit: { cpu: (x) => `Math.abs(${x})`, wasm: 'abs', wgsl: (x) => `abs(${x})` },
}
