import type { PurePrimitiveSpec } from '../plugin.js'

/** `pow`: power with a real exponent (the same as x ** p) */
export const pow: PurePrimitiveSpec = {
  specificationVersion: 'v1',
  name: 'pow',
  kind: 'pure',
  arity: 2,
  description: 'power with a real exponent (the same as x ** p)',
  evaluate: (x, p) => Math.pow(x, p),
  partials: (x, p) => [p * Math.pow(x, p - 1), x > 0 ? Math.pow(x, p) * Math.log(x) : 0],
  // WGSL's pow is undefined for a negative base: the webgpu prelude's `tenet_pow` follows Math.pow there
  emit: { cpu: (x, p) => `Math.pow(${x}, ${p})`, wgsl: (x, p) => `tenet_pow(${x}, ${p})` },
}
