import { selfInverse } from '../primitive.js'

/** `HADAMARD`: the Hadamard transform of (a, b) */
export const HADAMARD = selfInverse({
  name: 'HADAMARD',
  description: 'the Hadamard transform of (a, b)',
  params: ['a', 'b'],
  roles: ['inout', 'inout'],
  types: ['float', 'float'],
  apply: (a, b) => [(a + b) * Math.SQRT1_2, (a - b) * Math.SQRT1_2],
  // the Hadamard matrix is symmetric and orthogonal: its own transpose, so its tangent and adjoint are itself
  selfAdjoint: true,
  emit: {
    cpu: (a, b) => [`((${a}) + (${b})) * Math.SQRT1_2`, `((${a}) - (${b})) * Math.SQRT1_2`],
    wasm: (w) => {
      w.arg(0)
      w.arg(1)
      w.op('add')
      w.const(Math.SQRT1_2)
      w.op('mul')
      w.arg(0)
      w.arg(1)
      w.op('sub')
      w.const(Math.SQRT1_2)
      w.op('mul')
    },
    wgsl: (a, b) => [`((${a}) + (${b})) * 0.70710678118654752440`, `((${a}) - (${b})) * 0.70710678118654752440`],
  },
})
