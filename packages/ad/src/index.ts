/**
 * `@tenet/ad`: reverse-mode automatic differentiation of Tenet programs by reversibility. The
 * adjoint of a function is another reversible IR function, generated once and compiled by the
 * same backend; a gradient is one forward run plus one adjoint run, with no tape.
 */
export {
  gradient, grad, jacobian, hessian, hvp, checkGrad,
  type Gradient, type GradientFunction, type LossOptions, type JacobianOptions, type HessianOptions,
  type HvpOptions, type CheckGradOptions, type CheckGradResult,
} from './api.js'
export { compileAdjoint, type CompiledAdjoint } from './compile.js'
export { AdjointBuilder, adjointName, gradientSlots, SINK, type GradientSlot } from './transform.js'
export { differentiate, registryPartials, type Contribution, type PartialsResolver } from './expr.js'
export { standardPartials, type PartialRule, type HelperPartial } from './derivatives.js'
