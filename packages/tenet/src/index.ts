/**
 * Tenet: a reversible programming language embedded in TypeScript. Write reversible functions
 * with the `rev` tag, run them forwards and backwards.
 */
export { rev, createRegistry, defaultRegistry, type Rev, type RevOptions } from './rev.js'
export type { HostType, ModuleOf, ParamTypes, SignatureMap, Signatures, TypedModule } from './typed.js'
export {
  TenetError,
  TenetSyntaxError,
  TenetStaticError,
  InvertibilityError,
  RegistryError,
  Registry,
  emptyRegistry,
  parse,
  printFunction,
  printModule,
  build,
  type PrimitiveSpec,
  type PurePrimitiveSpec,
  type BijectionSpec,
  type NumberSystemSpec,
  type BackendSpec,
  type FunctionDef,
  type Module,
  type Stmt,
  type Expr,
  type Type,
} from '@tenet/ir'
// one primitive, one file: the builders the standard library's primitives are written with
export {
  pure,
  unary,
  binary,
  bijection,
  selfInverse,
  type PureOptions,
  type BijectionOptions,
  type PiecewisePartial,
  type TaylorText,
  type BijectionTaylorText,
  type PureTaylorRule,
  type BijectionTaylorRule,
} from '@tenet/ir'
export {
  compileModule,
  invert,
  TENET_FUNCTION,
  type TenetFunction,
  type TenetModule,
} from '@tenet/reversible'
export { generatedCode } from '@tenet/reversible'
export { cpuBackend } from '@tenet/backend-cpu'
export {
  complex,
  complexNumbers,
  fixed,
  fixedPoint,
  ulog,
  logarithmic,
  logarithmicOps,
  tropical,
  tropicalNumbers,
  numberSystems,
  registerNumbers,
  type FixedPointFormat,
  type LogarithmicFormat,
  type TropicalFormat,
} from '@tenet/numbers'
export {
  gradient,
  grad,
  jacobian,
  hessian,
  hvp,
  checkGrad,
  jvp,
  compileAdjoint,
  compileTangent,
  type Gradient,
  type GradientFunction,
  type LossOptions,
  type GradOptions,
  type JacobianOptions,
  type HessianOptions,
  type HvpOptions,
  type CheckGradOptions,
  type CheckGradResult,
  type JvpOptions,
  type JvpResult,
} from '@tenet/ad'
export type { GradientPlan, GradientProgramKind, PlanStep } from '@tenet/ad'
export { blockJacobian, type BlockJacobian, type BlockJacobianOptions, type BlockJacobianPlan } from '@tenet/ad'
// higher orders and learning without gradients (seed 002): Taylor mode, the second-order adjoint, learn by consistency
export {
  taylor,
  compileTaylor,
  nestedTangentDerivative,
  compileNestedTangent,
  secondOrderAdjoint,
  hessianReverseOverForward,
  learnByConsistency,
  type TaylorOptions,
  type TaylorResult,
  type CompiledTaylor,
  type SecondOrderAdjointResult,
  type ConsistencyOptions,
  type ConsistencyResult,
} from '@tenet/ad'
// checkpointing: the front door, the schedules (and their options), costs and closed forms; the
// drivers over other state types, the checker and the action constructors stay in @tenet/checkpoint
export {
  checkpointedGradient,
  gradientSchedule,
  bennettSchedule,
  bennettGradientSchedule,
  knillSchedule,
  knillGradientSchedule,
  binomialSchedule,
  storeAllSchedule,
  recomputeAllSchedule,
  invertSchedule,
  reversibleGradientSchedule,
  costOf,
  scheduleSvg,
  bennettCost,
  knillCost,
  binomial,
  eta,
  revolveExtraSteps,
  revolveExtraStepsDP,
  revolveRepetitions,
  revolveSplit,
  type ArrayStep,
  type StateMemory,
  type CheckpointedGradientOptions,
  type CheckpointedGradientResult,
  type GradientCostLog,
  type GradientScheduleName,
  type BennettOptions,
  type KnillOptions,
  type BinomialOptions,
  type ChainOptions,
  type Action,
  type Schedule,
  type ScheduleCost,
  type CostLog,
  type SvgOptions,
} from '@tenet/checkpoint'
export * as examples from './examples/index.js'
export {
  vjp,
  type RuleSpec,
  type RuleValue,
  type RuleSeed,
  type VjpRule,
  type VjpResult,
  type JvpRule,
  type JvpRuleResult,
} from '@tenet/ad'
// primitives with array arguments: the builder, and det/dot/logsumexp to register (registry.registerPrimitive)
export { arrayPrimitive, det, dot, logsumexp, type ArgKind, type ArgValues, type ArrayPrimitiveDef } from '@tenet/ir'
