import { selfInverse } from '../primitive.js'

/** `NEG`: negates a value */
export const NEG = selfInverse({
  name: 'NEG',
  description: 'negates a value',
  params: ['a'],
  roles: ['inout'],
  apply: (a) => [-a],
  selfAdjoint: true,
  emit: {
    cpu: (a) => [`-(${a})`],
    wasm: (w) => {
      w.arg(0)
      w.op('neg')
    },
    wgsl: (a) => [`-(${a})`],
  },
})
