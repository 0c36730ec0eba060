/**
 * @tenet/checkpoint — differentiate a long chain s_i = F_i(s_{i−1}) in bounded memory, by
 * reverse computing (Bennett, Knill) or checkpointing (binomial/revolve, store-all,
 * recompute-all). Schedules are data (streams of {@link Action}s); drivers interpret them.
 */
export {
  act,
  formatAction,
  makeSchedule,
  type Action,
  type AdjointAction,
  type ForwardAction,
  type FreeAction,
  type RestoreAction,
  type Schedule,
  type StoreAction,
  type UncomputeAction,
} from './action.js'
export {
  checkSchedule,
  ScheduleError,
  ScheduleSimulator,
  type CheckOptions,
  type ScheduleReport,
  type SimulatorOptions,
} from './check.js'
export { costOf, type CostLog, type ScheduleCost } from './cost.js'
export {
  bennettCost,
  binomial,
  eta,
  revolveExtraSteps,
  revolveExtraStepsDP,
  revolveRepetitions,
  revolveSplit,
} from './closed-forms.js'
export { bennettGradientSchedule, bennettSchedule, type BennettOptions } from './bennett.js'
export { knillCost, knillGradientSchedule, knillSchedule, type KnillOptions } from './knill.js'
export { binomialSchedule, type BinomialOptions } from './binomial.js'
export { recomputeAllSchedule, storeAllSchedule, type ChainOptions } from './simple.js'
export { invertSchedule, reversibleGradientSchedule } from './invert.js'
export {
  checkpointedRun,
  reversibleGradient,
  runReversible,
  runSchedule,
  type Chain,
  type RunOptions,
  type RunResult,
} from './drivers.js'
export {
  checkpointedGradient,
  gradientSchedule,
  type ArrayStep,
  type CheckpointedGradientOptions,
  type CheckpointedGradientResult,
  type GradientCostLog,
  type GradientScheduleName,
  type StateMemory,
} from './gradient.js'
export { scheduleSvg, type SvgOptions } from './svg.js'
export { tenetStep, isTenetFunction } from './tenet-step.js'
