/**
 * `@tenet/dual`: dual-numbers reverse AD for plain, irreversible TypeScript (Smeding & Vákár,
 * "Efficient Dual-Numbers Reverse AD via Well-Known Program Transformations"), in its efficient
 * form: scalars are handles into a per-call typed-array arena of values and contribution edges,
 * numbered by a per-call counter; one reverse sweep from the highest id accumulates the adjoints.
 */
export { Dual } from './dual.js'
export { HANDLE_BASE, type Real, type DualRule, type Pullback } from './tape.js'
export { DualError } from './errors.js'
export type { StageInfo } from './staged.js'
export {
  grad,
  valueAndGrad,
  vjp,
  jacobian,
  evaluate,
  type DualFunction,
  type DualOptions,
  type GradFunction,
  type Gradients,
  type Jacobian,
  type PlainArgs,
  type ValueAndGradFunction,
  type VjpResult,
} from './api.js'
export { defineRule, type RuleSpec } from './rule.js'
export type { Cotangent, OutputCotangent, Plain, Valued } from './structure.js'
export { hostFunction, dualHostInfo, DUAL_HOST, type DualHostFunction, type DualHostInfo } from './host.js'
