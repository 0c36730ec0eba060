/**
 * @tenet/bench — the benchmark suite's data readers and generators, plain-TS baselines, the
 * harness and its reports, and the Tenet-backed `gmmObjective` / `gmmGradient` / `baObjective` /
 * `baJacobian` (Tenet programs on the cpu backend; derivatives by their generated adjoints).
 */
export { findAdbenchData, repoRoot } from './data/adbench-path.js'
export {
  BA_CAMERA_PARAMS,
  formatBa,
  generateBa,
  parseBa,
  readBa,
  writeBa,
  type BaInstance,
} from './data/ba-data.js'
export {
  formatGmm,
  generateGmm,
  gmmIcfSize,
  gmmParameterCount,
  parseGmm,
  readGmm,
  writeGmm,
  type GmmInstance,
} from './data/gmm-data.js'
export {
  finiteDifferenceGradient,
  finiteDifferenceHessian,
  finiteDifferenceJacobian,
  maxScaledError,
} from './math/finite-difference.js'
export { createRng, type Rng } from './math/prng.js'
export {
  ADBENCH_PI,
  createGmmWorkspace,
  gmmGradientPlain,
  gmmObjectivePlain,
  gmmPackParameters,
  gmmWithParameters,
  logGammaDistribution,
  type GmmWorkspace,
} from './objectives/gmm.js'
export {
  BA_BLOCK_COLS,
  baJacobianPlain,
  baJacobianToDense,
  baObjectivePlain,
  baPackParameters,
  baWithParameters,
  createBaJacobian,
  createBaResiduals,
  type BaResiduals,
  type BaSparseJacobian,
} from './objectives/ba.js'
export { besselJDerivative, besselJPlain, besselJSecondDerivative } from './objectives/bessel.js'
export {
  cscToDense,
  randomCsc,
  sparseComplexMulBackwardPlain,
  sparseComplexMulPlain,
  sparseDotGradientPlain,
  sparseDotPlain,
  type ComplexCscMatrix,
  type ComplexVector,
  type CscMatrix,
} from './objectives/sparse.js'
export {
  createEmbeddingWorkspace,
  embeddingGradientPlain,
  embeddingLossPlain,
  PETERSEN_EDGES,
  PETERSEN_NON_EDGES,
} from './objectives/graph-embedding.js'
export {
  G_SOLAR,
  leapfrogDoubleDouble,
  leapfrogF32,
  leapfrogF64,
  leapfrogStartF64,
  leapfrogStepsF64,
  leapfrogStepsInverseF64,
  meanPlanetError,
  solarSystem,
  type LeapfrogState,
  type SolarSystem,
} from './objectives/leapfrog.js'
export {
  unitaryGradientPlain,
  unitaryLossPlain,
  unitaryStepInversePlain,
  unitaryStepPlain,
} from './objectives/unitary.js'
export { checkClose, lazy, TOLERANCE } from './harness/check.js'
export { assembleWorkloads, defineRowFamily, type RowFamily } from './harness/registry.js'
export {
  runSuite,
  type CaseResult,
  type Isolation,
  type RepeatResult,
  type RowResult,
  type RowStatus,
  type SuiteResult,
  type WorkloadResult,
} from './harness/runner.js'
export { mergeRepeats, parseRepeat, runRepeated, summariseRepeats, type RepeatRun } from './harness/repeat.js'
export { runIsolated, serveChild, type ChildCommand, type IsolatedRunOptions } from './harness/isolate.js'
export { DETACH_PROTECTOR, invalidatedProtectors, PROTECTOR_FLAG, protectorLog } from './harness/protectors.js'
export { measure, FULL_MEASURE, QUICK_MEASURE, type Measurement, type MeasureOptions } from './harness/measure.js'
export type {
  Baseline,
  CaseOptions,
  CaseSpec,
  CheckResult,
  NotApplicable,
  PreparedRow,
  Row,
  RowKind,
  StudyResult,
  Workload,
} from './harness/types.js'
export { writeReports } from './report/write.js'
export { formatTextTable } from './report/table.js'
export { ROW_FAMILIES } from './rows/index.js'
export { tenetRows, TENET_ROW } from './rows/tenet.js'
export {
  baJacobian,
  baObjective,
  gmmGradient,
  gmmObjective,
  baSource,
  besselSource,
  embeddingSource,
  gmmPointsSource,
  gmmQSource,
  gmmRestSource,
  leapfrogSource,
  sparseMulSource,
  unitaryLossSource,
  createGmmTenet,
  generatedSource,
  type GmmTenet,
} from './tenet/index.js'
export { QUICK_SET, WORKLOADS, type WorkloadCaseMap, type WorkloadId } from './workloads/index.js'
