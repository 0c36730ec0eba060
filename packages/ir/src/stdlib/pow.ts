import { binary } from '../primitive.js'

/**
 * `pow`: power with a real exponent (the same as x ** p). WGSL's pow is undefined for a negative
 * base: the webgpu prelude's `tenet_pow` follows Math.pow there.
 */
export const pow = binary({
  name: 'pow',
  description: 'power with a real exponent (the same as x ** p)',
  params: ['x', 'p'],
  evaluate: (x, p) => Math.pow(x, p),
  partials: [
    'p * pow(x, p - 1.0)',
    // x^p log x where x > 0 (zero elsewhere); d/dx = x^(p−1) (p log x + 1), d/dp = x^p (log x)²
    {
      piecewise: (x, p) => (x > 0 ? Math.pow(x, p) * Math.log(x) : 0),
      emit: { cpu: (x, p) => `((${x}) > 0 ? Math.pow((${x}), (${p})) * Math.log((${x})) : 0)` },
      partials: ['pow(x, p - 1.0) * (p * log(x) + 1.0)', 'pow(x, p) * (log(x) * log(x))'],
    },
  ],
  // the series of the operator `x ** p`: a·z′ = p·z·a′ for a constant exponent (a product for 2), exp(p log x) otherwise
  taylor: { expression: 'x ** p' },
  emit: { cpu: (x, p) => `Math.pow(${x}, ${p})`, wasm: { math: 'pow' }, wgsl: (x, p) => `tenet_pow(${x}, ${p})` },
})
