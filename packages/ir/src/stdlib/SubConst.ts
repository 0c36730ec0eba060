import { bijection } from '../primitive.js'

/** `SubConst`: subtracts a read-only value */
export const SubConst = bijection({
  name: 'SubConst',
  description: 'subtracts a read-only value',
  params: ['a', 'c'],
  roles: ['inout', 'in'],
  apply: (a, c) => [a - c],
  inverse: 'AddConst',
  // Taylor mode: a's coefficients lose c's
  taylor: { map: ['a - c'] },
  // ∂(a − c)/∂c = −1; g_a passes through
  adjoint: 'g_c -= g_a',
  tangent: 't_a -= t_c',
  emit: {
    cpu: (a, c) => [`(${a}) - (${c})`],
    wasm: (w) => {
      w.arg(0)
      w.arg(1)
      w.op('sub')
    },
    wgsl: (a, c) => [`(${a}) - (${c})`],
  },
})
