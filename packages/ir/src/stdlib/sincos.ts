import { bijection } from '../primitive.js'

/**
 * `sincos(s, c, x)`: s += sin(x) and c += cos(x) in one instruction (the cpu backend evaluates
 * `Math.sin` and `Math.cos`; a backend with a joint sincos can share the argument reduction).
 * Its inverse is `sincos_inverse` (s -= sin x, c -= cos x).
 */
export const sincos = bijection({
  name: 'sincos',
  description: 's += sin(x), c += cos(x)',
  params: ['s', 'c', 'x'],
  roles: ['inout', 'inout', 'in'],
  types: ['float', 'float', 'float'],
  apply: (s, c, x) => [s + Math.sin(x), c + Math.cos(x)],
  inverse: 'sincos_inverse',
  // Taylor mode: s and c gain the series of sin x and cos x
  taylor: { map: ['s + sin(x)', 'c + cos(x)'] },
  // the outputs' gradients pass through; x collects g_s·cos x − g_c·sin x
  adjoint: 'g_x += g_s * cos(x) - g_c * sin(x)',
  tangent: 't_s += cos(x) * t_x\nt_c -= sin(x) * t_x',
  emit: {
    cpu: (s, c, x) => [`${s} + Math.sin(${x})`, `${c} + Math.cos(${x})`],
    wgsl: (s, c, x) => [`${s} + tenet_sin(${x})`, `${c} + tenet_cos(${x})`],
  },
})
