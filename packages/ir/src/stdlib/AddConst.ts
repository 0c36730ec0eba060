import { bijection } from '../primitive.js'

/** `AddConst`: adds a read-only value */
export const AddConst = bijection({
  name: 'AddConst',
  description: 'adds a read-only value',
  params: ['a', 'c'],
  roles: ['inout', 'in'],
  apply: (a, c) => [a + c],
  inverse: 'SubConst',
  // Taylor mode: a's coefficients gain c's
  taylor: { map: ['a + c'] },
  // ∂(a + c)/∂c = 1; g_a passes through
  adjoint: 'g_c += g_a',
  tangent: 't_a += t_c',
  emit: {
    cpu: (a, c) => [`(${a}) + (${c})`],
    wasm: (w) => {
      w.arg(0)
      w.arg(1)
      w.op('add')
    },
    wgsl: (a, c) => [`(${a}) + (${c})`],
  },
})
