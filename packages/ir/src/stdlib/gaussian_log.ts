import type { Expr } from '../ast.js'
import type { PurePrimitiveSpec } from '../plugin.js'

/** log(1 + eˣ) without overflow for large x and without losing digits for very negative x. */
function gaussianLog(x: number): number {
  return x > 0 ? x + Math.log1p(Math.exp(-x)) : Math.log1p(Math.exp(x))
}

const f = (value: number): Expr => ({ kind: 'num', value, isFloat: true })

/**
 * `gaussian_log`: log(1 + eˣ), the Gaussian logarithm (NiLang's helper for adding logarithmic
 * numbers: log(eᵃ + eᵇ) = a + gaussian_log(b − a)); its derivative is the logistic 1 / (1 + e⁻ˣ).
 */
export const gaussian_log: PurePrimitiveSpec = {
  specificationVersion: 'v1',
  name: 'gaussian_log',
  kind: 'pure',
  arity: 1,
  description: 'the Gaussian logarithm log(1 + exp(x))',
  evaluate: gaussianLog,
  partials: (x) => [1 / (1 + Math.exp(-x))],
  // as an expression, so that second derivatives (Hessians, forward over reverse) see through it
  partialExprs: ([x]) => [
    {
      kind: 'binary',
      op: '/',
      left: f(1),
      right: {
        kind: 'binary',
        op: '+',
        left: f(1),
        right: { kind: 'call', callee: 'exp', args: [{ kind: 'unary', op: '-', arg: x! }] },
      },
    },
  ],
  emit: { wgsl: (x) => `select(log(1.0 + exp(${x})), (${x}) + log(1.0 + exp(-(${x}))), (${x}) > 0.0)` },
}
