import { selfInverse } from '../primitive.js'

/** `INV`: replaces x by 1/x */
export const INV = selfInverse({
  name: 'INV',
  description: 'replaces x by 1/x',
  params: ['a'],
  roles: ['inout'],
  types: ['float'],
  apply: (a) => [1 / a],
  // Taylor mode: the series of 1/a
  taylor: { map: ['1.0 / a'] },
  // adjoint: g_a ← −g_a / a² (with a restored), through an ancilla that is uncomputed exactly
  adjoint: 's <- 0.0\nSWAP(s, g_a)\ng_a -= s / (a * a)\ns += g_a * (a * a)\ns -> 0.0',
  // tangent: t_a ← −t_a · a² (a is the new value 1/a), through an ancilla freed unchecked (it holds −t_a / a² exactly)
  tangent:
    's <- 0.0\nSWAP(s, t_a)\nt_a -= s * (a * a)\n@unchecked {\n  z <- 0.0\n  SWAP(z, s)\n  z -> -(t_a / (a * a))\n}\ns -> 0.0',
  emit: {
    cpu: (a) => [`1 / (${a})`],
    wasm: (w) => {
      w.const(1)
      w.arg(0)
      w.op('div')
    },
    wgsl: (a) => [`tenet_div(1.0, ${a})`],
  },
})
