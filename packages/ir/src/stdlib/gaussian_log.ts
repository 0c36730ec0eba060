import { unary } from '../primitive.js'

/** log(1 + eˣ) without overflow for large x and without losing digits for very negative x. */
function gaussianLog(x: number): number {
  return x > 0 ? x + Math.log1p(Math.exp(-x)) : Math.log1p(Math.exp(x))
}

/**
 * `gaussian_log`: log(1 + eˣ), the Gaussian logarithm (NiLang's helper for adding logarithmic
 * numbers: log(eᵃ + eᵇ) = a + gaussian_log(b − a)); its derivative is the logistic 1 / (1 + e⁻ˣ),
 * written as an expression so that second derivatives (Hessians, forward over reverse) see through it.
 */
export const gaussian_log = unary({
  name: 'gaussian_log',
  description: 'the Gaussian logarithm log(1 + exp(x))',
  evaluate: gaussianLog,
  partials: ['1.0 / (1.0 + exp(-x))'],
  emit: { wgsl: (x) => `select(log(1.0 + exp(${x})), (${x}) + log(1.0 + exp(-(${x}))), (${x}) > 0.0)` },
})
