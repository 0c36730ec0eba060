/**
 * @tenet/testing: a seeded generator of random reversible programs, the backend conformance
 * runner, and finite-difference checkers.
 */
export { mulberry32, Random } from './random.js'
export {
  randomProgram,
  randomArgs,
  type RandomProgram,
  type RandomProgramOptions,
  type GeneratorFeatures,
  type Signature,
  type ParamSpec,
  type ScalarParamSpec,
  type ArrayParamSpec,
} from './generate.js'
export {
  runConformance,
  conformanceProblems,
  programProblems,
  roundTripProblems,
  backendUnderTest,
  referenceBackend,
  sameBits,
  sameValues,
  cloneArgs,
  showArgs,
  type BackendUnderTest,
  type ConformanceResult,
} from './conformance.js'
export {
  finiteDifference,
  finiteDifferenceOfCall,
  checkGradient,
  relativeError,
  DEFAULT_STEP,
  type Differentiable,
  type GradientCheck,
} from './finite-difference.js'
export { collectionsDuring, optimized, optimizeNow } from './collections.js'
export {
  pairScratchProgram,
  pairScratchArgs,
  unitaryMultiplySource,
  raisedError,
  type PairScratchType,
} from './checked-programs.js'
export {
  optimiseSource,
  optimisedIr,
  type OptimiseSourceOptions,
  type OptimisedSource,
  type PrintedProgram,
} from './optimised-ir.js'
export { randomCsc, type CscMatrix } from './sparse.js'
export {
  randomRealProgram,
  randomRealArgs,
  randomRealExpressions,
  SMOOTH_FUNCTIONS,
  ARRAY_LENGTH,
  type RealExpressions,
  type RealProgram,
  type RealProgramOptions,
  type RealType,
} from './fuzz/typed-program.js'
export {
  fuzz,
  fuzzOne,
  formatReport,
  CAMPAIGNS,
  type Campaign,
  type FuzzBackend,
  type FuzzFailure,
  type FuzzOptions,
  type FuzzReport,
  type FuzzGradientCheck,
} from './fuzz/campaign.js'
export { minimizeSource } from './fuzz/minimize.js'
export { mutateSource, mutateArgs } from './fuzz/mutate.js'
export { bundlePrograms, type BundleMember, type ProgramBundle } from './bundle.js'
export {
  conformanceChecks,
  CONFORMANCE_SECTIONS,
  CONFORMANCE_SEED,
  type ConformanceCheck,
  type ConformanceOptions,
  type ConformanceSection,
} from './conformance/suite.js'
export {
  SUITE_CAPABILITIES,
  notApplicable,
  undeclaredCapabilities,
  type Capability,
} from './conformance/capabilities.js'
export { ERROR_CASES, type ErrorCase, type EngineSpecificCheck } from './conformance/error-cases.js'
export {
  primitiveRows,
  valueProblems,
  inverseProblems,
  gradientProblems,
  hessianProblems,
  tangentProblems,
  roundTo,
  type ConformanceAd,
  type PrimitiveRow,
  type PrimitiveColumn,
  type RowTolerances,
  type RowType,
} from './conformance/primitive-table.js'
export { columnProgram, columnArgs, columnProblems, type ColumnProgram } from './column-programs.js'
export {
  leafCallBatchProgram,
  swapLoopProgram,
  swapPostProgram,
  swapPostBatchProgram,
  type SwapLoopProgram,
} from './swap-loop-programs.js'
export {
  CARRIED_ARGS,
  CARRIED_OUT_OF_RANGE,
  CARRIED_SOURCES,
  CARRIED_STORE_SOURCES,
  carriedOutOfRange,
  carriedStoreArgs,
  exactText,
  hornerSource,
  SIGNED_ZERO_SOURCES,
  signedZeroArgs,
  doublesText,
} from './carried-programs.js'
// the shared program listings (also `@tenet/testing/programs`)
export * from './programs.js'
export { accelSource } from './leapfrog-programs.js'
