import { bijection } from '../primitive.js'

/** `sincos_inverse`: s -= sin(x), c -= cos(x) (the inverse of sincos) */
export const sincos_inverse = bijection({
  name: 'sincos_inverse',
  description: 's -= sin(x), c -= cos(x) (the inverse of sincos)',
  params: ['s', 'c', 'x'],
  roles: ['inout', 'inout', 'in'],
  types: ['float', 'float', 'float'],
  apply: (s, c, x) => [s - Math.sin(x), c - Math.cos(x)],
  inverse: 'sincos',
  // Taylor mode: s and c lose the series of sin x and cos x
  taylor: { map: ['s - sin(x)', 'c - cos(x)'] },
  adjoint: 'g_x -= g_s * cos(x) - g_c * sin(x)',
  tangent: 't_s -= cos(x) * t_x\nt_c += sin(x) * t_x',
  emit: {
    cpu: (s, c, x) => [`${s} - Math.sin(${x})`, `${c} - Math.cos(${x})`],
    wgsl: (s, c, x) => [`${s} - tenet_sin(${x})`, `${c} - tenet_cos(${x})`],
  },
})
