import { unary } from '../primitive.js'

/** `cos`: cosine */
export const cos = unary({
  name: 'cos',
  description: 'cosine',
  evaluate: (x) => Math.cos(x),
  partials: ['-sin(x)'],
  emit: { cpu: (x) => `Math.cos(${x})`, wasm: { math: 'cos' }, wgsl: (x) => `tenet_cos(${x})` },
})
