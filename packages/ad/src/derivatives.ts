/**
 * Derivative rules of the standard pure primitives, used by the adjoint transform when the
 * registered spec is the standard library's own (a spec with `partialExprs` always wins).
 * Each rule gives ∂f/∂argᵢ as a Tenet expression, emitted inline as straight-line code, or, where
 * the derivative needs a branch (abs, min, max, pow's exponent), a scalar function that is
 * registered as an allocation-free helper primitive.
 */
import type { Expr } from '@tenet/ir'
import { bin, call, clone, lit, mul, neg } from './expr.js'

/** A partial derivative evaluated by a helper primitive (no allocation per call). */
export interface HelperPartial {
  evaluate: (...args: number[]) => number
  cpu?: (...args: string[]) => string
  /**
   * The helper's own partial derivatives as expressions over its arguments (second-order rules,
   * used when a tangent transform differentiates an adjoint that calls the helper). Absent: the
   * helper has no derivative and forward-over-reverse through it is a static error.
   */
  partialExprs?: (args: Expr[]) => Expr[]
}

/** The partials of one primitive at the given argument expressions (copies, free to reuse once). */
export type PartialRule = (args: Expr[]) => Array<Expr | HelperPartial>

const c = clone
const one = () => lit(1)
/** Piecewise-constant helpers (sign, selectors): derivative zero almost everywhere. */
const flat = (args: Expr[]): Expr[] => args.map(() => lit(0))

/** The derivative rules of the standard pure primitives, by name. */
export const standardPartials: Record<string, PartialRule> = {
  sin: ([x]) => [call('cos', c(x!))],
  cos: ([x]) => [neg(call('sin', c(x!)))],
  tan: ([x]) => [bin('+', one(), mul(call('tan', c(x!)), call('tan', c(x!))))],
  exp: ([x]) => [call('exp', c(x!))],
  log: ([x]) => [bin('/', one(), c(x!))],
  sinh: ([x]) => [call('cosh', c(x!))],
  cosh: ([x]) => [call('sinh', c(x!))],
  tanh: ([x]) => [bin('-', one(), mul(call('tanh', c(x!)), call('tanh', c(x!))))],
  asin: ([x]) => [bin('/', one(), call('sqrt', bin('-', one(), mul(c(x!), c(x!)))))],
  acos: ([x]) => [neg(bin('/', one(), call('sqrt', bin('-', one(), mul(c(x!), c(x!))))))],
  atan: ([x]) => [bin('/', one(), bin('+', one(), mul(c(x!), c(x!))))],
  atan2: ([y, x]) => {
    const r = () => bin('+', mul(c(x!), c(x!)), mul(c(y!), c(y!)))
    return [bin('/', c(x!), r()), neg(bin('/', c(y!), r()))]
  },
  abs2: ([x]) => [mul(lit(2), c(x!))],
  sqrt: ([x]) => [bin('/', lit(0.5), call('sqrt', c(x!)))],
  identity: () => [one()],
  abs: () => [{ evaluate: (x) => (x > 0 ? 1 : x < 0 ? -1 : 0), cpu: (x) => `((${x}) > 0 ? 1 : (${x}) < 0 ? -1 : 0)`, partialExprs: flat }],
  min: () => [
    { evaluate: (a, b) => (a <= b ? 1 : 0), cpu: (a, b) => `((${a}) <= (${b}) ? 1 : 0)`, partialExprs: flat },
    { evaluate: (a, b) => (a <= b ? 0 : 1), cpu: (a, b) => `((${a}) <= (${b}) ? 0 : 1)`, partialExprs: flat },
  ],
  max: () => [
    { evaluate: (a, b) => (a >= b ? 1 : 0), cpu: (a, b) => `((${a}) >= (${b}) ? 1 : 0)`, partialExprs: flat },
    { evaluate: (a, b) => (a >= b ? 0 : 1), cpu: (a, b) => `((${a}) >= (${b}) ? 0 : 1)`, partialExprs: flat },
  ],
  pow: ([x, p]) => [
    mul(c(p!), call('pow', c(x!), bin('-', c(p!), one()))),
    {
      evaluate: (x, p) => (x > 0 ? Math.pow(x, p) * Math.log(x) : 0),
      cpu: (x, p) => `((${x}) > 0 ? Math.pow((${x}), (${p})) * Math.log((${x})) : 0)`,
      // d/dx (x^p log x) = x^(p−1) (p log x + 1); d/dp = x^p (log x)²  (x > 0)
      partialExprs: ([x, p]) => [
        mul(call('pow', c(x!), bin('-', c(p!), one())), bin('+', mul(c(p!), call('log', c(x!))), one())),
        mul(call('pow', c(x!), c(p!)), mul(call('log', c(x!)), call('log', c(x!)))),
      ],
    },
  ],
}
