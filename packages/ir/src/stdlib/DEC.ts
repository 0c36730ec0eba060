import { bijection } from '../primitive.js'

/** `DEC`: subtracts one */
export const DEC = bijection({
  name: 'DEC',
  description: 'subtracts one',
  params: ['a'],
  roles: ['inout'],
  apply: (a) => [a - 1],
  inverse: 'INC',
  // Taylor mode: a constant shift moves only the value
  taylor: { map: ['a - 1.0'] },
  // adjoint: the derivative is 1, so the gradient passes through unchanged (an empty snippet)
  adjoint: '',
  // tangent: a ± 1 leaves the tangent as it is (an empty snippet; not selfAdjoint, which would add 1 to it)
  tangent: '',
  emit: {
    cpu: (a) => [`(${a}) - 1`],
    wgsl: (a) => [`(${a}) - 1`],
    // (on i32 the wasm backend computes it in f64 and converts back as JS does)
    wasm: (w) => {
      w.arg(0)
      w.const(1)
      w.op('sub')
    },
  },
})
