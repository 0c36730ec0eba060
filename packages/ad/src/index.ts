/**
 * `@tenet/ad`: automatic differentiation of Tenet programs by reversibility. The adjoint of a
 * function is another reversible IR function, generated once and compiled by the same backend;
 * a gradient is one forward run plus one adjoint run, with no tape. The tangent transform gives
 * forward mode (`jvp`, forward Jacobians) and, applied to the adjoint, exact Hessians.
 */
export type { Gradient, SurfaceGradient, ComplexGradient, LossOptions } from './arguments.js'
export { grad, type GradientFunction, type GradOptions } from './grad.js'
export { gradient, surfaceView, type SurfaceView } from './gradient.js'
export { checkGrad, type CheckGradOptions, type CheckGradResult } from './check-grad.js'
export { DEFAULT_WIDTH } from './tangent-run.js'
export { jvp, type Direction, type JvpOptions, type JvpResult } from './jvp.js'
export { jacobian, jacobianCost, type JacobianOptions } from './jacobian.js'
export { hessian, hvp, type HessianOptions, type HvpOptions } from './hessian.js'
export {
  compileAdjoint,
  compileForwardGradient,
  compileFused,
  compileSecondOrder,
  compileTangent,
  type CompiledAdjoint,
  type CompiledForwardGradient,
  type CompiledSecondOrder,
  type CompiledTangent,
} from './compile.js'
export { compileGradientAdjoint, type CompiledGradientAdjoint } from './gradient-adjoint.js'
export { compileMapForward } from './map-forward.js'
export { AdjointBuilder, adjointName, gradientSlots, SINK, type GradientSlot } from './transform.js'
export { TangentBuilder, tangentName, tangentSlots, type TangentSlot } from './tangent.js'
export { differentiate, registryPartials, type Contribution, type PartialsResolver } from './expr.js'
export {
  graphEmbeddingSource,
  graphEmbeddingArgs,
  petersenEdges,
  petersenNonEdges,
} from './examples/graph-embedding.js'
export {
  besselSource,
  besselReciprocalSource,
  complexLogSource,
  sparseDotMergeSource,
  sparseDotSource,
  ummSource,
  unitarySource,
} from './examples/papers.js'
export {
  vjp,
  jvpRule,
  type RuleSpec,
  type RuleValue,
  type RuleSeed,
  type VjpRule,
  type VjpResult,
  type JvpRule,
  type JvpRuleResult,
} from './vjp.js'
export { dualCall, type DualCallArg } from './dual-call.js'
export {
  taylor,
  compileTaylor,
  nestedTangentDerivative,
  compileNestedTangent,
  type TaylorOptions,
  type TaylorResult,
  type CompiledTaylor,
} from './taylor-mode.js'
export { TaylorBuilder, taylorName, taylorSlots, type TaylorSlot } from './taylor.js'
export { secondOrderAdjoint, hessianReverseOverForward, type SecondOrderAdjointResult } from './second-order.js'
export { learnByConsistency, type Assignment, type ConsistencyOptions, type ConsistencyResult } from './consistency.js'
export { besselTermsSource } from './examples/papers.js'
export { consistencySource } from './examples/consistency.js'
export {
  planGradient,
  type GradientPlan,
  type GradientProgramKind,
  type PlanStep,
  type PlanOptions,
  type PlannedGradient,
} from './plan.js'
export {
  blockJacobian,
  type BlockJacobian,
  type BlockJacobianOptions,
  type BlockJacobianPlan,
} from './block-jacobian.js'
