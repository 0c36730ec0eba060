import type { BijectionSpec } from '../plugin.js'

/** `SWAP`: exchanges two values (also written a <-> b) */
export const SWAP: BijectionSpec = {
  specificationVersion: 'v1',
  name: 'SWAP',
  kind: 'bijection',
  description: 'exchanges two values (also written a <-> b)',
  roles: ['inout', 'inout'],
  apply: (a, b) => [b, a],
  inverse: 'self',
  emit: { cpu: (a, b) => [b, a], wasm: { permute: [1, 0] }, wgsl: (a, b) => [b, a] },
}
