import { selfInverse } from '../primitive.js'

/** `SWAP`: exchanges two values (also written a <-> b) */
export const SWAP = selfInverse({
  name: 'SWAP',
  description: 'exchanges two values (also written a <-> b)',
  params: ['a', 'b'],
  roles: ['inout', 'inout'],
  apply: (a, b) => [b, a],
  selfAdjoint: true,
  emit: { cpu: (a, b) => [b, a], wasm: { permute: [1, 0] }, wgsl: (a, b) => [b, a] },
})
